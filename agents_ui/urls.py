from django.urls import path

from agents_ui.views import (
    a2ui_actions,
    approvals,
    artifacts,
    catalogue,
    client_tools,
    composer,
    conversations,
    feedback,
    stop,
    stream,
    thread,
    workspace,
)

urlpatterns = [
    path("", catalogue.catalogue, name="catalogue"),
    path("conversations/", conversations.conversations, name="conversations"),
    path("conversations/<uuid:conversation_id>/rename/", conversations.rename, name="conversation-rename"),
    path("conversations/<uuid:conversation_id>/delete/", conversations.delete, name="conversation-delete"),
    path("agents/<slug:slug>/card/", catalogue.catalogue_card, name="catalogue-card"),
    path("agents/<slug:slug>/", workspace.workspace, name="workspace"),
    path("agents/<slug:slug>/send/", composer.send_message, name="send-message"),
    path("agents/<slug:slug>/conversations/", conversations.conversation_list, name="conversation-list"),
    path("agents/<slug:slug>/c/<uuid:conversation_id>/", workspace.conversation, name="conversation"),
    path("agents/<slug:slug>/stop/", stop.stop_conversation, name="stop-conversation"),
    path("runs/<uuid:run_id>/events/", stream.run_events, name="run-events"),
    path("runs/<uuid:run_id>/stop/", stop.stop, name="run-stop"),
    path("runs/<uuid:run_id>/decide/", approvals.decide, name="run-decide"),
    path("runs/<uuid:run_id>/answer/", client_tools.answer, name="run-answer"),
    path("runs/<uuid:run_id>/a2ui/", a2ui_actions.act, name="run-a2ui"),
    path("runs/<uuid:run_id>/feedback/", feedback.feedback, name="run-feedback"),
    path("runs/<uuid:run_id>/regenerate/", thread.regenerate, name="run-regenerate"),
    path("runs/<uuid:run_id>/edit/", thread.edit, name="run-edit"),
    path("runs/<uuid:run_id>/artifacts/<path:artifact_id>/", artifacts.download, name="run-artifact"),
]

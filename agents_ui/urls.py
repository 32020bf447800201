from django.urls import path

from agents_ui import run_views, views

urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("conversations/", views.conversations, name="conversations"),
    path("agents/<slug:slug>/card/", views.catalogue_card, name="catalogue-card"),
    path("agents/<slug:slug>/", views.workspace, name="workspace"),
    path("agents/<slug:slug>/send/", run_views.send_message, name="send-message"),
    path("agents/<slug:slug>/c/<uuid:conversation_id>/", views.conversation, name="conversation"),
    path("agents/<slug:slug>/stop/", run_views.stop_conversation, name="stop-conversation"),
    path("runs/<uuid:run_id>/events/", run_views.run_events, name="run-events"),
    path("runs/<uuid:run_id>/stop/", run_views.stop, name="run-stop"),
    path("runs/<uuid:run_id>/decide/", run_views.decide, name="run-decide"),
    path("runs/<uuid:run_id>/feedback/", run_views.feedback, name="run-feedback"),
]

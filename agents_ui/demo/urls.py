"""Routes of the embedded demo agents, mounted at /demo-agents/ (project/urls.py).

AG-UI agents: POST /demo-agents/<slug>/ runs, GET /demo-agents/<slug>/capabilities discovers.
External agents: base /demo-agents/<slug>, with the sub-routes of docs/PROTOCOLS.md 2.x.
"""

from django.urls import path, re_path

from agents_ui.demo import views

urlpatterns = [
    # AG-UI. A client that joins "{url}/capabilities" onto a URL ending in "/" sends "//": accept it.
    path("<slug:slug>/", views.agui_run, name="demo-agui-run"),
    path("<slug:slug>", views.agui_run),
    re_path(r"^(?P<slug>[-\w]+)/+capabilities$", views.agui_capabilities, name="demo-agui-capabilities"),
    path("<slug:slug>/docs", views.agent_docs, name="demo-agent-docs"),
    # External agents.
    path("<slug:slug>/policy", views.policy, name="demo-external-policy"),
    path("<slug:slug>/prepare", views.prepare),
    path("<slug:slug>/conversations", views.conversations),
    path("<slug:slug>/conversations/<str:conversation_id>/messages", views.messages),
    path("<slug:slug>/conversations/<str:conversation_id>/artifacts", views.conversation_artifacts),
    path("<slug:slug>/approvals/<str:approval_id>", views.approval),
    path("<slug:slug>/files", views.files),
    path("<slug:slug>/files/<str:file_id>", views.file_detail),
    path("<slug:slug>/artifacts/<str:artifact_id>", views.artifact_detail),
    path("<slug:slug>/interactions", views.interactions),
]

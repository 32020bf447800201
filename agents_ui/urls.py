from django.urls import path

from agents_ui import views

urlpatterns = [
    path("", views.catalogue, name="catalogue"),
    path("agents/<slug:slug>/card/", views.catalogue_card, name="catalogue-card"),
    path("agents/<slug:slug>/", views.workspace, name="workspace"),
]

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("django.contrib.auth.urls")),
    path("demo-agents/", include("agents_ui.demo.urls")),
    path("", include("agents_ui.urls")),
]

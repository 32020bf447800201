from django.contrib import admin
from django.contrib.auth.views import LoginView
from django.urls import include, path

from agents_ui.sign_in import SignInForm

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", LoginView.as_view(authentication_form=SignInForm), name="login"),
    path("accounts/", include("django.contrib.auth.urls")),
    path("demo-agents/", include("agents_ui.demo.urls")),
    path("", include("agents_ui.urls")),
]

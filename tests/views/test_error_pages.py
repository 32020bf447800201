"""404, 403 and 500 pages in the product's style, with DEBUG off (as deployed)."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied
from django.test import Client, override_settings
from django.urls import include, path

from tests.factories import make_user

pytestmark = pytest.mark.django_db


def broken(request):
    raise RuntimeError("a bug")


def forbidden(request):
    raise PermissionDenied


urlpatterns = [
    path("broken/", broken),
    path("forbidden/", forbidden),
    path("", include("project.urls")),
]


@pytest.fixture
def client():
    client = Client(raise_request_exception=False)
    client.force_login(make_user())
    return client


@override_settings(DEBUG=False)
def test_a_missing_page_says_so_in_words_with_a_way_on(client):
    response = client.get("/agents/no-such-agent/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'data-error-page="404"' in page and "This page is not here" in page
    assert 'href="/conversations/"' in page and "Traceback" not in page


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_refusal_says_who_can_give_access(client):
    response = client.get("/forbidden/")
    assert response.status_code == 403
    assert "An admin can give you access." in response.content.decode()


@override_settings(DEBUG=False, ROOT_URLCONF=__name__)
def test_a_server_error_page_keeps_the_product_style_and_tells_nothing_technical(client):
    response = client.get("/broken/")
    assert response.status_code == 500
    page = response.content.decode()
    assert 'data-error-page="500"' in page and "app.css" in page
    assert "a bug" not in page and "RuntimeError" not in page


def test_an_unreachable_agent_is_said_in_words_and_only_admins_see_the_socket_error(transactional_db):
    from django.core.cache import cache

    from tests.factories import make_endpoint

    make_endpoint(slug="down", base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    cache.clear()
    person, admin = Client(), Client()
    person.force_login(make_user())
    admin.force_login(make_user(staff=True))
    html = person.get("/agents/down/").content.decode()
    assert "This agent cannot be reached." in html and "Nothing answered at its address" in html
    assert "Errno" not in html and "onnect" not in html.split('data-banner="unreachable"')[1][:400]
    assert "data-technical" in admin.get("/agents/down/").content.decode()
    assert "Errno" not in person.get("/").content.decode()

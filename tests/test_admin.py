import pytest

from agents_ui.models import AgentEndpoint
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

SECRET = "s3cr3t-token-value-never-shown"


@pytest.fixture
def admin_client(client):
    client.force_login(make_user(superuser=True))
    return client


def add_form(**overrides):
    data = {
        "name": "Weather",
        "slug": "weather",
        "description": "",
        "protocol": "agui",
        "enabled": "on",
        "base_url": "https://weather.example.test/agent",
        "discovery_url": "",
        "connect_timeout": "5",
        "read_timeout": "60",
        "auth_kind": "bearer",
        "auth_header_name": "",
        "credential": SECRET,
        "overrides": "{}",
    }
    data.update(overrides)
    return data


def test_admin_registers_an_endpoint_which_then_shows_on_the_catalogue(admin_client):
    response = admin_client.post("/admin/agents_ui/agentendpoint/add/", add_form())
    assert response.status_code == 302, response.content.decode()[:2000]
    endpoint = AgentEndpoint.objects.get(slug="weather")
    assert endpoint.credential == SECRET
    catalogue = admin_client.get("/")
    assert b"Weather" in catalogue.content
    assert b"weather.example.test" in catalogue.content


def test_credential_is_write_only(admin_client):
    endpoint = make_endpoint(auth_kind="bearer", credential=SECRET)
    page = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    assert page.status_code == 200
    assert SECRET.encode() not in page.content
    assert b"set" in page.content

    # Saving with the field left empty keeps the stored credential.
    form = add_form(name=endpoint.name, slug=endpoint.slug, credential="")
    response = admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/", form)
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.credential == SECRET

    # And it can be cleared.
    form = add_form(
        name=endpoint.name, slug=endpoint.slug, credential="", auth_kind="none", clear_credential="on"
    )
    admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/", form)
    endpoint.refresh_from_db()
    assert endpoint.credential == ""


def test_url_with_credentials_is_refused_with_a_clear_message(admin_client):
    response = admin_client.post(
        "/admin/agents_ui/agentendpoint/add/", add_form(base_url="https://me:pw@weather.example.test/")
    )
    assert response.status_code == 200
    assert b"Do not put credentials in the URL" in response.content
    assert not AgentEndpoint.objects.exists()


def test_enable_and_disable_actions(admin_client):
    endpoint = make_endpoint()
    response = admin_client.post(
        "/admin/agents_ui/agentendpoint/",
        {"action": "disable_endpoints", "_selected_action": [endpoint.pk]},
        follow=True,
    )
    assert b"Disabled 1 agent." in response.content
    endpoint.refresh_from_db()
    assert endpoint.enabled is False

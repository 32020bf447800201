"""The admin refuses an agent address the guard would refuse, in any spelling, when it is typed."""

import pytest

from agents_ui.models import AgentEndpoint
from tests.factories import make_user
from tests.test_admin import add_form

pytestmark = pytest.mark.django_db

ADD = "/admin/agents_ui/agentendpoint/add/"

# (URL, the start of the sentence the field gets)
REFUSED = [
    ("http://127.0.0.1:8000/agent", "127.0.0.1 is a loopback address"),
    ("http://[::ffff:127.0.0.1]/agent", "::ffff:127.0.0.1 is a loopback address"),
    ("http://[::ffff:7f00:1]/agent", "::ffff:7f00:1 names ::ffff:127.0.0.1, a loopback address"),
    ("http://[64:ff9b::a9fe:a9fe]/", "64:ff9b::a9fe:a9fe is a cloud metadata address"),
    ("http://[2002:a00:5::1]/agent", "2002:a00:5::1 is a private address"),
    ("http://2130706433/agent", "2130706433 names 127.0.0.1, a loopback address"),
    ("http://0177.0.0.1/agent", "0177.0.0.1 names 127.0.0.1, a loopback address"),
    ("http://0x7f.1/agent", "0x7f.1 names 127.0.0.1, a loopback address"),
    ("http://127.1/agent", "127.1 names 127.0.0.1, a loopback address"),
    ("http://0.0.0.0/agent", "0.0.0.0 is an unspecified address"),
    ("http://[::]/agent", ":: is an unspecified address"),
    ("http://good.example@127.0.0.1/agent", "127.0.0.1 is a loopback address"),
    ("http://127.0.0.1#@good.example/agent", "127.0.0.1 is a loopback address"),
    ("http://localhost./agent", "localhost. is a loopback address"),
    ("http://LOCALHOST:8080/agent", "localhost is a loopback address"),
    ("http://10.0.0.5/agent", "10.0.0.5 is a private address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
    ("http://metadata.google.internal./", "metadata.google.internal. is a cloud metadata address"),
]


@pytest.fixture
def admin_client(client, settings):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
    client.force_login(make_user(superuser=True))
    return client


def field_errors(response, field: str) -> list[str]:
    return list(response.context["adminform"].form.errors.get(field, []))


@pytest.mark.parametrize("field", ["base_url", "discovery_url", "signing_keys_url"])
@pytest.mark.parametrize(("url", "sentence"), REFUSED)
def test_an_inside_address_is_refused_with_the_reason(admin_client, field, url, sentence):
    form = add_form(protocol="a2a", **{field: url})
    if field != "base_url":
        form["base_url"] = "https://weather.example.test/agent"
    response = admin_client.post(ADD, form)
    assert response.status_code == 200
    [error] = field_errors(response, field)
    assert error.startswith(f"{sentence}: this server never sends requests there. Use the agent's public")
    assert not AgentEndpoint.objects.exists()


def test_development_allows_loopback_but_never_the_metadata_service(admin_client, settings):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = True
    response = admin_client.post(ADD, add_form(base_url="http://127.0.0.1:8000/agent"))
    assert response.status_code == 302
    response = admin_client.post(
        ADD, add_form(slug="meta", name="Meta", base_url="http://[::ffff:169.254.169.254]/")
    )
    [error] = field_errors(response, "base_url")
    assert error == (
        "::ffff:169.254.169.254 is a cloud metadata address: this server never sends requests there. "
        "Use the agent's public address."
    )


def test_the_refusal_names_the_setting_that_allows_private_networks(admin_client):
    response = admin_client.post(ADD, add_form(base_url="http://192.168.1.20/agent"))
    [error] = field_errors(response, "base_url")
    assert "allowed only with AGENTS_UI_ALLOW_PRIVATE_ADDRESSES on" in error
    assert "192.168.1.20 is a private address" in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "https://agent.example.com/a2a",
        "https://agent.example.com:8443/a2a",
        "https://10.example.com/agent",  # a name that starts with digits is a name
        "https://0x7f.example.com/agent",
    ],
)
def test_a_public_address_or_a_name_is_accepted(admin_client, url):
    response = admin_client.post(ADD, add_form(base_url=url))
    assert response.status_code == 302, field_errors(response, "base_url")

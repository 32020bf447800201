import pytest

from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db


def test_pages_need_a_signed_in_user(client):
    assert client.get("/").status_code == 302
    assert client.get("/admin/").status_code == 302
    assert client.get("/accounts/login/").status_code == 200


def test_catalogue_lists_enabled_endpoints_only(client):
    make_endpoint(name="Visible agent", base_url="https://visible.example.test/")
    make_endpoint(name="Switched off", enabled=False)
    client.force_login(make_user())
    page = client.get("/")
    assert b"Visible agent" in page.content
    assert b"visible.example.test" in page.content
    assert b"Switched off" not in page.content


def test_catalogue_card_is_an_htmx_partial(client):
    endpoint = make_endpoint(name="Card agent")
    client.force_login(make_user())
    response = client.get(f"/agents/{endpoint.slug}/card/", headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith("<article")
    assert "Card agent" in body
    assert "<html" not in body


def test_pages_carry_a_nonce_csp_without_unsafe_inline(client):
    client.force_login(make_user())
    response = client.get("/")
    csp = response.headers["Content-Security-Policy"]
    assert "'nonce-" in csp
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp
    nonce = csp.split("'nonce-")[1].split("'")[0]
    assert f'nonce="{nonce}"' in response.content.decode()
    assert "frame-ancestors 'none'" in csp


def test_disabled_agent_workspace_is_not_found(client):
    endpoint = make_endpoint(enabled=False)
    client.force_login(make_user())
    assert client.get(f"/agents/{endpoint.slug}/").status_code == 404

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


def test_a_cards_refresh_link_works_with_and_without_htmx(client):
    endpoint = make_endpoint(name="Card agent", slug="card-agent")
    client.force_login(make_user())
    card = client.get("/").content.decode().split('data-agent="card-agent"')[1].split("</article>")[0]
    assert 'href="/agents/card-agent/card/"' in card and 'hx-get="/agents/card-agent/card/"' in card
    page = client.get(f"/agents/{endpoint.slug}/card/")  # without htmx: the whole catalogue, refreshed
    assert page.status_code == 200 and "<html" in page.content.decode()
    assert 'data-agent="card-agent"' in page.content.decode()


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


# --- The workspace renders the plan, and nothing else -------------------------------------------

import re  # noqa: E402

import httpx  # noqa: E402
from asgiref.sync import async_to_sync  # noqa: E402
from django.core.cache import cache  # noqa: E402

from agents_ui.decisions import CONTROL_NAMES  # noqa: E402
from agents_ui.endpoints.discovery import discover_one  # noqa: E402

RESEARCHER = {
    "identity": {
        "name": "Researcher",
        "description": "Finds things out.",
        "version": "2.1.0",
        "provider": "Acme",
    },
    "transport": {"streaming": True},
    "reasoning": {"supported": True, "streaming": True},
    "tools": {
        "supported": True,
        "parallelCalls": True,
        "items": [{"name": "search", "description": "Search the web", "parameters": {"type": "object"}}],
    },
    "multimodal": {"input": {"pdf": True, "image": False}},
}


def discovered(endpoint, declaration):
    """Put a declaration in the discovery cache, as if the agent had just answered it."""
    cache.clear()

    def answer(request):
        return httpx.Response(200, json=declaration)

    async def run():
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            return await discover_one(endpoint, client=client, refresh=True)

    return async_to_sync(run)()


def controls_on(html: str) -> dict[str, str]:
    workspace = html.split('id="explain"')[0]
    return dict(re.findall(r'data-control="([a-z-]+)" data-decision="([a-z]+)"', workspace))


def explained(html: str) -> dict[str, str]:
    return dict(re.findall(r'data-explain="([a-z-]+)" data-decision="([a-z]+)"', html))


@pytest.fixture
def researcher(transactional_db):
    endpoint = make_endpoint(name="Researcher", slug="researcher")
    discovered(endpoint, RESEARCHER)
    return endpoint


def test_workspace_shows_exactly_the_declared_controls(client, researcher):
    client.force_login(make_user(perms=["upload_files", "approve_actions", "view_reasoning"]))
    html = client.get("/agents/researcher/").content.decode()
    assert controls_on(html) == {
        "identity": "shown",
        "reasoning": "shown",
        "tools": "shown",
        "upload": "shown",
        "stop": "shown",
    }
    assert 'accept="application/pdf"' in html
    assert "search" in html and "parallel calls" in html
    explain = explained(html)
    assert list(explain) == list(CONTROL_NAMES)
    assert explain["subagents"] == "hidden" and explain["approvals"] == "hidden"
    assert "not declared" in html


def test_an_admin_override_hides_a_control_and_the_explain_view_says_why(client, researcher):
    researcher.overrides = {"reasoning": "hide"}
    researcher.save()
    discovered(researcher, RESEARCHER)
    client.force_login(make_user(perms=["upload_files", "approve_actions", "view_reasoning"]))
    html = client.get("/agents/researcher/").content.decode()
    assert "reasoning" not in controls_on(html)
    assert explained(html)["reasoning"] == "hidden"
    explain_item = html.split('data-explain="reasoning"')[1].split("</details>")[0]
    assert "override" in explain_item


def test_a_missing_permission_disables_a_control(client, researcher):
    client.force_login(make_user(perms=["approve_actions"]))
    html = client.get("/agents/researcher/").content.decode()
    controls = controls_on(html)
    assert controls["reasoning"] == "disabled"
    assert controls["upload"] == "disabled"
    assert "You may not upload files." in html


def test_an_unreachable_agent_still_gets_a_usable_page(client, transactional_db):
    endpoint = make_endpoint(slug="down", base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    cache.clear()
    client.force_login(make_user())
    response = client.get("/agents/down/")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'data-banner="unreachable"' in html
    assert controls_on(html) == {"identity": "shown"}
    assert endpoint.name in html


def test_invalid_declaration_gets_a_banner(client, transactional_db):
    endpoint = make_endpoint(slug="odd")
    discovered(endpoint, {"reasoning": {"supported": "yes please"}})
    client.force_login(make_user())
    html = client.get("/agents/odd/").content.decode()
    assert 'data-banner="invalid"' in html

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
    form = add_form(name=endpoint.name, slug=endpoint.slug, base_url=endpoint.base_url, credential="")
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


@pytest.mark.parametrize(
    "field, address",
    [
        ("base_url", "https://collector.example.test/agent"),  # another host
        ("base_url", "http://agent.example.test/agent"),  # another scheme
        ("base_url", "https://agent.example.test:8443/agent"),  # another port
        ("discovery_url", "https://collector.example.test/.well-known/agent-card.json"),
    ],
)
def test_the_stored_credential_never_follows_the_address_to_a_new_origin(admin_client, field, address):
    endpoint = make_endpoint(
        base_url="https://agent.example.test/agent", auth_kind="bearer", credential=SECRET
    )
    change = f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/"
    form = add_form(name=endpoint.name, slug=endpoint.slug, base_url=endpoint.base_url, credential="")
    form[field] = address
    response = admin_client.post(change, form)
    assert response.status_code == 200
    assert "the stored credential is never sent to a new address" in response.content.decode()
    endpoint.refresh_from_db()
    assert endpoint.credential == SECRET and getattr(endpoint, field) != address

    # Typed again, the credential goes with the move; or the move drops it.
    admin_client.post(change, {**form, "credential": "a-new-secret"})
    endpoint.refresh_from_db()
    assert getattr(endpoint, field) == address and endpoint.credential == "a-new-secret"


def test_a_move_within_the_same_origin_keeps_the_stored_credential(admin_client):
    endpoint = make_endpoint(
        base_url="https://agent.example.test/agent", auth_kind="bearer", credential=SECRET
    )
    form = add_form(
        name=endpoint.name,
        slug=endpoint.slug,
        base_url="https://agent.example.test:443/v2/agent",
        credential="",
    )
    response = admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/", form)
    assert response.status_code == 302
    endpoint.refresh_from_db()
    assert endpoint.base_url.endswith("/v2/agent") and endpoint.credential == SECRET


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


# --- A fake agent network behind the real guarded client ------------------------------------------

import json  # noqa: E402
import logging  # noqa: E402
import re  # noqa: E402

import httpx  # noqa: E402
from django.contrib.auth.models import Group  # noqa: E402
from django.core.cache import cache  # noqa: E402

from agents_ui.admin import checks  # noqa: E402
from agents_ui.endpoints import discovery  # noqa: E402
from agents_ui.endpoints.clients import agent_client  # noqa: E402
from agents_ui.models import CapabilitySnapshot  # noqa: E402

AGENT_URL = "http://93.184.216.34/agent"  # a public address literal: the guard passes it, no DNS
DECLARATION = {
    "identity": {"name": "Weather"},
    "tools": {
        "supported": True,
        "items": [{"name": "forecast", "description": "Forecast", "parameters": {}}],
    },
    "reasoning": {"supported": True, "streaming": True},
}


class FakeAgents:
    """What each discovery URL answers; every request still passes the real address guard."""

    def __init__(self) -> None:
        self.answers: dict[str, httpx.Response | dict] = {}
        self.seen: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.seen.append(request)
        answer = self.answers.get(str(request.url), httpx.Response(404))
        return httpx.Response(200, json=answer) if isinstance(answer, dict) else answer

    def client(self, **kwargs) -> httpx.AsyncClient:
        return agent_client(inner=httpx.MockTransport(self), **kwargs)


@pytest.fixture
def agents(monkeypatch):
    cache.clear()
    fake = FakeAgents()
    fake.answers[f"{AGENT_URL}/capabilities"] = DECLARATION
    monkeypatch.setattr(discovery, "streaming_agent_client", fake.client)
    monkeypatch.setattr(checks, "agent_client", fake.client)
    return fake


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def act(client, action: str, *endpoints):
    return client.post(
        "/admin/agents_ui/agentendpoint/",
        {"action": action, "_selected_action": [e.pk for e in endpoints]},
        follow=True,
    )


# --- The list -------------------------------------------------------------------------------------


def test_list_shows_discovery_status_with_age_and_who_may_use_it(admin_client, agents):
    weather = make_endpoint(name="Weather", base_url=AGENT_URL)
    make_endpoint(name="Never asked")
    act(admin_client, "rediscover_now", weather)
    staff = Group.objects.create(name="Staff")
    restricted = make_endpoint(name="Restricted")
    restricted.allowed_groups.add(staff)
    member = make_user()
    member.groups.add(staff)
    make_user(superuser=True)  # superusers may use every agent
    inactive = make_user()
    inactive.is_active = False
    inactive.save()

    page = admin_client.get("/admin/agents_ui/agentendpoint/").content.decode()
    row = re.search(r"<tr>.*?Weather.*?</tr>", page, re.S).group(0)
    assert "discovery-declared" in row and "just now" in row
    assert "Never checked" in page
    active_users = 3  # the admin, the member, the other superuser
    assert f"everyone ({active_users} users)" in row
    restricted_row = re.search(r"<tr>.*?Restricted.*?</tr>", page, re.S).group(0)
    assert ">3 users<" in restricted_row  # the member and both superusers, not the inactive user


def test_list_filters_by_discovery_status_and_access_and_searches(admin_client, agents):
    weather = make_endpoint(name="Weather", base_url=AGENT_URL)
    never = make_endpoint(name="Never asked")
    act(admin_client, "rediscover_now", weather)
    restricted = make_endpoint(name="Restricted")
    restricted.allowed_groups.add(Group.objects.create(name="Ops"))

    def names(query: str) -> set[str]:
        response = admin_client.get(f"/admin/agents_ui/agentendpoint/?{query}")
        return {e.name for e in response.context["cl"].result_list}

    assert names("discovery=declared") == {"Weather"}
    assert names("discovery=never") == {never.name, "Restricted"}
    assert names("access=groups") == {"Restricted"}
    assert names("access=everyone") == {"Weather", "Never asked"}
    assert names("q=weather") == {"Weather"}


# --- Test connection and re-discover ----------------------------------------------------------------


def test_test_connection_reports_latency_and_what_discovery_answered(admin_client, agents):
    endpoint = make_endpoint(name="Weather", base_url=AGENT_URL)
    [text] = messages_of(act(admin_client, "test_connection", endpoint))
    expected_hash = discovery.content_hash(
        discovery.Discovery(endpoint.pk, "agui", "declared", "", None, raw=DECLARATION)
    )[:8]
    assert re.fullmatch(
        rf"Weather: reachable in \d+ ms; declared capabilities \(hash {expected_hash}\)", text
    )
    # A check records nothing.
    assert not CapabilitySnapshot.objects.exists()


def test_test_connection_says_what_is_wrong(admin_client, agents, settings):
    none = make_endpoint(name="Silent", base_url="http://93.184.216.35/agent")
    agents.answers["http://93.184.216.35/agent/capabilities"] = httpx.Response(404)
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
    private = make_endpoint(name="Internal", base_url="http://10.0.0.5/agent")
    texts = messages_of(act(admin_client, "test_connection", none, private))
    assert any(t.startswith("Silent: reachable in") and "no discovery" in t for t in texts)
    assert any(
        t.startswith("Internal: unreachable after") and "refused: 10.0.0.5 is a private address" in t
        for t in texts
    )


def test_an_action_on_many_agents_sums_up_and_lists_only_those_needing_a_look(admin_client, agents):
    fine = [make_endpoint(base_url=AGENT_URL) for _ in range(3)]
    silent = make_endpoint(name="Silent", base_url="http://93.184.216.35/agent")
    texts = messages_of(act(admin_client, "rediscover_now", *fine, silent))
    assert texts == [
        "Re-discovered 4 agents: 3 declared what they can do, 1 need a look (below).",
        "Silent: no discovery (capabilities unknown); a new snapshot was recorded.",
    ]
    texts = messages_of(act(admin_client, "test_connection", *fine))
    assert len(texts) == 3 and all("reachable in" in t for t in texts)  # a few: one line each


def test_change_page_buttons_test_and_rediscover(admin_client, agents):
    endpoint = make_endpoint(name="Weather", base_url=AGENT_URL)
    change = f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/"
    page = admin_client.get(change).content.decode()
    for tool in ("test-connection", "rediscover", "declarations", "preview"):
        assert f'data-tool="{tool}"' in page
    assert admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/rediscover/").status_code == 405

    response = admin_client.post(
        f"/admin/agents_ui/agentendpoint/{endpoint.pk}/test-connection/", follow=True
    )
    assert response.redirect_chain[-1][0] == change
    assert "reachable in" in messages_of(response)[0]

    response = admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/rediscover/", follow=True)
    snapshot = CapabilitySnapshot.objects.get(endpoint=endpoint)
    assert messages_of(response) == [
        f"Weather: declared capabilities (hash {snapshot.content_hash[:8]}); a new snapshot was recorded."
    ]
    response = admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/rediscover/", follow=True)
    assert "unchanged since just now" in messages_of(response)[0]
    # The change page says what it declares now.
    assert snapshot.content_hash[:8] in response.content.decode()


def test_rediscover_needs_the_change_permission(client, agents):
    from django.contrib.auth.models import Permission

    viewer = make_user(staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_agentendpoint"))
    client.force_login(viewer)
    endpoint = make_endpoint(base_url=AGENT_URL)
    assert client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/rediscover/").status_code == 403
    assert client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/test-connection/").status_code == 302
    assert not CapabilitySnapshot.objects.exists()


# --- History and diff -------------------------------------------------------------------------------


def test_history_lists_each_distinct_declaration_and_the_diff_marks_breaking_changes(admin_client, agents):
    endpoint = make_endpoint(name="Weather", base_url=AGENT_URL)
    act(admin_client, "rediscover_now", endpoint)
    second = json.loads(json.dumps(DECLARATION))
    second["tools"]["items"] = [{"name": "radar", "description": "Radar", "parameters": {}}]
    second["reasoning"]["supported"] = False
    agents.answers[f"{AGENT_URL}/capabilities"] = second
    act(admin_client, "rediscover_now", endpoint)
    old, new = CapabilitySnapshot.objects.filter(endpoint=endpoint).order_by("first_seen_at")

    history = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/")
    html = history.content.decode()
    assert old.content_hash[:8] in html and new.content_hash[:8] in html
    assert f'name="a" value="{old.pk}"' in html and f'name="b" value="{new.pk}"' in html

    diff = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/diff/?a={new.pk}&b={old.pk}")
    html = diff.content.decode()
    assert diff.status_code == 200
    assert 'data-item="radar" data-change="added"' in html
    assert 'data-item="forecast" data-change="removed"' in html
    assert 'data-path="reasoning.supported" data-change="changed"' in html
    assert 'data-diff="breaking"' in html and "Reasoning panel" in html


def test_diff_needs_two_snapshots_of_this_endpoint(admin_client, agents):
    endpoint = make_endpoint(base_url=AGENT_URL)
    act(admin_client, "rediscover_now", endpoint)
    snapshot = CapabilitySnapshot.objects.get()
    other = make_endpoint()
    response = admin_client.get(
        f"/admin/agents_ui/agentendpoint/{other.pk}/diff/?a={snapshot.pk}&b=x", follow=True
    )
    assert "Pick two snapshots" in messages_of(response)[0]
    response = admin_client.get(
        f"/admin/agents_ui/agentendpoint/{endpoint.pk}/diff/?a={snapshot.pk}&b={snapshot.pk}", follow=True
    )
    assert "two different" in messages_of(response)[0]


# --- Overrides --------------------------------------------------------------------------------------


def test_overrides_are_one_select_per_control_and_the_workspace_follows(admin_client, agents):
    endpoint = make_endpoint(name="Weather", slug="weather", base_url=AGENT_URL, auth_kind="none")
    page = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/").content.decode()
    assert 'name="override_tools"' in page and 'name="override_structured_output"' in page
    assert 'name="override_identity"' not in page  # always shown: nothing to override
    assert "Force hidden" in page and "Allow where not declared" in page
    assert 'name="overrides"' not in page  # no raw JSON

    form = add_form(
        auth_kind="none", credential="", base_url=AGENT_URL, override_tools="hide", override_state="allow"
    )
    response = admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    endpoint.refresh_from_db()
    assert endpoint.overrides == {"tools": "hide", "state": "allow"}
    page = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/").content.decode()
    assert re.search(r'<option value="hide" selected>Force hidden</option>', page)

    workspace = admin_client.get("/agents/weather/").content.decode()
    assert 'data-control="tools"' not in workspace.split('id="explain"')[0]
    assert 'data-control="state"' in workspace.split('id="explain"')[0]
    assert "The admin forced this control off" in workspace

    # Back to following the agent.
    form.update(override_tools="", override_state="")
    admin_client.post(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/", form)
    endpoint.refresh_from_db()
    assert endpoint.overrides == {}


# --- Credentials never leave the server -------------------------------------------------------------


def every_page(client, endpoint) -> list:
    """Every page that shows something about this endpoint, to an admin and to a user."""
    pk = endpoint.pk
    responses = [
        client.get("/admin/agents_ui/agentendpoint/"),
        client.get(f"/admin/agents_ui/agentendpoint/{pk}/change/"),
        act(client, "test_connection", endpoint),
        act(client, "rediscover_now", endpoint),
        client.post(f"/admin/agents_ui/agentendpoint/{pk}/test-connection/", follow=True),
        client.post(f"/admin/agents_ui/agentendpoint/{pk}/rediscover/", follow=True),
        client.get(f"/admin/agents_ui/agentendpoint/{pk}/history-of-declarations/"),
        client.get(f"/admin/agents_ui/agentendpoint/{pk}/history/"),
        client.get("/admin/agents_ui/capabilitysnapshot/"),
    ]
    responses += [
        client.get(f"/admin/agents_ui/capabilitysnapshot/{s.pk}/change/") for s in endpoint.snapshots.all()
    ]
    snapshots = list(endpoint.snapshots.order_by("first_seen_at"))
    if len(snapshots) > 1:
        a, b = snapshots[0], snapshots[-1]
        responses.append(client.get(f"/admin/agents_ui/agentendpoint/{pk}/diff/?a={a.pk}&b={b.pk}"))
    return responses


def user_pages(client, endpoint) -> list:
    return [
        client.get("/"),
        client.get(f"/agents/{endpoint.slug}/"),
        client.get(f"/agents/{endpoint.slug}/?preview=1"),
    ]


def assert_secret_kept(responses) -> None:
    for response in responses:
        where = response.request["PATH_INFO"]
        assert response.status_code == 200, where
        assert SECRET not in response.content.decode(), where


@pytest.fixture
def keyed_endpoint():
    return make_endpoint(
        name="Weather",
        slug="weather",
        base_url=AGENT_URL,
        auth_kind="header",
        auth_header_name="X-Api-Key",
        credential=SECRET,
    )


def test_the_credential_is_in_no_response_body_and_no_log_line(admin_client, agents, keyed_endpoint, caplog):
    caplog.set_level(logging.DEBUG)
    capabilities = f"{AGENT_URL}/capabilities"
    responses = []
    # Declared, then failing, then declared again: every state of every page.
    for answer in (DECLARATION, httpx.Response(500, json={"error": {"code": "internal", "message": "down"}})):
        agents.answers[capabilities] = answer
        responses += every_page(admin_client, keyed_endpoint) + user_pages(admin_client, keyed_endpoint)
    agents.answers[capabilities] = {**DECLARATION, "state": {"snapshots": True}}
    responses += every_page(admin_client, keyed_endpoint)
    assert keyed_endpoint.snapshots.count() == 3
    assert_secret_kept(responses)
    assert SECRET not in caplog.text
    # It was sent to the agent, where it belongs.
    assert {r.headers["x-api-key"] for r in agents.seen} == {SECRET}


def staff_with(*codenames: str):
    from django.contrib.auth.models import Permission

    user = make_user(staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=codenames))
    return user


@pytest.mark.parametrize(
    ("who", "may_change"),
    [
        (lambda: staff_with("view_agentendpoint"), False),
        (lambda: staff_with("view_agentendpoint", "change_agentendpoint"), True),
        (lambda: make_user(superuser=True), True),
    ],
    ids=["view-only staff", "staff who may change", "superuser"],
)
def test_the_change_page_says_whether_a_credential_is_set_and_never_shows_it(
    client, agents, keyed_endpoint, who, may_change
):
    client.force_login(who())
    change = f"/admin/agents_ui/agentendpoint/{keyed_endpoint.pk}/change/"
    page = client.get(change)
    html = page.content.decode()
    assert page.status_code == 200
    assert SECRET not in html
    stored = re.search(r'class="form-row[^"]*field-credential_status.*?</div>\s*</div>', html, re.S)
    assert stored and ">set<" in stored.group(0)
    preview = client.get(f"/agents/{keyed_endpoint.slug}/?preview=1")
    assert preview.status_code == 200 and SECRET not in preview.content.decode()
    # Those who may change it can replace it (an empty box) or clear it; nobody else sees either.
    assert ('name="credential"' in html) is may_change
    assert ('name="clear_credential"' in html) is may_change
    if may_change:
        assert re.search(r'<input type="password" name="credential"[^>]*>', html)
        assert "value=" not in re.search(r'<input type="password" name="credential"[^>]*>', html).group(0)
    if may_change:  # replaced: the new one is no more visible than the old, nor in the change history
        rotated = "rotated-token-never-shown"
        form = add_form(
            name=keyed_endpoint.name, slug=keyed_endpoint.slug, base_url=AGENT_URL, auth_kind="header",
            auth_header_name="X-Api-Key", credential=rotated,
        )  # fmt: skip
        assert client.post(change, form).status_code == 302
        keyed_endpoint.refresh_from_db()
        assert keyed_endpoint.credential == rotated
        for url in (change, f"/admin/agents_ui/agentendpoint/{keyed_endpoint.pk}/history/"):
            html = client.get(url).content.decode()
            assert rotated not in html and SECRET not in html, url


def test_admin_pages_hide_a_credential_the_agent_echoes_back(admin_client, agents, keyed_endpoint):
    capabilities = f"{AGENT_URL}/capabilities"
    agents.answers[capabilities] = httpx.Response(
        500, json={"error": {"code": "internal", "message": f"bad key {SECRET}"}}
    )
    responses = every_page(admin_client, keyed_endpoint)
    agents.answers[capabilities] = {
        **DECLARATION,
        "identity": {"name": "Weather", "description": f"key {SECRET}"},
    }
    responses += every_page(admin_client, keyed_endpoint)
    assert_secret_kept(responses)


def test_user_pages_hide_a_credential_the_agent_echoes_back(admin_client, agents, keyed_endpoint):
    agents.answers[f"{AGENT_URL}/capabilities"] = httpx.Response(
        500, json={"error": {"code": "internal", "message": f"bad key {SECRET}"}}
    )
    assert_secret_kept(user_pages(admin_client, keyed_endpoint))


def test_messages_scrub_a_credential_an_agent_echoes_back():
    endpoint = make_endpoint(auth_kind="bearer", credential=SECRET)
    found = discovery.Discovery(endpoint.pk, "agui", "unreachable", "", None, error=f"echo {SECRET}")
    _level, text = checks.connection_message(checks.ConnectionCheck(endpoint, found, 5))
    assert SECRET not in text and "[credential]" in text


# --- Access -----------------------------------------------------------------------------------------


def test_another_groups_endpoint_is_not_found_and_not_listed(client, agents):
    ops, finance = Group.objects.create(name="Ops"), Group.objects.create(name="Finance")
    theirs = make_endpoint(name="Ledger", slug="ledger", base_url=AGENT_URL)
    theirs.allowed_groups.add(finance)
    open_to_all = make_endpoint(name="Open", slug="open", base_url=AGENT_URL)
    outsider = make_user()
    outsider.groups.add(ops)
    client.force_login(outsider)

    assert client.get("/agents/ledger/").status_code == 404
    assert client.get("/agents/ledger/card/").status_code == 404
    catalogue = client.get("/").content.decode()
    assert "Ledger" not in catalogue and open_to_all.name in catalogue
    # Not even as a preview: that is for staff.
    assert client.get("/agents/ledger/?preview=1").status_code == 404

    member = make_user()
    member.groups.add(finance)
    client.force_login(member)
    assert client.get("/agents/ledger/").status_code == 200
    assert "Ledger" in client.get("/").content.decode()


def test_staff_preview_a_disabled_endpoint_with_a_banner(client, agents):
    from django.contrib.auth.models import Permission

    endpoint = make_endpoint(name="Draft agent", slug="draft", base_url=AGENT_URL, enabled=False)
    endpoint.allowed_groups.add(Group.objects.create(name="Nobody yet"))
    staff = make_user(staff=True)
    client.force_login(staff)
    assert client.get("/agents/draft/?preview=1").status_code == 404  # staff without the permission
    staff.user_permissions.add(Permission.objects.get(codename="view_agentendpoint"))
    response = client.get("/agents/draft/?preview=1")
    assert response.status_code == 200
    html = response.content.decode()
    assert "flash-preview" in html and "Preview: Draft agent" in html and "disabled" in html
    assert 'data-control="tools"' in html  # the current declaration's controls
    assert client.get("/agents/draft/").status_code == 404  # without ?preview, as for anyone


def test_card_signing_keys_are_checked_in_the_form_and_nothing_typed_is_lost(admin_client):
    from tests.support.card_signing import SigningKey

    typed = '{"keys": [{"kty": "oct", "kid": "shared", "k": "c2VjcmV0"}]}'
    form = add_form(protocol="a2a", signature_policy="require", signing_keys=typed)
    response = admin_client.post("/admin/agents_ui/agentendpoint/add/", form)
    page = response.content.decode()
    assert response.status_code == 200 and "This key set cannot be used" in page
    assert "only public keys of type EC, RSA, OKP sign cards" in page
    assert "&quot;kid&quot;: &quot;shared&quot;" in page  # the admin's text is still in the field
    assert not AgentEndpoint.objects.exists()

    response = admin_client.post(
        "/admin/agents_ui/agentendpoint/add/", add_form(protocol="a2a", signing_keys='{"keys": [')
    )
    assert "Enter a valid JSON" in response.content.decode()
    assert "{&quot;keys&quot;: [</textarea>" in response.content.decode()

    response = admin_client.post(
        "/admin/agents_ui/agentendpoint/add/", add_form(protocol="a2a", signature_policy="require")
    )
    assert "To require a signature, paste the keys" in response.content.decode()

    key = SigningKey("k1")
    import json

    keys = json.dumps(key.key_set)
    form = add_form(protocol="a2a", signature_policy="require", signing_keys=keys, signer_name="Echo Corp")
    response = admin_client.post("/admin/agents_ui/agentendpoint/add/", form)
    assert response.status_code == 302, response.content.decode()[:3000]
    endpoint = AgentEndpoint.objects.get(slug="weather")
    assert endpoint.signing_keys == key.key_set and endpoint.signature_policy == "require"

"""The admin in a browser: register an agent, test it, re-discover it, compare two declarations,
override a control and preview the workspace it gives, against the demo agents over real HTTP."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from agents_ui.demo.registry import DEMO_AGENTS, register_demo_agents
from agents_ui.models import AgentEndpoint
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.e2e


@pytest.fixture
def admin_page(page: Page, live_url: str) -> Page:
    """A page signed in to the admin as a superuser, failing the test on any CSP violation."""
    violations: list[str] = []
    page.on(
        "console",
        lambda message: (
            violations.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    user = make_user("admin", superuser=True)
    page.goto(f"{live_url}/admin/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page.locator("#site-name")).to_be_visible()
    yield page
    assert violations == [], violations


def message(page: Page, text: str | re.Pattern) -> None:
    expect(page.locator("ul.messagelist li").filter(has_text=text).first).to_be_visible()


def workspace_controls(page: Page) -> set[str]:
    """The adaptive controls on the page, outside the explain panel."""
    return set(
        page.eval_on_selector_all(
            "[data-control]:not(#explain [data-control])", "els => els.map(e => e.dataset.control)"
        )
    )


def test_admin_registers_tests_rediscovers_compares_and_overrides(admin_page: Page, live_url, screenshot):
    page = admin_page
    page.set_viewport_size({"width": 1440, "height": 900})
    register_demo_agents(live_url)

    # The list of endpoints, every demo agent discovered once.
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/")
    page.check("#action-toggle")
    page.select_option("select[name=action]", "rediscover_now")
    page.click("button[name=index]")
    # Many agents: a summary, and a line for each one needing a look.
    count = len(DEMO_AGENTS)  # the Legacy Agent serves no declaration
    message(page, f"Re-discovered {count} agents: {count - 1} declared what they can do, 1 need a look")
    message(page, "Legacy Helpdesk Bot: no discovery (capabilities unknown)")
    expect(page.locator("#result_list .discovery-declared").first).to_be_visible()
    screenshot("admin-endpoints")

    # Register a new AG-UI endpoint (the toolsmith demo agent under another name), not yet enabled.
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/add/")
    page.locator("#id_name").press_sequentially("Workshop tools")
    expect(page.locator("#id_slug")).to_have_value("workshop-tools")  # the admin's own prepopulate
    page.select_option("#id_protocol", "agui")
    page.uncheck("#id_enabled")
    page.fill("#id_base_url", f"{live_url}/demo-agents/toolsmith/")
    page.select_option("#id_auth_kind", "none")
    page.click("input[name=_continue]")
    message(page, "was added successfully")
    endpoint = AgentEndpoint.objects.get(slug="workshop-tools")
    assert endpoint.enabled is False

    # Test the connection: reachable, how fast, what discovery answered.
    page.click("button[data-tool=test-connection]")
    message(
        page, re.compile(r"Workshop tools: reachable in \d+ ms; declared capabilities \(hash [0-9a-f]{8}\)")
    )

    # Re-discover twice: the toolsmith's tool list changes every time, so two snapshots.
    page.click("button[data-tool=rediscover]")
    message(page, re.compile(r"Workshop tools: declared capabilities .*a new snapshot was recorded"))
    page.click("button[data-tool=rediscover]")
    message(page, "a new snapshot was recorded")
    expect(page.locator(".field-latest_discovery .discovery-declared")).to_be_visible()
    screenshot("admin-endpoint")

    # The history of declarations, and the diff between the two.
    page.click("a[data-tool=declarations]")
    rows = page.locator("table.declarations-table tbody tr")
    expect(rows).to_have_count(2)
    screenshot("admin-declarations")
    page.click("input[type=submit][value=Compare]")
    expect(page.locator("h1")).to_contain_text("What changed: Workshop tools")
    added = page.locator(".diff-items [data-change=added]")
    removed = page.locator(".diff-items [data-change=removed]")
    expect(added).to_have_count(1)
    expect(removed).to_have_count(1)
    assert added.get_attribute("data-item") != removed.get_attribute("data-item")
    expect(page.locator("tr[data-path^='tools.items[']").first).to_be_visible()
    screenshot("admin-diff")

    # Preview the workspace as a user would see it, although the agent is disabled.
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    page.click("a[data-tool=preview]")
    expect(page.locator(".flash-preview")).to_contain_text("Preview: Workshop tools")
    assert "tools" in workspace_controls(page)
    expect(page.locator("#explain [data-explain=tools]")).to_have_attribute("data-decision", "shown")

    # Force the tool list off: the workspace follows, and the explain panel names the override.
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    page.select_option("#id_override_tools", "hide")
    screenshot("admin-overrides")
    page.click("input[name=_continue]")
    message(page, "was changed successfully")
    expect(page.locator("#id_override_tools")).to_have_value("hide")
    page.click("a[data-tool=preview]")
    expect(page.locator(".flash-preview")).to_be_visible()
    assert "tools" not in workspace_controls(page)
    explain = page.locator("#explain [data-explain=tools]")
    expect(explain).to_have_attribute("data-decision", "hidden")
    expect(explain).to_contain_text("The admin forced this control off")
    screenshot("admin-preview")

    # Nobody else can open it yet: without ?preview it is not found, even for the admin.
    response = page.goto(f"{live_url}/agents/workshop-tools/")
    assert response is not None and response.status == 404


def sign_in_to_admin(page: Page, live_url: str, username: str, password: str) -> None:
    page.goto(f"{live_url}/admin/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    page.click("input[type=submit]")


def test_staff_who_may_only_view_see_that_a_credential_is_set_and_nothing_more(page: Page, live_url):
    from django.contrib.auth.models import Permission

    secret = "e2e-secret-token-never-shown"
    endpoint = AgentEndpoint.objects.create(
        name="Keyed", slug="keyed", protocol="agui", base_url="http://93.184.216.34/agent",
        auth_kind="bearer", credential=secret,
    )  # fmt: skip
    viewer = make_user(staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_agentendpoint"))
    sign_in_to_admin(page, live_url, viewer.username, PASSWORD)
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    expect(page.locator(".field-credential_status .readonly")).to_have_text("set")
    expect(page.locator("[name=credential], [name=clear_credential]")).to_have_count(0)
    assert secret not in page.content()


def test_the_admin_sign_in_locks_an_account_after_five_failures_and_says_so(page: Page, live_url):
    user = make_user("locked-admin", superuser=True)
    for _ in range(5):
        sign_in_to_admin(page, live_url, user.username, "not the password")
        expect(page.locator(".errornote")).to_contain_text("correct username and password")
    sign_in_to_admin(page, live_url, user.username, PASSWORD)
    expect(page.locator(".errornote")).to_have_text(
        "Too many failed sign-ins for this account. Try again in 15 minutes."
    )
    expect(page.locator("#user-tools")).to_have_count(0)  # not signed in


def test_moving_a_keyed_agent_to_another_host_asks_for_its_credential_again(
    admin_page: Page, live_url, screenshot
):
    endpoint = AgentEndpoint.objects.create(
        name="Keyed", slug="keyed-move", protocol="agui", base_url="https://agent.example.test/agent",
        auth_kind="bearer", credential="stored-secret",
    )  # fmt: skip
    admin_page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    admin_page.fill("#id_base_url", "https://collector.example.test/agent")
    admin_page.click("input[name=_save]")
    expect(admin_page.locator(".field-credential .errorlist")).to_contain_text(
        "the stored credential is never sent to a new address"
    )
    screenshot("admin-credential-new-origin")
    admin_page.set_viewport_size({"width": 390, "height": 844})
    expect(admin_page.locator(".field-credential .errorlist")).to_be_visible()
    screenshot("admin-credential-new-origin-phone")
    endpoint.refresh_from_db()
    assert endpoint.base_url == "https://agent.example.test/agent"

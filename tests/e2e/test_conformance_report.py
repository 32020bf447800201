"""The conformance report in a browser: Probe now pressed by an admin against the demo agents, an
agent that contradicts itself on purpose, and real framework agents; the drift alarm in the list;
the staff badge on the catalogue card (and none for others); desktop and phone width, through a
reload."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Probe
from tests.e2e.test_admin import admin_page  # noqa: F401 (the fixture)
from tests.e2e.test_runs import demo  # noqa: F401 (the fixture)
from tests.factories import PASSWORD, make_endpoint, make_user
from tests.interop.fixtures import peer_server
from tests.support.contradicting_agent import ContradictingAgentServer

pytestmark = pytest.mark.e2e
__all__ = ["peer_server"]  # the fixture, imported so pytest finds it here

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
# Probe now waits for four steps of a real agent: longer than a page's usual wait.
PROBE_WAIT = 90_000


@pytest.fixture(scope="module")
def contradicting():
    server = ContradictingAgentServer().start()
    yield server
    server.stop()


def no_sideways_scroll(page: Page) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px"


def report_of(page: Page, live_url: str, endpoint: AgentEndpoint) -> None:
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/change/")
    page.locator("[data-tool=conformance]").click()
    expect(page.locator("h1")).to_have_text(f"Conformance: {endpoint.name}")


def probe_now(page: Page) -> None:
    page.locator("#content-main [data-tool=probe]").click()
    expect(page.locator("ul.messagelist li").first).to_contain_text("Probed", timeout=PROBE_WAIT)
    expect(page.locator("#conformance-probes > li").first.locator("[data-step]")).to_have_count(4)


def test_probe_now_with_the_demo_agents_records_each_step_and_the_report_shows_it(
    admin_page: Page,  # noqa: F811
    demo: str,  # noqa: F811
    screenshot,
):
    page, live_url = admin_page, demo
    page.set_viewport_size(DESKTOP)
    reviewer = AgentEndpoint.objects.get(slug="document-reviewer")
    report_of(page, live_url, reviewer)
    expect(page.locator("#conformance-rows tr[data-capability=uploads]")).to_have_attribute(
        "data-verdict", "not yet shown"
    )
    probe_now(page)
    latest = page.locator("#conformance-probes > li").first
    expect(latest.locator("[data-step=discovery]")).to_have_attribute("data-step-outcome", "passed")
    expect(latest.locator("[data-step=text]")).to_have_attribute("data-step-outcome", "passed")
    expect(latest.locator("[data-step=upload]")).to_have_attribute("data-step-outcome", "passed")
    expect(latest.locator("[data-step=cancel]")).to_have_attribute("data-step-outcome", "passed")
    expect(latest).to_contain_text("by admin")
    # The upload it took is evidence now, with a link to its run.
    uploads = page.locator("#conformance-rows tr[data-capability=uploads]")
    expect(uploads).to_have_attribute("data-verdict", "holds")
    expect(uploads.locator("[data-evidence-run]")).to_have_count(1)
    screenshot("conformance-demo")
    page.reload()
    expect(page.locator("#conformance-rows tr[data-capability=uploads]")).to_have_attribute(
        "data-verdict", "holds"
    )
    expect(page.locator("#conformance-probes > li")).to_have_count(1)
    page.set_viewport_size(PHONE)
    expect(page.locator("#conformance-summary")).to_be_visible()
    no_sideways_scroll(page)
    screenshot("conformance-demo-phone")
    page.set_viewport_size(DESKTOP)
    uploads.locator("[data-evidence-run]").first.click()
    expect(page.locator("#content")).to_contain_text("Completed")

    # An agent that asks before acting: the probe stops at the request and never answers it.
    operations = AgentEndpoint.objects.get(slug="operations")
    report_of(page, live_url, operations)
    probe_now(page)
    latest = page.locator("#conformance-probes > li").first
    expect(latest.locator("[data-step=discovery]")).to_have_attribute("data-step-outcome", "passed")
    for step in ("text", "cancel"):
        expect(latest.locator(f"[data-step={step}]")).not_to_have_attribute("data-step-outcome", "failed")
    probe = Probe.objects.filter(endpoint=operations).latest()
    assert all(step["outcome"] != "failed" for step in probe.steps), probe.steps
    assert not operations.conversations.exclude(user__username="conformance-probe").exists()


def test_an_agent_that_contradicts_itself_raises_the_drift_alarm_on_its_page_and_in_the_list(
    admin_page: Page,  # noqa: F811
    live_url: str,
    contradicting,
    screenshot,
):
    page = admin_page
    page.set_viewport_size(DESKTOP)
    liar = make_endpoint(name="Contradicting agent", slug="liar", base_url=contradicting.url_for("liar"))
    make_endpoint(name="Quiet agent", slug="quiet", base_url=contradicting.url_for("asker"))
    report_of(page, live_url, liar)
    probe_now(page)
    rows = page.locator("#conformance-rows")
    expect(rows.locator("tr[data-capability=reasoning]")).to_have_attribute("data-verdict", "contradiction")
    expect(rows.locator("tr[data-capability=reasoning]")).to_contain_text("Declared unsupported")
    expect(rows.locator("tr[data-capability=uploads]")).to_have_attribute("data-verdict", "contradiction")
    expect(rows.locator("tr[data-capability=uploads]")).to_contain_text("Refused in 1 run")
    expect(page.locator("#drift-alarm")).to_contain_text("Drift alarm")
    expect(page.locator("#conformance-summary")).to_have_text("2 contradictions")
    upload = page.locator("#conformance-probes > li").first.locator("[data-step=upload]")
    expect(upload).to_have_attribute("data-step-outcome", "refused")
    rows.locator("tr[data-capability=reasoning] summary").click()
    expect(rows.locator("tr[data-capability=reasoning] details")).to_contain_text("reasoning.supported")
    screenshot("conformance-contradiction")
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    screenshot("conformance-contradiction-phone")
    page.set_viewport_size(DESKTOP)

    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{liar.pk}/change/")
    expect(page.locator(".drift-alarm-box")).to_contain_text("Drift alarm")
    expect(page.locator(".drift-alarm-box [data-drift-capability=uploads]")).to_be_visible()
    screenshot("conformance-endpoint-alarm")
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/")
    row = page.locator("#result_list tr").filter(has_text="Contradicting agent")
    expect(row.locator(".drift-alarm")).to_have_text("Drift: 2 contradictions")
    page.locator("#changelist-filter a").filter(has_text="Contradicts its declaration").click()
    expect(page.locator("#result_list")).to_contain_text("Contradicting agent")
    expect(page.locator("#result_list")).not_to_contain_text("Quiet agent")
    screenshot("conformance-list")
    page.reload()
    expect(page.locator("#result_list .drift-alarm")).to_have_count(1)
    page.set_viewport_size(PHONE)
    screenshot("conformance-list-phone")


def test_staff_see_the_conformance_badge_on_a_card_and_other_people_do_not(
    page: Page, live_url: str, contradicting, screenshot
):
    page.set_viewport_size(DESKTOP)
    make_endpoint(name="Contradicting agent", slug="liar", base_url=contradicting.url_for("liar"))
    AgentEndpoint.objects.filter(slug="liar").update(observed={"reasoning": True})
    staff = make_user("staff-person", staff=True, everyday=True)
    sign_in(page, live_url, staff.username)
    badge = page.locator('[data-agent="liar"] .conformance-badge')
    expect(badge).to_have_text("Conformance: 1 not yet shown · 1 contradiction")
    screenshot("conformance-badge")
    page.reload()
    expect(badge).to_have_text("Conformance: 1 not yet shown · 1 contradiction")
    page.set_viewport_size(PHONE)
    expect(badge).to_be_visible()
    no_sideways_scroll(page)
    screenshot("conformance-badge-phone")
    page.set_viewport_size(DESKTOP)

    page.context.clear_cookies()
    person = make_user("ordinary-person", everyday=True)
    sign_in(page, live_url, person.username)
    expect(page.locator('[data-agent="liar"]')).to_be_visible()
    expect(page.locator(".conformance-badge")).to_have_count(0)
    page.reload()
    expect(page.locator(".conformance-badge")).to_have_count(0)
    assert page.request.get(f"{live_url}/admin/agents_ui/agentendpoint/").url.endswith(
        "/admin/login/?next=/admin/agents_ui/agentendpoint/"
    )


def sign_in(page: Page, live_url: str, username: str) -> None:
    page.goto(f"{live_url}/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_url}/")


@pytest.mark.parametrize("peer", ["pydantic-ai", "langgraph"])
def test_probe_now_against_real_framework_agents(
    admin_page: Page,  # noqa: F811
    live_url: str,
    peer_server,
    peer: str,
    screenshot,
):
    if os.environ.get("AGENTS_UI_INTEROP") != "1":
        pytest.skip("real framework agents run with AGENTS_UI_INTEROP=1 (make interop)")
    page = admin_page
    page.set_viewport_size(DESKTOP)
    endpoint = make_endpoint(
        name=f"Interop {peer}", slug=f"interop-{peer}", base_url=peer_server(peer).url("default")
    )
    report_of(page, live_url, endpoint)
    probe_now(page)
    latest = page.locator("#conformance-probes > li").first
    expect(latest.locator("[data-step=discovery]")).to_have_attribute("data-step-outcome", "passed")
    expect(latest.locator("[data-step=text]")).not_to_have_attribute("data-step-outcome", "failed")
    expect(latest.locator("[data-step=cancel]")).not_to_have_attribute("data-step-outcome", "failed")
    probe = Probe.objects.filter(endpoint=endpoint).latest()
    assert probe.outcome != Probe.Outcome.FAILED, probe.steps
    screenshot(f"conformance-{peer}")
    page.reload()
    expect(page.locator("#conformance-probes > li")).to_have_count(1)
    page.set_viewport_size(PHONE)
    no_sideways_scroll(page)
    screenshot(f"conformance-{peer}-phone")

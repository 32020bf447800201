"""Agent health in the admin, in a browser: one failed run makes an agent failing, on the list and
on its health page, which links to the run; at desktop and phone widths."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint
from tests.e2e.test_admin import admin_page  # noqa: F401 (the fixture)
from tests.e2e.test_runs import demo, open_agent, send, wait_run  # noqa: F401 (demo: the fixture)
from tests.factories import make_endpoint

pytestmark = pytest.mark.e2e


def test_one_failed_run_shows_the_agent_failing_on_the_list_and_its_health_page(
    admin_page: Page,  # noqa: F811
    demo: str,  # noqa: F811
    screenshot,
):
    page, live_url = admin_page, demo
    page.set_viewport_size({"width": 1440, "height": 900})
    broken = make_endpoint(
        name="Broken agent", slug="broken", base_url="http://127.0.0.1:9/agent", connect_timeout=0.5
    )
    # One run with a working demo agent, one with the broken agent, as a person would send them.
    open_agent(page, live_url, "support-desk")
    send(page, "Where is my order?")
    wait_run(page, "completed")
    open_agent(page, live_url, "broken")
    send(page, "Hello?")
    wait_run(page, "failed")

    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/")
    expect(page.locator("#health-rule")).to_contain_text("failing when the latest failed")
    row = page.locator("#result_list tr").filter(has_text="Broken agent")
    expect(row.locator(".agent-health")).to_have_text("Failing")
    expect(row.locator(".agent-health")).to_have_attribute(
        "title", "1 of 1 run that ended in the last day failed"
    )
    support = AgentEndpoint.objects.get(slug="support-desk")
    healthy = page.locator("#result_list tr").filter(has_text=support.name)
    expect(healthy.locator(".agent-health")).to_have_text("Healthy")
    screenshot("admin-health-list")

    row.locator(".agent-health").click()
    expect(page.locator("h1")).to_have_text("Health: Broken agent")
    expect(page.locator(".agent-health-now .agent-health")).to_have_attribute("data-health", "failing")
    hour = page.locator("#health-windows tbody tr").first
    expect(hour.locator("[data-cell=runs]")).to_have_text("1")
    expect(hour.locator("[data-cell=success]")).to_have_text("0%")
    expect(page.locator("#health-failures")).to_contain_text("The agent cannot be reached.")
    screenshot("admin-health")
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator("#health-failures")).to_be_visible()
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 1, f"the page scrolls sideways by {overflow}px at phone width"
    screenshot("admin-health-phone")
    page.set_viewport_size({"width": 1440, "height": 900})

    page.locator("#health-failures a").first.click()
    expect(page.locator("#content")).to_contain_text("The agent cannot be reached.")
    expect(page.locator("#content")).not_to_contain_text("Hello?")  # what was said stays in the thread

    # The endpoint's change page links to its health.
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{broken.pk}/change/")
    page.locator("[data-tool=health]").click()
    expect(page.locator("h1")).to_have_text("Health: Broken agent")

"""The README's screenshots, taken from the product as a person uses it: the catalogue, workspaces with
a conversation (an A2UI surface over A2A, the Booking Desk's generative UI), the conversations page,
sign-in, the phone's pages and three admin pages.

Runs only with AGENTS_UI_README_SCREENSHOTS set to a folder (the README's are in docs/screenshots):
`AGENTS_UI_E2E=1 AGENTS_UI_README_SCREENSHOTS=docs/screenshots pytest tests/e2e/test_readme_screenshots.py`.
Each page is checked before it is taken, so a screenshot never shows a page half loaded.
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint
from tests.e2e.test_a2ui import set_slider
from tests.e2e.test_runs import GREETING, TIMEOUT, demo, last_run, open_agent, send, wait_run
from tests.factories import PASSWORD, make_user
from tests.support.browser import htmx_idle, painted

FOLDER = os.environ.get("AGENTS_UI_README_SCREENSHOTS")
pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not FOLDER, reason="set AGENTS_UI_README_SCREENSHOTS to a folder to take them"),
]
__all__ = ["demo"]  # the fixture, imported so pytest finds it here

DESKTOP = {"width": 1400, "height": 900}
ADMIN = {"width": 1440, "height": 900}
PHONE = {"width": 390, "height": 844}


def shoot(page: Page, name: str, *, full_page: bool = False) -> None:
    htmx_idle(page)
    page.evaluate("() => document.fonts.ready.then(() => true)")
    painted(page)  # the conversation's scroll follows the fonts and the last swap
    Path(FOLDER).mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(FOLDER) / f"{name}.png"), full_page=full_page)


def sign_in(page: Page, base: str, username: str = "admin") -> None:
    user = make_user(username, superuser=True)
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")


def test_readme_screenshots(page: Page, demo: str, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.0
    page.set_viewport_size(DESKTOP)
    page.goto(f"{demo}/accounts/login/")
    expect(page.locator("#id_username")).to_be_visible()
    shoot(page, "login")

    sign_in(page, demo)
    expect(page.locator("[data-agent-card], .card").first).to_be_visible()
    shoot(page, "catalogue")

    open_agent(page, demo, "support-desk")
    send(page, "I want a refund of 30 euros for the broken lamp")
    expect(last_run(page).locator("form[data-approval]")).to_be_visible(timeout=TIMEOUT)
    expect(last_run(page).locator("[data-expires-at]")).to_contain_text(" min ")  # counting down
    shoot(page, "workspace-support-desk")

    open_agent(page, demo, "legacy")
    send(page, "How do I reset my password?")
    wait_run(page)
    shoot(page, "workspace-legacy")

    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    send(page, GREETING)
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    shoot(page, "workspace-research-assistant")
    research = page.url

    # A2A with A2UI: the Trip Planner offers hotels on a surface of its own.
    open_agent(page, demo, "trip-planner")
    send(page, "Find a hotel in Porto")
    wait_run(page)
    expect(last_run(page).locator("form.a2ui-surface").last).to_contain_text("Where to stay in Porto")
    shoot(page, "workspace-trip-planner")

    # AG-UI with A2UI: the Booking Desk's form, filled in and sent, answered with a confirmation card.
    open_agent(page, demo, "booking-desk")
    send(page, "I need a room")
    wait_run(page)
    form = last_run(page).locator("form.a2ui-surface").last
    expect(form.locator('[data-a2ui="DateTimeInput"] input[type=date]')).to_be_visible()
    form.locator('input[name="a2ui:/booking/date"]').fill((date.today() + timedelta(days=2)).isoformat())
    form.get_by_text("Garden room · 8 seats").click()
    set_slider(form.locator('input[name="a2ui:/booking/guests"]'), 6)
    form.get_by_label("Needs a projector").check()
    form.locator('textarea[name="a2ui:/booking/notes"]').fill("Tea for six")
    form.get_by_role("button", name="Check and book").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    card = last_run(page).locator("form.a2ui-surface").last
    expect(card).to_contain_text("Status: confirmed", timeout=TIMEOUT)  # the ACTIVITY_DELTA, live
    shoot(page, "workspace-booking-desk")

    page.emulate_media(color_scheme="dark")
    open_agent(page, demo, "planner")
    send(page, "Plan the product launch in Berlin")
    wait_run(page)
    expect(page.locator("#state-document [data-checklist] li").first).to_be_visible(timeout=TIMEOUT)
    shoot(page, "workspace-planner-dark")
    page.emulate_media(color_scheme="light")

    page.goto(f"{demo}/conversations/")
    expect(page.locator(".conversation-table").first).to_be_visible()
    shoot(page, "conversations")

    page.set_viewport_size(PHONE)
    page.goto(f"{demo}/")
    shoot(page, "phone-catalogue")
    page.goto(research)
    expect(page.locator("#transcript section.run")).to_have_count(2)
    shoot(page, "phone-workspace")
    page.locator("[data-drawer-toggle]").click()
    expect(page.locator("#workspace-side")).to_be_visible()
    shoot(page, "phone-details")
    page.locator("#workspace-side [data-drawer-close]").click()
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain")).to_be_visible()
    shoot(page, "phone-explain")

    # The admin: every endpoint after a re-discovery, and what changed between two declarations.
    page.set_viewport_size(ADMIN)
    page.goto(f"{demo}/admin/agents_ui/agentendpoint/")
    page.check("#action-toggle")
    page.select_option("select[name=action]", "rediscover_now")
    page.click("button[name=index]")
    expect(page.locator("ul.messagelist li").first).to_be_visible(timeout=TIMEOUT)
    shoot(page, "admin-endpoints", full_page=True)
    toolsmith = AgentEndpoint.objects.get(slug="toolsmith")
    page.goto(f"{demo}/admin/agents_ui/agentendpoint/{toolsmith.pk}/change/")
    page.click("button[data-tool=rediscover]")  # its tool list changes at each discovery
    expect(page.locator("ul.messagelist li").first).to_be_visible()
    page.click("a[data-tool=declarations]")
    page.click("input[type=submit][value=Compare]")
    expect(page.locator(".diff-items [data-change=added]").first).to_be_visible()
    shoot(page, "admin-diff")
    # How the Research Assistant is doing, from the runs above.
    research_agent = AgentEndpoint.objects.get(slug="research-assistant")
    page.goto(f"{demo}/admin/agents_ui/agentendpoint/{research_agent.pk}/health/")
    expect(page.locator("#health-windows [data-cell=runs]").first).not_to_have_text("0")
    shoot(page, "admin-health")

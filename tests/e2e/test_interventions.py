"""Changing the course of a running plan in the browser: the Launch Planner declares interventions, so
while it works the composer offers Change course; the run stops keeping what it did, and the planner
sets its unfinished steps aside for the correction, live and after a reload."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import TIMEOUT, demo, open_agent, run_status, send, wait_run
from tests.e2e.test_workspace_live import errors_of, watched

pytestmark = pytest.mark.e2e
__all__ = ["demo", "watched"]  # the fixtures, imported so pytest finds them here

SIZES = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.mark.parametrize("size", SIZES)
def test_a_correction_changes_the_course_of_the_running_plan(
    page: Page, demo: str, signed_in, settings, watched, size
):
    settings.AGENTS_UI_DEMO_PACING = 0.02
    page.set_viewport_size(SIZES[size])
    signed_in()
    open_agent(page, demo, "planner")
    change = page.locator("[data-change-course]")
    expect(change).to_be_hidden()  # nothing runs yet: nothing to change
    state = page.locator("#state-document")
    send(page, "Plan the product launch in Berlin")
    expect(state).to_contain_text('"in_progress"', timeout=TIMEOUT)
    expect(change).to_be_visible()
    assert page.evaluate("document.scrollingElement.scrollWidth <= innerWidth")

    page.fill("#message", "Launch in Munich instead")
    change.click()
    runs = page.locator("#transcript section.run")
    expect(runs).to_have_count(2, timeout=TIMEOUT)
    expect(page.locator("#message")).to_have_value("")
    wait_run(page, "cancelled", index=0)
    expect(run_status(page, 0)).to_contain_text("Stopped to change course")
    wait_run(page)
    expect(state).to_contain_text('"setAside"')
    expect(state).to_contain_text("Change course: Launch in Munich instead")
    expect(runs.last.locator(".msg-assistant")).to_contain_text("I changed course on the plan for")
    expect(page.locator(".msg-user [data-changed-course]")).to_have_count(1)
    expect(change).to_be_hidden()

    page.reload()
    runs = page.locator("#transcript section.run")
    expect(runs).to_have_count(2)
    expect(run_status(page, 0)).to_contain_text("Stopped to change course")
    expect(runs.first.locator(".msg-assistant")).to_have_count(0)  # it had not spoken yet: nothing invented
    expect(runs.last.locator(".msg-assistant")).to_contain_text("I changed course on the plan for")
    expect(page.locator(".msg-user [data-changed-course]")).to_have_count(1)
    expect(page.locator("#state-document")).to_contain_text("Change course: Launch in Munich instead")
    expect(page.locator("[data-change-course]")).to_be_hidden()
    assert errors_of(page, watched) == []


def test_an_agent_that_does_not_declare_interventions_offers_only_stop(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "cipher")
    expect(page.locator("[data-control=stop]")).to_have_count(1)
    expect(page.locator("[data-change-course]")).to_have_count(0)

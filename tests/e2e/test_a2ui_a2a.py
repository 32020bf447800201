"""A2UI over A2A in the browser, on a desktop and on a phone: the Trip Planner (an A2A agent that
declares A2UI's extension) answers with a surface to choose a hotel, the confirm goes back to it in
the same task, its update is drawn live, the explain view names the card field, and a reload shows
the same."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_a2ui import SIZES, no_errors, runs, surface
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.e2e.test_runs import demo as demo  # the demo agents, registered against the live server

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("size", list(SIZES))
def test_a_hotel_is_chosen_on_an_a2a_agents_surface_and_a_reload_shows_the_same(
    page: Page, demo: str, signed_in, screenshot, size: str
):
    page.set_viewport_size(SIZES[size])
    errors = no_errors(page)
    signed_in()
    open_agent(page, demo, "trip-planner")
    send(page, "Find a hotel in Porto")
    wait_run(page)
    expect(last_run(page)).to_contain_text("Three hotels in Porto: choose one.")
    form = surface(page)
    expect(form).to_contain_text("Where to stay in Porto")
    screenshot(f"a2ui-a2a-hotels-{size}")

    form.get_by_text("Tower Suites · 180 EUR a night").click()
    form.get_by_role("button", name="Confirm").click()
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    expect(last_run(page).locator(".msg-a2ui-action")).to_contain_text("Pressed “Confirm”")
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("Tower Suites in Porto is booked")
    expect(surface(page)).to_contain_text("Booked: Tower Suites, Porto.", timeout=TIMEOUT)
    expect(runs(page).first.locator("[data-a2ui-sent]")).to_be_visible()
    screenshot(f"a2ui-a2a-booked-{size}")

    # Why the surface is drawn: the card's extension.
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain")).to_contain_text("capabilities.extensions[0] declares A2UI v0.9")
    page.keyboard.press("Escape")

    page.reload()
    expect(runs(page)).to_have_count(2)
    expect(page.locator("[data-a2ui-sent]")).to_have_count(1)
    expect(surface(page)).to_contain_text("Booked: Tower Suites, Porto.")
    expect(runs(page).nth(1).locator(".msg-a2ui-action")).to_contain_text("Pressed “Confirm”")
    first = runs(page).first.locator("form.a2ui-surface")
    expect(first.get_by_label("Tower Suites · 180 EUR a night")).to_be_checked()
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    screenshot(f"a2ui-a2a-reloaded-{size}")
    assert errors == []

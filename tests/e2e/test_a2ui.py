"""A2UI in the browser, on a desktop and on a phone: the Booking Desk's form is filled in and sent,
the agent answers what was filled in, the confirmation card moves on live, every Basic Catalog
component renders, binds and acts, nothing agent-made runs script, and a reload shows the same."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta

import pytest
from playwright.sync_api import Page, expect

from agents_ui.sdk import a2ui
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_a11y import serious_violations
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.e2e.test_runs import demo as demo  # the demo agents, registered against the live server
from tests.factories import make_endpoint
from tests.support.a2ui_agent import HostileA2uiServer

pytestmark = pytest.mark.e2e

SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


def runs(page: Page):
    return page.locator("#transcript section.run")


def surface(page: Page):
    return last_run(page).locator("form.a2ui-surface").last


def set_slider(field, value: int) -> None:
    """A range input moved to a value, as dragging it would (Playwright cannot fill a range)."""
    field.evaluate("(e, v) => { e.value = v; e.dispatchEvent(new Event('input', {bubbles: true})); }", value)


def no_errors(page: Page) -> list[str]:
    """Script errors and console errors of the page, as they come."""
    errors: list[str] = []

    def console(message) -> None:
        # Playwright hides the caret with a <style> of its own while it takes a screenshot: the CSP
        # blocks it, which is this test's doing, not the page's.
        if message.type == "error" and not (SCREENSHOTS and message.text.startswith("Applying inline style")):
            errors.append(message.text)

    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", console)
    return errors


@pytest.mark.parametrize("size", list(SIZES))
def test_a_room_is_booked_through_the_agents_form_and_a_reload_shows_the_same(
    page: Page, demo: str, signed_in, screenshot, size: str
):
    page.set_viewport_size(SIZES[size])
    errors = no_errors(page)
    signed_in()
    open_agent(page, demo, "booking-desk")
    send(page, "I need a room")
    wait_run(page)
    form = surface(page)
    expect(form).to_be_visible()
    expect(form.locator('[data-a2ui="DateTimeInput"] input[type=date]')).to_be_visible()
    screenshot(f"a2ui-booking-form-{size}")

    day = (date.today() + timedelta(days=2)).isoformat()
    form.locator('input[name="a2ui:/booking/date"]').fill(day)
    form.get_by_text("Focus room · 4 seats").click()
    set_slider(form.locator('input[name="a2ui:/booking/guests"]'), 6)
    form.get_by_label("Needs a projector").check()
    form.locator('textarea[name="a2ui:/booking/notes"]').fill("Tea for six")
    form.get_by_role("button", name="Check and book").click()

    # The action is the person's turn; the agent reacts to what was filled in.
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    expect(last_run(page).locator(".msg-a2ui-action")).to_contain_text("Pressed “Check and book”")
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("seats 4, not 6", timeout=TIMEOUT)
    expect(runs(page).first.locator("[data-a2ui-sent]")).to_be_visible()
    form = surface(page)
    expect(form.locator('input[name="a2ui:/booking/date"]')).to_have_value(day)  # kept from what was sent
    form.get_by_text("Garden room · 8 seats").click()
    form.get_by_role("button", name="Check and book").click()

    expect(runs(page)).to_have_count(3, timeout=TIMEOUT)
    wait_run(page)
    card = surface(page)
    expect(card).to_contain_text("Garden room, " + day)
    expect(card).to_contain_text("Status: confirmed", timeout=TIMEOUT)  # the ACTIVITY_DELTA, live
    card.get_by_text("Front desk").click()
    expect(card.get_by_text("Tea for six")).to_be_visible()
    screenshot(f"a2ui-booking-confirmed-{size}")

    # Why the surfaces are drawn: the agent declared A2UI as a custom capability.
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain")).to_contain_text("custom.a2ui declares A2UI v0.9")
    page.keyboard.press("Escape")

    page.reload()
    expect(runs(page)).to_have_count(3)
    expect(page.locator("[data-a2ui-sent]")).to_have_count(2)
    expect(surface(page)).to_contain_text("Status: confirmed")
    expect(runs(page).nth(1).locator(".msg-a2ui-action")).to_contain_text("Pressed “Check and book”")
    first = runs(page).first.locator("form.a2ui-surface")
    expect(first.locator('input[name="a2ui:/booking/guests"]')).to_have_value("6")
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]

    # Cancelled: the agent updates the earlier turn's card, live, without creating it again.
    surface(page).get_by_role("button", name="Cancel the booking").click()
    expect(runs(page)).to_have_count(4, timeout=TIMEOUT)
    wait_run(page)
    expect(surface(page)).to_contain_text("Status: cancelled", timeout=TIMEOUT)
    expect(surface(page)).to_contain_text("Garden room, " + day)
    expect(runs(page).nth(2).locator("form.a2ui-surface")).to_contain_text("Status: confirmed")
    assert errors == []


@pytest.mark.parametrize("size", list(SIZES))
def test_every_basic_catalog_component_renders_binds_and_acts(
    page: Page, demo: str, signed_in, screenshot, size: str
):
    page.set_viewport_size(SIZES[size])
    errors = no_errors(page)
    signed_in()
    open_agent(page, demo, "booking-desk")
    send(page, "show me every component")
    wait_run(page)
    form = surface(page)
    for kind in a2ui.COMPONENTS:
        expect(form.locator(f'[data-a2ui="{kind}"]').first).to_be_attached()
    expect(form.locator('[data-a2ui="List"] li')).to_have_count(3)
    expect(form.get_by_text("Garden room: 8 seats")).to_be_visible()
    assert form.locator('[data-a2ui="Image"] img').evaluate("img => img.naturalWidth") == 16
    expect(form.locator('[data-a2ui="Video"] a')).to_have_attribute("href", "https://example.org/tour.mp4")
    # Tabs and the dialog work without any script of ours.
    expect(form.get_by_text("Leave the room as you found it.")).to_be_hidden()
    form.get_by_text("Rules", exact=True).click()
    expect(form.get_by_text("Leave the room as you found it.")).to_be_visible()
    form.get_by_role("button", name="Help").click()
    expect(form.get_by_text("and I tell you what I received")).to_be_visible()
    screenshot(f"a2ui-gallery-dialog-{size}")
    form.get_by_role("button", name="Close").click()
    expect(form.get_by_text("and I tell you what I received")).to_be_hidden()

    assert serious_violations(page) == []
    form.get_by_label("Your name").fill("Ada")
    form.get_by_label("I agree to the rules").check()
    form.get_by_text("Water", exact=True).click()
    set_slider(form.locator('input[name="a2ui:/form/volume"]'), 8)
    form.locator('input[name="a2ui:/form/when"]').fill("2026-12-24T18:30")
    screenshot(f"a2ui-gallery-{size}")
    form.get_by_role("button", name="Send", exact=True).click()
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "name = 'Ada', agree = True, extras = ['water'], volume = 8, when = '2026-12-24T18:30'",
        timeout=TIMEOUT,
    )
    page.reload()
    form = runs(page).first.locator("form.a2ui-surface")
    expect(form.get_by_label("Your name")).to_have_value("Ada")
    expect(form.get_by_label("I agree to the rules")).to_be_checked()
    assert errors == []


@pytest.fixture(scope="module")
def hostile_agent() -> Iterator[HostileA2uiServer]:
    server = HostileA2uiServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("size", list(SIZES))
def test_a_hostile_surface_is_refused_or_bounded_with_notes_and_nothing_runs(
    page: Page, live_url: str, signed_in, screenshot, hostile_agent: HostileA2uiServer, size: str
):
    page.set_viewport_size(SIZES[size])
    errors = no_errors(page)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    make_endpoint(slug="hostile-ui", name="Hostile UI", base_url=f"{hostile_agent.url}/")
    signed_in()
    open_agent(page, live_url, "hostile-ui")
    send(page, "show me")
    wait_run(page)
    for reload in (False, True):
        if reload:
            page.reload()
        form = surface(page)
        expect(form).to_contain_text("still words")
        expect(form.locator("[data-a2ui-note]").first).to_be_visible()
        notes = " ".join(form.locator("[data-a2ui-note]").all_inner_texts())
        for said in ("not http(s)", "the first 60 are shown", "levels deep", "contains itself"):
            assert said in notes, said
        expect(form.locator('[data-a2ui="List"] li')).to_have_count(a2ui.MAX_ITEMS)
        assert form.locator("[data-a2ui-refused]").count() >= 3
        # The activity of a type without a renderer is a card with its content, never dropped.
        card = last_run(page).locator('[data-activity="PLAN"] [data-activity-card]')
        expect(card).to_contain_text("Search")
        assert page.evaluate("window.__pwned") is None
        hrefs = page.evaluate("[...document.querySelectorAll('[href],[src]')].map(e => e.href || e.src)")
        assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:text"))]
        handlers = page.evaluate(
            "[...document.querySelectorAll('.run *')].flatMap(e => [...e.attributes].map(a => a.name))"
            ".filter(n => n.startsWith('on') || n === 'style')"
        )
        assert handlers == []
        assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
    screenshot(f"a2ui-hostile-{size}")
    assert dialogs == [] and errors == []

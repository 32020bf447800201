"""The browser lane of the AG-UI conformance corpus: a sample of its fixtures replayed through the
workspace (an AG-UI endpoint pointing at the fixture agent), as a person and staff see them, live
and after a reload: a broken rule, a truncated answer, a cancelled run, and a warning.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Run
from tests.conformance.agui.corpus import load
from tests.e2e.test_runs import last_run, open_agent, send, wait_run
from tests.factories import make_endpoint, make_user
from tests.support.fixture_agent import FixtureAgent

pytestmark = pytest.mark.e2e

SAMPLE = (
    "open-message-at-run-finished-fatal",
    "truncated-stream-fails-the-run",
    "run-finished-cancelled-outcome-accepted",
    "unknown-property-stripped",
)
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


@pytest.fixture(scope="module")
def fixture_agent() -> Iterator[FixtureAgent]:
    fixtures = load()
    agent = FixtureAgent({name: fixtures[name] for name in SAMPLE}).start()
    try:
        yield agent
    finally:
        agent.stop()


def replay(page: Page, live_url: str, fixture_agent: FixtureAgent, name: str, status: str):
    slug = name[:40].rstrip("-")
    make_endpoint(slug=slug, name=f"Fixture {name}", base_url=f"{fixture_agent.url}/{name}")
    open_agent(page, live_url, slug)
    send(page, "Replay the fixture, please")
    wait_run(page, status)
    return last_run(page)


def shots(page: Page, screenshot, name: str) -> None:
    """The page at phone and desktop width, each loaded at that width."""
    for size, label in ((PHONE, "390"), (DESKTOP, "desktop")):
        page.set_viewport_size(size)
        page.reload()
        expect(last_run(page).locator("[data-run-status]")).to_be_visible()
        screenshot(f"conformance-{name}-{label}")


def test_a_broken_rule_ends_the_run_naming_it_and_keeps_every_word(
    page: Page, live_url, signed_in, fixture_agent, screenshot
):
    signed_in(make_user(staff=True))
    run = replay(page, live_url, fixture_agent, "open-message-at-run-finished-fatal", "failed")
    for _ in range(2):  # live, then as the server renders it after a reload
        expect(run.locator(".msg-assistant")).to_contain_text("never closed")
        error = run.locator("[data-run-error]")
        expect(error).to_contain_text("The agent broke an AG-UI rule (events/lifecycle)")
        expect(error).to_contain_text("while text messages are still active")
        detail = run.locator("details[data-technical]").first
        expect(detail).not_to_have_attribute("open", "")
        detail.locator("summary").click()
        expect(detail.locator("pre")).to_contain_text('"type": "RUN_FINISHED"')
        page.reload()
        run = last_run(page)
    assert Run.objects.get().violation["spec"] == "events/lifecycle"
    shots(page, screenshot, "fatal")


def test_a_person_sees_the_rule_but_not_the_raw_event(page: Page, live_url, signed_in, fixture_agent):
    signed_in(make_user())
    run = replay(page, live_url, fixture_agent, "open-message-at-run-finished-fatal", "failed")
    expect(run.locator("[data-run-error]")).to_contain_text("The agent broke an AG-UI rule")
    expect(run.locator("details[data-technical]")).to_have_count(0)


def test_a_truncated_answer_is_interrupted_never_success_and_keeps_what_came(
    page: Page, live_url, signed_in, fixture_agent, screenshot
):
    signed_in(make_user(staff=True))
    run = replay(page, live_url, fixture_agent, "truncated-stream-fails-the-run", "failed")
    for _ in range(2):
        expect(run.locator(".msg-assistant")).to_contain_text("half an ans")
        expect(run.locator("[data-run-error]")).to_contain_text(
            "Interrupted: the agent's answer stopped before it finished."
        )
        expect(run.locator("[data-run-status]")).to_have_attribute("data-run-status", "failed")
        page.reload()
        run = last_run(page)
    shots(page, screenshot, "truncated")


def test_a_cancelled_run_is_neither_success_nor_failure(
    page: Page, live_url, signed_in, fixture_agent, screenshot
):
    signed_in(make_user(staff=True))
    run = replay(page, live_url, fixture_agent, "run-finished-cancelled-outcome-accepted", "cancelled")
    for _ in range(2):
        expect(run.locator(".msg-assistant")).to_contain_text("delivered before the stop")
        expect(run).to_contain_text("The agent cancelled the run.")
        expect(run.locator(".alert-error")).to_have_count(0)
        page.reload()
        run = last_run(page)
    shots(page, screenshot, "cancelled")


def test_a_warning_is_for_staff_in_the_run_details_never_a_page_error(
    page: Page, live_url, signed_in, fixture_agent, screenshot
):
    signed_in(make_user(staff=True))
    run = replay(page, live_url, fixture_agent, "unknown-property-stripped", "completed")
    for _ in range(2):
        expect(run.locator(".msg-assistant")).to_contain_text("content survives")
        expect(run.locator(".alert-error, .alert-warning")).to_have_count(0)
        warnings = run.locator("details[data-protocol-warnings]")
        expect(warnings.locator("summary")).to_have_text("Protocol warnings (1)")
        warnings.locator("summary").click()
        expect(warnings).to_contain_text("/futureProp")
        page.reload()
        run = last_run(page)
    run.locator("details[data-protocol-warnings] summary").click()
    shots(page, screenshot, "warning")
    page.context.clear_cookies()
    signed_in(make_user())
    page.goto(page.url)
    expect(last_run(page).locator("details[data-protocol-warnings]")).to_have_count(0)

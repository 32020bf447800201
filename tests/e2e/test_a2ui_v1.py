"""A2UI v1.0 and token usage in the browser: a v1.0 surface (made whole by one createSurface) drawn
with its ARIA live region, its button sending a v1.0 action, the agent's own call of openUrl
refused and the refusal sent back; the tokens each answer used shown under it; the same after a
reload; and the admin's sums per conversation and per agent. At desktop and phone widths."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Run
from tests.e2e.test_a2ui import no_errors
from tests.e2e.test_a11y import serious_violations
from tests.e2e.test_admin import admin_page  # noqa: F401 (the fixture)
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support import a2ui_v1_agent
from tests.support.a2ui_v1_agent import V1AgentServer

pytestmark = pytest.mark.e2e

DESKTOP, PHONE = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


@pytest.fixture
def v1_agent() -> Iterator[V1AgentServer]:
    a2ui_v1_agent.RECEIVED.clear()
    server = V1AgentServer().start()
    yield server
    server.stop()


def both_widths(page: Page, screenshot, name: str) -> None:
    for size, label in ((DESKTOP, "desktop"), (PHONE, "phone")):
        page.set_viewport_size(size)
        page.reload()  # drawn at this width, as a person arriving with this screen sees it
        page.wait_for_load_state("networkidle")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1, f"{name} scrolls sideways by {overflow}px at {label} width"
        screenshot(f"{name}-{label}")
    page.set_viewport_size(DESKTOP)


def test_a_v1_surface_acts_and_each_answer_shows_its_tokens_after_a_reload_and_in_the_admin(
    admin_page: Page,  # noqa: F811
    live_url: str,
    screenshot,
    v1_agent: V1AgentServer,
):
    page = admin_page
    page.set_viewport_size(DESKTOP)
    errors = no_errors(page)
    make_endpoint(slug="v1-desk", name="Room desk", base_url=f"{v1_agent.url}/")
    open_agent(page, live_url, "v1-desk")
    send(page, "a room, please")
    wait_run(page)
    for reload in (False, True):
        if reload:
            page.reload()
        form = last_run(page).locator("form.a2ui-surface")
        expect(form).to_be_visible()
        greeting = form.locator('[data-a2ui="Text"][aria-live="polite"]')
        expect(greeting).to_have_text("A room, in v1.0")
        expect(last_run(page).locator("[data-a2ui-note]").first).to_contain_text(
            "run 'openUrl' itself: refused"
        )
        usage = last_run(page).locator("[data-usage]")
        expect(usage).to_contain_text("gpt-5 (openai): 1,234 tokens in (200 cached) · 567 out (50 reasoning)")
        expect(usage).to_contain_text("small (local): 12 tokens in · out: not reported")
    both_widths(page, screenshot, "a2ui-v1-surface")

    form = last_run(page).locator("form.a2ui-surface")
    form.get_by_label("Your name").fill("Ada")
    form.get_by_role("button", name="Book the room").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    for reload in (False, True):
        if reload:
            page.reload()
        expect(last_run(page).locator(".msg-assistant")).to_contain_text("Booked the focus room for Ada.")
        expect(last_run(page).locator("[data-usage]")).to_have_text("gpt-5 (openai): 40 tokens in · 8 out")
        expect(page.locator("[data-a2ui-sent]")).to_contain_text("You sent")
    both_widths(page, screenshot, "answer-usage")
    assert serious_violations(page) == []
    sent = a2ui_v1_agent.RECEIVED[-1]["forwardedProps"]
    assert sent["a2uiAction"]["version"] == "v1.0"
    assert sent["a2uiAction"]["userAction"]["context"] == {"name": "Ada", "room": "focus"}
    assert sent["a2uiMessages"][0]["rendererFunctionResponse"]["error"]["code"] == "INVALID_FUNCTION_CALL"

    # The admin: the conversation's tokens on a run's page, the agent's on its health page.
    run = Run.objects.order_by("created_at").first()
    page.goto(f"{live_url}/admin/agents_ui/run/{run.pk}/change/")
    expect(page.locator(".field-conversation_tokens")).to_contain_text(
        "gpt-5 (openai): 1,274 tokens in (200 cached) · 575 out (50 reasoning)"
    )
    expect(page.locator(".field-conversation_tokens")).to_contain_text("2 of its 2 runs reported usage.")
    both_widths(page, screenshot, "admin-run-usage")
    endpoint = AgentEndpoint.objects.get(slug="v1-desk")
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/{endpoint.pk}/health/")
    expect(page.locator("#health-usage")).to_contain_text("small (local): 12 tokens in · out: not reported")
    both_widths(page, screenshot, "admin-health-usage")
    assert not errors, errors

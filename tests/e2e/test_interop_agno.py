"""A real Agno agent (Agno's own AgentOS and AGUI interface, tests/interop/agno/server.py) through the
whole product, in the browser: what a person sees and does with Agno's ways of asking.

Agno pauses for a `requires_confirmation` tool and for its `ask_user` questions with a tool call
that the client answers, not with an AG-UI interrupt: the product draws Approve / Reject and Agno's
questions on the call's card and sends what Agno reads (docs/PROTOCOLS.md). Each step is checked
live and again after a reload; the state and the conversation, after two runs, by a reload and by
a fresh visit of the conversation's address.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Run
from tests.e2e.test_interop import reload, runs, start, state_shown
from tests.e2e.test_runs import TIMEOUT, last_run, send, wait_run
from tests.factories import make_endpoint
from tests.interop import common
from tests.interop.fixtures import peer_server

pytestmark = pytest.mark.e2e
__all__ = ["peer_server"]  # the fixture, imported so pytest finds it here

REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])


@pytest.fixture
def agno(peer_server, live_url, signed_in) -> str:
    """The Agno peer registered as an endpoint, and the person signed in: the workspace URL."""
    make_endpoint(name="Interop Agno", slug="interop-agno", base_url=peer_server("agno").url())
    signed_in()
    return f"{live_url}/agents/interop-agno/"


def at_phone_width(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator(".workspace-side")).to_be_hidden()  # the details drawer slides away first
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")


def awaiting(page: Page, url: str, text: str):
    """Send ``text``; Agno's run ends on a call for the person to answer: its card."""
    start(page, url, text)
    card = last_run(page).locator("[data-answer-state=awaiting]")
    expect(card).to_be_visible()
    return card


def followed_up(page: Page, text: str) -> None:
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(text, timeout=TIMEOUT)
    answered = Run.objects.order_by("-created_at").first()
    assert answered.status == Run.Status.COMPLETED, answered.error


def test_approve_runs_the_tool_and_the_agent_replies(page: Page, agno: str, screenshot):
    card = awaiting(page, agno, "refund my order A-1001")
    expect(card.locator("[data-confirm-convention=Agno]")).to_be_visible()
    expect(card).to_contain_text("issue_refund")
    expect(card.locator("details pre")).to_contain_text('"order_id": "A-1001"')
    screenshot("interop-agno-confirmation")
    at_phone_width(page)
    screenshot("interop-agno-confirmation-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    card.get_by_role("button", name="Approve").click()
    followed_up(page, f"Done: {REFUND}")
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        asked = runs(page).nth(0).locator("[data-answer-state=answered]")
        expect(asked.locator("[data-answer]")).to_contain_text('"accepted": true')
        # Agno announces the call again in the next run, with the tool's result: it ran.
        ran = runs(page).nth(1).locator('[data-tool-call="issue_refund"]')
        expect(ran.locator(".badge-ok")).to_have_text("done")
        expect(ran).to_contain_text(REFUND)
        expect(last_run(page).locator(".msg-assistant")).to_contain_text(f"Done: {REFUND}")
        expect(page.locator("[data-answer-state=awaiting]")).to_have_count(0)
    screenshot("interop-agno-approved")


def test_reject_with_a_reason(page: Page, agno: str):
    card = awaiting(page, agno, "refund my order A-1001")
    card.get_by_label("Reason, if you reject").fill("Not this order.")
    card.get_by_role("button", name="Reject").click()
    # Agno hands the model the reason as the tool's result; the refund never runs.
    followed_up(page, "Done: Not this order.")
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        asked = runs(page).nth(0).locator("[data-answer-state=answered] [data-answer]")
        expect(asked).to_contain_text('"accepted": false')
        expect(asked).to_contain_text('"note": "Not this order."')
        expect(last_run(page).locator(".msg-assistant")).to_contain_text("Done: Not this order.")
        assert REFUND not in page.locator("#transcript").inner_text()


def test_ask_user_is_answered_with_the_form(page: Page, agno: str, screenshot):
    card = awaiting(page, agno, "plan a dinner")
    expect(card.locator("[data-shaped-form][data-convention=Agno]")).to_be_visible()
    expect(card).to_contain_text("Which cuisine?")
    expect(card).to_contain_text("Mezze")
    screenshot("interop-agno-questions")
    at_phone_width(page)
    screenshot("interop-agno-questions-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    card.get_by_label("Greek").check()
    card.get_by_label("Wine").check()
    card.get_by_role("button", name="Send answer").click()
    followed_up(page, "User feedback received")
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        asked = runs(page).nth(0).locator("[data-answer-state=answered] [data-answer]")
        expect(asked).to_contain_text('"Which cuisine?": [')
        expect(asked).to_contain_text('"Greek"')
        reply = last_run(page).locator(".msg-assistant")
        expect(reply).to_contain_text('{"question": "Which cuisine?", "selected": ["Greek"]}')
        expect(reply).to_contain_text('{"question": "Which extras?", "selected": ["Wine"]}')


def conversation_shown(page: Page) -> None:
    """Both runs, each with its tool call and the agent's reply."""
    expect(runs(page)).to_have_count(2)
    expect(page.locator("#transcript .msg-user")).to_have_count(2)
    for index, said in enumerate(("update the state", "update the state again")):
        expect(page.locator("#transcript .msg-user").nth(index)).to_contain_text(said)
        run = runs(page).nth(index)
        expect(run.locator('[data-tool-call="update_plan"] .badge-ok')).to_have_text("done")
        expect(run.locator(".msg-assistant")).to_contain_text("Done: Marked Ship done.")


def test_state_and_the_conversation_after_two_runs_a_reload_and_a_fresh_visit(
    page: Page, agno: str, screenshot
):
    start(page, agno, "update the state")
    state_shown(page)
    send(page, "update the state again")
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    state_shown(page)
    conversation_shown(page)
    reload(page)
    state_shown(page)
    conversation_shown(page)
    screenshot("interop-agno-state")
    conversation_url = page.url
    assert "/c/" in conversation_url, conversation_url
    visit = page.context.new_page()
    try:
        visit.goto(conversation_url)
        state_shown(visit)
        conversation_shown(visit)
    finally:
        visit.close()
    at_phone_width(page)
    screenshot("interop-agno-state-phone")

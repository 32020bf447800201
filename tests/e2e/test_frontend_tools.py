"""Frontend tools in the browser: the agent calls a tool the client provides, the person answers on
its card, the agent follows up, and a reload shows the same. Against a small agent of our own
(tests/support/client_tool_agent.py) and the real pydantic-ai peer (tests/interop)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import Run
from agents_ui.sdk.agui.client_tools import DISMISSED
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support.client_tool_agent import ClientToolAgentServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def tool_agent() -> Iterator[ClientToolAgentServer]:
    server = ClientToolAgentServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def helper(live_url: str, tool_agent: ClientToolAgentServer) -> str:
    cache.clear()
    make_endpoint(slug="helper", name="Helper", base_url=tool_agent.url_for("offers"))
    return live_url


def ask(page: Page, base: str, text: str, slug: str = "helper"):
    open_agent(page, base, slug)
    send(page, text)
    wait_run(page)
    card = last_run(page).locator("[data-answer-state=awaiting]")
    expect(card).to_be_visible()
    return card


def at_phone_width(page: Page) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator(".workspace-side")).to_be_hidden()  # the details drawer slides away first


def expect_follow_up(page: Page, text: str) -> None:
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(text, timeout=TIMEOUT)


def test_a_question_is_answered_on_its_card_and_the_agent_follows_up(
    page: Page, helper: str, signed_in, screenshot
):
    signed_in()
    card = ask(page, helper, "please ask me where to start")
    expect(card).to_contain_text("Which city should the trip start from?")
    screenshot("frontend-tool-ask-user")
    card.get_by_label("Your answer").fill("Porto")
    card.get_by_role("button", name="Send answer").click()
    expect_follow_up(page, 'Thanks: {"answer": "Porto"}')
    first = page.locator("#transcript section.run").first
    expect(first.locator("[data-answer-state=answered] [data-answer]")).to_contain_text('"answer": "Porto"')
    expect(page.locator("[data-answer-state=awaiting]")).to_have_count(0)
    assert Run.objects.filter(request__kind="answer").count() == 1
    page.reload()
    expect(page.locator("[data-answer-state=answered] [data-answer]")).to_contain_text('"answer": "Porto"')
    expect(last_run(page).locator(".msg-assistant")).to_contain_text('Thanks: {"answer": "Porto"}')
    expect(page.locator("[data-answer-state=awaiting]")).to_have_count(0)


def test_a_form_is_checked_against_its_schema_before_it_goes(page: Page, helper: str, signed_in, screenshot):
    signed_in()
    card = ask(page, helper, "show me the booking form")
    expect(card).to_contain_text("Book a table")
    card.get_by_label("Name on the booking").fill("Ada")
    card.get_by_label("Guests").fill("40")
    card.get_by_label("Diet").select_option(label="vegan")
    card.get_by_label("Sit on the terrace").check()
    screenshot("frontend-tool-request-form")
    card.get_by_role("button", name="Send answer").click()
    expect(card.locator("[role=alert]")).to_contain_text("guests: 40 is greater than the maximum of 12")
    assert Run.objects.count() == 1
    card.get_by_label("Guests").fill("4")
    card.get_by_role("button", name="Send answer").click()
    expect_follow_up(page, '"guests": 4')
    expect(last_run(page).locator(".msg-assistant")).to_contain_text('"diet": "vegan"')
    expect(last_run(page).locator(".msg-assistant")).to_contain_text('"terrace": true')


def test_confirm_and_choose_answer_with_one_click(page: Page, helper: str, signed_in):
    signed_in()
    card = ask(page, helper, "confirm the booking")
    expect(card).to_contain_text("Book the table for 4 at 19:00?")
    card.get_by_role("button", name="Book it").click()
    expect_follow_up(page, 'Thanks: {"confirmed": true}')

    card = ask(page, helper, "choose a room")
    card.get_by_role("button", name="The hall").click()
    expect_follow_up(page, 'Thanks: {"choice": "hall"}')


def test_a_call_for_a_tool_the_client_does_not_know_is_answered_or_dismissed(
    page: Page, helper: str, signed_in
):
    signed_in()
    card = ask(page, helper, "what is the weather")
    expect(card).to_contain_text("lookup_weather")
    expect(card.locator("pre")).to_contain_text('"days": 3')
    card.get_by_label("Your answer").fill("{not json")
    card.get_by_label("Send as JSON").check()
    card.get_by_role("button", name="Send answer").click()
    expect(card.locator("[role=alert]")).to_contain_text("not valid JSON")
    card.get_by_label("Your answer").fill('{"confirmed": true}')
    card.get_by_role("button", name="Send answer").click()
    expect_follow_up(page, 'Thanks: {"confirmed": true}')

    card = ask(page, helper, "what is the weather again")
    card.get_by_role("button", name="Dismiss").click()
    expect_follow_up(page, f"Thanks: {DISMISSED}")
    page.reload()
    expect(page.locator("[data-answer-state=dismissed]")).to_contain_text("You dismissed this request.")


def test_an_unknown_tool_is_answered_with_its_arguments_as_edited(
    page: Page, helper: str, signed_in, screenshot
):
    signed_in()
    card = ask(page, helper, "plan the steps")
    expect(card).to_contain_text("generate_task_steps")
    draft = card.get_by_label("Draft")
    expect(draft).to_be_checked()
    screenshot("frontend-tool-unknown-steps")
    at_phone_width(page)
    screenshot("frontend-tool-unknown-steps-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    draft.uncheck()
    card.get_by_role("button", name="Send answer").click()
    sent = 'Thanks: {"steps": [{"description": "Draft", "status": "disabled"}]}'
    expect_follow_up(page, sent)
    page.reload()
    expect(page.locator("[data-answer-state=answered] [data-answer]")).to_contain_text('"status": "disabled"')
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(sent)


def test_an_agno_confirmation_is_approved_or_rejected_with_a_reason(
    page: Page, helper: str, signed_in, screenshot
):
    signed_in()
    card = ask(page, helper, "seek approval")
    expect(card).to_contain_text("delete_drafts")
    expect(card.locator("[data-confirm-convention=Agno]")).to_be_visible()
    expect(card.locator("details pre")).to_contain_text('"older_than_days": 30')
    screenshot("frontend-tool-agno-confirmation")
    at_phone_width(page)
    screenshot("frontend-tool-agno-confirmation-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    card.get_by_role("button", name="Approve").click()
    expect_follow_up(page, 'Thanks: {"accepted": true}')
    page.reload()
    expect(page.locator("[data-answer-state=answered] [data-answer]")).to_contain_text('"accepted": true')

    card = ask(page, helper, "seek approval again")
    card.get_by_label("Reason, if you reject").fill("Keep them a week")
    card.get_by_role("button", name="Reject").click()
    expect_follow_up(page, 'Thanks: {"accepted": false, "note": "Keep them a week"}')


def test_a_predictive_state_confirmation_is_answered_as_the_dojo_does(page: Page, helper: str, signed_in):
    signed_in()
    card = ask(page, helper, "review my changes")
    expect(card.locator(".client-tool-question")).to_have_text("Keep the changes the agent made?")
    card.get_by_role("button", name="No").click()
    expect_follow_up(page, 'Thanks: {"accepted": false, "steps": []}')


def test_agnos_questions_are_answered_with_its_selections(page: Page, helper: str, signed_in, screenshot):
    signed_in()
    card = ask(page, helper, "gather feedback")
    expect(card.locator("[data-shaped-form][data-convention=Agno]")).to_be_visible()
    screenshot("frontend-tool-agno-questions")
    card.get_by_label("Greek").check()
    card.get_by_label("Wine").check()
    card.get_by_role("button", name="Send answer").click()
    expect_follow_up(page, 'Thanks: {"selections": {"Which cuisine?": ["Greek"], "Which extras?": ["Wine"]}}')


@pytest.fixture
def declaring(live_url: str, tool_agent: ClientToolAgentServer) -> str:
    cache.clear()
    make_endpoint(slug="declaring", name="Declaring", base_url=tool_agent.url_for("declares"))
    return live_url


def test_a_declared_enum_is_chosen_on_the_card_and_a_tampered_choice_is_refused(
    page: Page, declaring: str, signed_in, screenshot
):
    signed_in()
    card = ask(page, declaring, "triage this", slug="declaring")
    priority = card.locator("fieldset[data-choice=schema]", has_text="Priority")
    expect(priority.get_by_label("high")).to_be_checked()
    expect(card.get_by_label("Site")).to_have_value('"Oslo"')
    screenshot("frontend-tool-unknown-choices")
    at_phone_width(page)
    screenshot("frontend-tool-unknown-choices-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    priority.get_by_label("critical").check()
    card.get_by_label("IT desk").check()
    card.get_by_label("customer").check()
    card.get_by_label("Site").select_option(label="Rome")
    # A value the form never offered (edited in the page) is refused, and what was chosen stays.
    card.get_by_label("Site").evaluate("select => { select.selectedOptions[0].value = '\"Atlantis\"'; }")
    card.get_by_role("button", name="Send answer").click()
    expect(card.locator("[role=alert]")).to_contain_text("Site: not one of the choices")
    expect(priority.get_by_label("critical")).to_be_checked()
    expect(page.locator("#transcript section.run")).to_have_count(1)
    card.get_by_label("Site").evaluate("select => { select.selectedOptions[0].value = '\"Rome\"'; }")
    card.get_by_role("button", name="Send answer").click()
    sent = (
        'Thanks: {"title": "Printer on fire", "priority": "critical", "team": "it", '
        '"labels": ["urgent", "customer"], "site": "Rome"}'
    )
    expect_follow_up(page, sent)
    page.reload()
    expect(page.locator("[data-answer-state=answered] [data-answer]")).to_contain_text(
        '"priority": "critical"'
    )


def test_a_todo_lists_statuses_are_chosen_per_item(page: Page, helper: str, signed_in, screenshot):
    signed_in()
    card = ask(page, helper, "update the todos")
    row = card.locator("fieldset[data-choice=convention]", has_text="Send invites")
    expect(row.get_by_label("pending")).to_be_checked()
    screenshot("frontend-tool-unknown-todos")
    at_phone_width(page)
    screenshot("frontend-tool-unknown-todos-phone")
    page.set_viewport_size({"width": 1280, "height": 800})
    row.get_by_label("in progress").check()
    card.get_by_role("button", name="Send answer").click()
    expect_follow_up(page, '{"content": "Send invites", "status": "in_progress"}')


def test_an_agent_that_declares_no_client_tools_is_not_offered_them(
    page: Page, live_url: str, tool_agent: ClientToolAgentServer, signed_in
):
    cache.clear()
    make_endpoint(slug="no-tools", name="No tools", base_url=tool_agent.url_for("refuses"))
    signed_in()
    open_agent(page, live_url, "no-tools")
    send(page, "please ask me")
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "I need the ask_user tool, which this client"
    )
    expect(page.locator("[data-client-tool]")).to_have_count(0)


# --- The real pydantic-ai peer ------------------------------------------------------------------


@pytest.fixture(scope="module")
def pydantic_ai_peer():
    from tests.interop.peers import PEERS, missing_reason, running

    reason = missing_reason(PEERS["pydantic-ai"])
    if reason:
        if os.environ.get("AGENTS_UI_INTEROP") == "1":
            pytest.fail(reason)
        pytest.skip(reason)
    with running(PEERS["pydantic-ai"]) as peer:
        yield peer


def test_pydantic_ai_asks_through_a_client_tool_and_follows_up_on_the_answer(
    page: Page, live_url: str, pydantic_ai_peer, signed_in
):
    cache.clear()
    make_endpoint(slug="pydantic-ai", name="pydantic-ai", base_url=pydantic_ai_peer.url())
    signed_in()
    card = ask(page, live_url, "plan the steps", slug="pydantic-ai")
    expect(card).to_contain_text("Which steps should I plan?")
    card.get_by_role("button", name="Review").click()
    expect_follow_up(page, 'Done: {"answer": "Review"}')
    page.reload()
    expect(page.locator("[data-answer-state=answered] [data-answer]")).to_contain_text('"answer": "Review"')
    expect(last_run(page).locator(".msg-assistant")).to_contain_text('Done: {"answer": "Review"}')
    expect(page.locator("[data-answer-state=awaiting]")).to_have_count(0)


def test_calls_made_together_go_to_the_agent_together(page: Page, helper: str, signed_in):
    signed_in()
    open_agent(page, helper, "helper")
    send(page, "ask me both")
    wait_run(page)
    cards = last_run(page).locator("[data-answer-state=awaiting]")
    expect(cards).to_have_count(2)
    question = last_run(page).locator("[data-client-tool=ask_user]")
    question.get_by_label("Your answer").fill("Porto")
    question.get_by_role("button", name="Send answer").click()
    expect(question.locator("[data-answer-kept]")).to_be_visible()
    assert Run.objects.count() == 1
    last_run(page).locator("[data-client-tool=confirm]").get_by_role("button", name="Book it").click()
    expect_follow_up(page, 'Thanks: {"answer": "Porto"} and {"confirmed": true}')
    first = page.locator("#transcript section.run").first
    expect(first.locator("[data-answer-state=answered]")).to_have_count(2)
    expect(first.locator("[data-answer-kept]")).to_have_count(0)

"""Real frameworks' AG-UI agents through the whole product, in the browser.

Each peer is a real AG-UI server built with its framework's own adapter over a scripted model
(tests/interop/<peer>/server.py), started on loopback by ``peer_server``; it is registered as an
endpoint and used through the real composer, as a person would. Every feature is checked live and
again after a reload. ``make interop`` runs this module with the report plugin
(tests/interop/report.py), which writes the compatibility table of docs/interop.md from the results.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Run
from tests.e2e.test_runs import TIMEOUT, last_run, send, wait_run
from tests.factories import make_endpoint
from tests.interop import common
from tests.interop.fixtures import peer_server

pytestmark = pytest.mark.e2e
__all__ = ["peer_server"]  # the fixture, imported so pytest finds it here

REFUND = common.refund_text(common.REFUND_ARGS["order_id"], common.REFUND_ARGS["amount"])
EDITED_ARGS = {"order_id": "A-1001", "amount": 20}
EDITED = common.refund_text(EDITED_ARGS["order_id"], EDITED_ARGS["amount"])


@dataclass(frozen=True)
class Framework:
    """A peer as the product sees it, and what differs between them."""

    peer: str
    endpoint: str = "default"
    # What the user reads when the model fails (Agent Framework hides the exception's text).
    failure: str = common.FAILURE
    # Whether the approval offers an edit (ADK's confirmation and Strands' take yes or no only).
    edits: bool = True
    subagents: bool = False
    # Why the framework has no cell in a row, where it does the thing its own way (test_interop_agno.py).
    no_reasoning: str = ""
    no_approval: str = ""
    no_frontend_tool: str = ""

    @property
    def id(self) -> str:
        return self.peer if self.endpoint == "default" else f"{self.peer}-{self.endpoint}"


FRAMEWORKS = [
    Framework("pydantic-ai"),
    Framework("pydantic-ai", "store"),
    Framework("langgraph", subagents=True),
    Framework("adk", edits=False),
    Framework("agent-framework", failure="An internal error has occurred while streaming events."),
    Framework("strands", edits=False),
    Framework(
        "agno",
        no_reasoning="Agno's AG-UI interface streams its reasoning agent's steps, not a model's reasoning",
        no_approval="Agno asks for a confirmation with a tool call, answered on its card (the Agno rows)",
        no_frontend_tool=(
            "Agno's own ask_user (UserFeedbackTools) keeps the name the product's generic tool has, "
            "and is answered with its form (the Agno rows)"
        ),
    ),
]


@pytest.fixture(params=FRAMEWORKS, ids=[f.id for f in FRAMEWORKS])
def agent(request, peer_server, live_url, signed_in) -> tuple[Framework, str]:
    """The peer registered as an endpoint, and the person signed in: (framework, workspace URL)."""
    framework: Framework = request.param
    url = peer_server(framework.peer).url(framework.endpoint)
    slug = f"interop-{framework.id}"
    make_endpoint(name=f"Interop {framework.id}", slug=slug, base_url=url)
    signed_in()
    return framework, f"{live_url}/agents/{slug}/"


def start(page: Page, url: str, text: str, status: str = "completed") -> None:
    page.goto(url)
    expect(page.locator("[data-composer]")).to_be_visible()
    send(page, text)
    wait_run(page, status)


def reload(page: Page) -> None:
    page.reload()
    expect(page.locator("#transcript section.run").first).to_be_visible()


def runs(page: Page):
    return page.locator("#transcript section.run")


def refund_card(page: Page, index: int = 0):
    return runs(page).nth(index).locator('[data-tool-call="issue_refund"]')


def no_sideways_scroll(page: Page) -> None:
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")


def test_text_and_a_second_message(page: Page, agent):
    _, url = agent
    start(page, url, "hello")
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("Hello! How can I help?")
    send(page, "hello again")
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    # The agent was sent the first answer: it counts it.
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "Hello again! I see 1 earlier answer(s)."
    )
    reload(page)
    expect(runs(page).nth(0).locator(".msg-assistant")).to_contain_text("Hello! How can I help?")
    expect(runs(page).nth(1).locator(".msg-assistant")).to_contain_text("I see 1 earlier answer(s).")


def test_reasoning(page: Page, agent):
    framework, url = agent
    if framework.no_reasoning:
        pytest.skip(framework.no_reasoning)
    start(page, url, "think about it")
    reasoning = last_run(page).locator(".reasoning .reasoning-text")
    expect(reasoning).to_contain_text("The user asked me to think.")
    expect(last_run(page).locator("[data-reasoning=encrypted]")).to_have_count(0)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("the answer is 42")
    explain = page.locator('#explain [data-explain="reasoning"]')
    expect(explain).not_to_contain_text("Hidden until a run shows it")
    reload(page)
    expect(page.locator(".reasoning .reasoning-text")).to_contain_text("The user asked me to think.")


def test_tool_call_and_result(page: Page, agent):
    _, url = agent
    start(page, url, "what is the weather in Paris?")
    card = last_run(page).locator('[data-tool-call="get_weather"]')
    expect(card.locator(".badge-ok")).to_have_text("done")
    expect(card).to_contain_text("Paris")
    expect(card).to_contain_text("sunny")
    reload(page)
    expect(page.locator('[data-tool-call="get_weather"] .badge-ok')).to_have_text("done")


def state_shown(page: Page) -> None:
    """The State panel draws the latest document as a tree (not only the raw JSON beside it): the
    plan's steps as a checklist, Ship marked done by the last run."""
    expect(page.locator("#state-panel")).to_be_visible()
    document = page.locator("#state-document")
    expect(document).not_to_contain_text("Nothing yet.")
    steps = document.locator('[data-state-key="steps"] [data-checklist] li')
    expect(steps).to_have_count(2)
    expect(steps.filter(has_text="Ship")).to_have_attribute("data-step-done", "true")
    expect(steps.filter(has_text="Draft")).to_have_attribute("data-step-done", "true")
    assert "Traceback" not in page.content() and "NoneType" not in page.content()


def test_state_live_and_after_a_reload(page: Page, agent):
    """After more than one run, each sending the state, as a person comes back to it: a reload, and a
    fresh visit of the conversation's address in a new page."""
    _, url = agent
    start(page, url, "update the state")
    state_shown(page)
    send(page, "update the state again")
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    state_shown(page)
    reload(page)
    state_shown(page)
    conversation_url = page.url
    assert "/c/" in conversation_url, conversation_url
    visit = page.context.new_page()
    try:
        visit.goto(conversation_url)
        expect(visit.locator("#transcript section.run")).to_have_count(2)
        state_shown(visit)
    finally:
        visit.close()


def ask_for_refund(page: Page, url: str):
    start(page, url, "refund my order A-1001", "interrupted")
    form = last_run(page).locator("form[data-approval-form]")
    expect(form.locator("legend")).to_contain_text("issue_refund")
    no_sideways_scroll(page)
    return form


def decided(page: Page, label: str, result: str | None, sent: dict | None = None) -> None:
    """The resume ran; the asking run's card has its result and no longer waits, after a reload too.
    ``sent``: the arguments the person edited, which the card shows (the agent's own as edited from)."""
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        card = refund_card(page)
        expect(card).to_have_count(1)
        expect(card).not_to_contain_text("waiting for the result")
        if result is not None:
            expect(card).to_contain_text(result)
        if sent is not None:
            expect(card.locator("[data-sent-arguments]")).to_contain_text(f'"amount": {sent["amount"]}')
            expect(card.locator("[data-sent-arguments]")).not_to_contain_text("42.5")
            expect(card.locator("[data-edited-from]")).to_contain_text('"amount": 42.5')
        expect(runs(page).nth(0).locator("[data-decided]")).to_contain_text(label)
        expect(runs(page).nth(0).locator(".run-status")).not_to_contain_text("Waiting for a decision")
        expect(refund_card(page, 1)).to_have_count(0)  # on its own run only


def confirm_card(page: Page):
    """Agent Framework asks through its own confirm_changes card too: the card alone decides."""
    card = last_run(page).locator("[data-client-tool=confirm_changes]")
    expect(card.locator("[data-confirms]")).to_contain_text("issue_refund")
    expect(last_run(page).locator("form[data-approval-form]")).to_have_count(0)
    return card


def test_approval_approve(page: Page, agent):
    framework, url = agent
    if framework.no_approval:
        pytest.skip(framework.no_approval)
    if framework.peer == "agent-framework":
        start(page, url, "refund my order A-1001", "interrupted")
        confirm_card(page).get_by_role("button", name="Yes", exact=True).click()
        decided(page, "Approved", REFUND)
        return
    form = ask_for_refund(page, url)
    form.get_by_role("button", name="Send decision").click()
    decided(page, "Approved", REFUND)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(REFUND)
    page.goto(page.url.split("/agents/")[0] + "/conversations/")
    expect(page.get_by_text("Waiting for your decision")).to_have_count(0)


def test_approval_reject(page: Page, agent):
    framework, url = agent
    if framework.no_approval:
        pytest.skip(framework.no_approval)
    if framework.peer == "agent-framework":
        start(page, url, "refund my order A-1001", "interrupted")
        confirm_card(page).get_by_role("button", name="No", exact=True).click()
    else:
        form = ask_for_refund(page, url)
        form.locator('input[value="reject"]').check()
        form.get_by_role("button", name="Send decision").click()
    decided(page, "Rejected", None)
    assert REFUND not in last_run(page).inner_text()
    resumed = Run.objects.filter(request__kind="resume").get()
    assert resumed.status == Run.Status.COMPLETED, resumed.error


def test_approval_edit(page: Page, agent):
    framework, url = agent
    if framework.no_approval:
        pytest.skip(framework.no_approval)
    if framework.peer == "agent-framework":
        start(page, url, "refund my order A-1001", "interrupted")
        card = confirm_card(page)
        card.locator("[data-confirm-edit] summary").click()
        card.locator("textarea").fill(json.dumps(EDITED_ARGS))
        card.get_by_role("button", name="Yes, with these arguments").click()
        decided(page, "Approved with edits", EDITED, sent=EDITED_ARGS)
        return
    form = ask_for_refund(page, url)
    edit = form.locator('input[value="edit"]')
    if not framework.edits:
        expect(edit).to_have_count(0)  # the agent takes yes or no: no edit is offered
        pytest.skip("the agent takes yes or no, no edited arguments")
    edit.check()
    form.locator("textarea").fill(json.dumps(EDITED_ARGS))
    form.get_by_role("button", name="Send decision").click()
    decided(page, "Approved with edits", EDITED, sent=EDITED_ARGS)


def test_run_error(page: Page, agent):
    framework, url = agent
    start(page, url, "please fail", "failed")
    expect(last_run(page).locator(".run-status .alert-error")).to_contain_text(framework.failure)
    reload(page)
    expect(last_run(page).locator(".run-status .alert-error")).to_contain_text(framework.failure)


def test_frontend_tool(page: Page, agent):
    """The agent asks through the product's own ``ask_user`` tool (offered in RunAgentInput.tools,
    taken up by the framework's own mechanism for client tools); the person answers on its card."""
    framework, url = agent
    if framework.no_frontend_tool:
        pytest.skip(framework.no_frontend_tool)
    start(page, url, "plan the steps")
    card = last_run(page).locator(f"[data-client-tool={common.ASK_TOOL}][data-answer-state=awaiting]")
    expect(card).to_contain_text(common.ASK_ARGS["question"])
    card.get_by_role("button", name="Review").click()
    expect(runs(page)).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    follow_up = 'Done: {"answer": "Review"}'
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        answered = runs(page).nth(0).locator(f"[data-client-tool={common.ASK_TOOL}]")
        expect(answered).to_have_attribute("data-answer-state", "answered")
        expect(answered.locator("[data-answer]")).to_contain_text('"answer": "Review"')
        expect(last_run(page).locator(".msg-assistant")).to_contain_text(follow_up)
        expect(page.locator("[data-answer-state=awaiting]")).to_have_count(0)
    resumed = Run.objects.filter(request__kind="answer").get()
    assert resumed.status == Run.Status.COMPLETED, resumed.error


def test_subagent(page: Page, agent):
    framework, url = agent
    if not framework.subagents:
        pytest.skip("no sub-agent scenario")
    start(page, url, "research the launch date")
    tree = last_run(page).locator(".subagent-tree")
    expect(tree).to_contain_text("researcher")
    expect(last_run(page).locator('[data-tool-call="task"]')).not_to_contain_text(re.compile(r"^\s*\{\}\s*$"))
    reload(page)
    expect(page.locator(".subagent-tree")).to_contain_text("researcher")


def test_adk_confirmation(page: Page, agent):
    framework, url = agent
    if framework.peer != "adk":
        pytest.skip("only ADK asks through a confirmation tool of its own")
    form = ask_for_refund(page, url)
    expect(form.locator("[data-arguments]")).to_contain_text("A-1001")
    expect(form.locator("legend")).not_to_contain_text("adk_request_confirmation")
    expect(last_run(page).locator("[data-confirms]")).to_contain_text("issue_refund")
    confirmation = last_run(page).locator('[data-tool-call="adk_request_confirmation"]')
    expect(confirmation.locator("[data-call-asking]")).to_have_text("waiting for a decision")
    confirmation.locator("summary").click()
    no_sideways_scroll(page)
    # Approved: ADK answers the confirmation inside the agent and sends no result for it; its card
    # shows the decision instead of waiting for a result, live and after a reload.
    form.get_by_role("button", name="Send decision").click()
    decided(page, "Approved", REFUND)
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        confirmation = runs(page).nth(0).locator('[data-tool-call="adk_request_confirmation"]')
        expect(confirmation).not_to_contain_text("waiting for")
        expect(confirmation.locator("[data-call-decision]")).to_have_text("approved")
        expect(refund_card(page).locator(".badge-ok")).to_have_text("done")


def test_agent_framework_confirm_changes(page: Page, agent):
    """Agent Framework's own frontend tool asks about the call its approval interrupt names: its
    confirm card decides that interrupt (the only answer the framework takes while it waits)."""
    framework, url = agent
    if framework.peer != "agent-framework":
        pytest.skip("only Agent Framework sends confirm_changes")
    start(page, url, "refund my order A-1001", "interrupted")
    card = last_run(page).locator("[data-client-tool=confirm_changes]")
    expect(card.locator("[data-confirms]")).to_contain_text("issue_refund")
    expect(card).to_contain_text("A-1001")
    expect(card).not_to_contain_text("waiting for the result")
    # One question, one way to answer it: the card, not an approval form as well.
    expect(last_run(page).locator("[data-approval-form]")).to_have_count(0)
    expect(last_run(page).get_by_role("button", name="Approve")).to_have_count(0)
    card.get_by_role("button", name="Yes", exact=True).click()
    decided(page, "Approved", REFUND)
    for look in ("live", "reloaded"):
        if look == "reloaded":
            reload(page)
        # The decision is recorded as the approval of the call the card asked about.
        record = runs(page).nth(0).locator(".approval-record")
        expect(record).to_have_count(1)
        expect(record).to_contain_text("Approved")
        expect(record).to_contain_text("issue_refund")
        card = runs(page).nth(0).locator("[data-client-tool=confirm_changes]")
        expect(card).to_have_attribute("data-answer-state", "answered")
        expect(card.locator("[data-decision]")).to_contain_text("Confirmed")
        expect(card.get_by_role("button", name="Yes", exact=True)).to_have_count(0)
        expect(last_run(page).locator(".msg-assistant")).to_contain_text(f"Done: {REFUND}")
    send(page, "hello")
    expect(runs(page)).to_have_count(3, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("Hello again!")

"""The inbox with real framework agents (tests/interop), in the browser, at desktop and phone width.

Two peers whose runs leave something waiting on the person, each its own way: LangGraph asks with an
AG-UI interrupt (an approval), Agno with a confirmation tool call the client answers (an answer). A
message is sent in the workspace; the header's count rises; the inbox lists the item with its agent,
what it asks and since when, through a reload too; it is decided right there (approved on one,
rejected with a reason on the other); the item says how, the count is back to none, and the
conversation shows the agent went on with the decision.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import ApprovalRecord, Run, WaitingItem
from tests.e2e.test_inbox import BADGE
from tests.e2e.test_interop import REFUND, decided, no_sideways_scroll, start
from tests.e2e.test_runs import TIMEOUT, last_run
from tests.factories import make_endpoint
from tests.interop.fixtures import peer_server

pytestmark = pytest.mark.e2e
__all__ = ["peer_server"]  # the fixture, imported so pytest finds it here

REASON = "Not this order."


@dataclass(frozen=True)
class Case:
    peer: str
    width: int
    status: str  # how the asking run ends
    kind: str  # the inbox item's kind
    label: str  # the item's kind as the inbox names it

    @property
    def id(self) -> str:
        return f"{self.peer}-{self.width}"


CASES = [
    Case("langgraph", 1280, "interrupted", WaitingItem.Kind.APPROVAL, "Asks for approval"),
    Case("agno", 390, "completed", WaitingItem.Kind.ANSWER, "Waits for an answer"),
]


@pytest.fixture(params=CASES, ids=[c.id for c in CASES])
def case(request, peer_server, live_url, signed_in, page: Page):
    """The peer registered as an endpoint, the person signed in at the case's width."""
    chosen: Case = request.param
    slug = f"interop-{chosen.peer}"
    make_endpoint(name=f"Interop {chosen.peer}", slug=slug, base_url=peer_server(chosen.peer).url())
    page.set_viewport_size({"width": chosen.width, "height": 900})
    user = signed_in()
    return chosen, user, f"{live_url}/agents/{slug}/", live_url


def shots(screenshot, name: str, width: int) -> None:
    screenshot(f"{name}{'-phone' if width < 600 else ''}")


def listed(page: Page, case: Case):
    """The inbox shows the one item: which agent, what, since when; nothing runs off the side."""
    group = page.locator("[data-inbox-run]")
    expect(group).to_have_count(1)
    expect(group.locator(".inbox-run-head")).to_contain_text(f"Interop {case.peer}")
    item = group.locator(f"[data-kind={case.kind}]")
    expect(item).to_have_count(1)
    expect(item.locator(".inbox-title")).to_have_text("issue_refund")
    expect(item.locator(".badge-warn")).to_have_text(case.label)
    expect(item).to_contain_text("Asked")
    expect(item.locator("time")).to_have_count(1)
    expect(page.locator(BADGE)).to_contain_text("1")
    no_sideways_scroll(page)
    return group


def test_a_real_agents_request_is_counted_listed_and_decided_from_the_inbox(page: Page, case, screenshot):
    chosen, user, url, live_url = case
    expect(page.locator(BADGE)).to_have_count(0)
    start(page, url, "refund my order A-1001", chosen.status)
    # The run's stream ends with the header's count.
    expect(page.locator(BADGE)).to_contain_text("1", timeout=TIMEOUT)
    conversation_url = page.url
    assert "/c/" in conversation_url, conversation_url

    page.goto(f"{live_url}/inbox/")
    listed(page, chosen)
    page.reload()
    group = listed(page, chosen)  # still there after a reload
    shots(screenshot, f"inbox-interop-{chosen.peer}", chosen.width)

    if chosen.peer == "langgraph":
        form = group.locator("form[data-approval-form]")
        expect(form.locator("legend")).to_contain_text("issue_refund")
        form.get_by_role("button", name="Send decision").click()
        expect(group.locator("[data-resolution]")).to_contain_text(
            f"Approved by {user.username}", timeout=TIMEOUT
        )
        assert ApprovalRecord.objects.filter(decided_by=user, decision="approved").count() == 1
    else:
        card = group.locator("[data-answer-state=awaiting]")
        expect(card.locator("[data-confirm-convention=Agno]")).to_be_visible()
        card.get_by_label("Reason, if you reject").fill(REASON)
        card.get_by_role("button", name="Reject").click()
        expect(group.locator("[data-resolution]")).to_contain_text("Answered at", timeout=TIMEOUT)
    expect(page.locator(BADGE)).to_have_count(0)
    no_sideways_scroll(page)
    shots(screenshot, f"inbox-interop-{chosen.peer}-decided", chosen.width)

    # The conversation: the agent went on with the decision.
    group.locator("[data-resolution] a").click()
    if chosen.peer == "langgraph":
        decided(page, "Approved", REFUND)
        expect(last_run(page).locator(".msg-assistant")).to_contain_text(REFUND)
    else:
        expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
        expect(last_run(page).locator(".msg-assistant")).to_contain_text(f"Done: {REASON}", timeout=TIMEOUT)
        asked = page.locator("#transcript section.run").nth(0).locator("[data-answer-state=answered]")
        expect(asked.locator("[data-answer]")).to_contain_text('"accepted": false')
        assert REFUND not in page.locator("#transcript").inner_text()
    expect(page.locator(BADGE)).to_have_count(0)
    no_sideways_scroll(page)
    shots(screenshot, f"inbox-interop-{chosen.peer}-conversation", chosen.width)
    resumed = Run.objects.order_by("-created_at").first()
    assert resumed.status == Run.Status.COMPLETED, resumed.error
    assert not WaitingItem.objects.open_for(user).exists()

    page.goto(f"{live_url}/inbox/")
    expect(page.locator("[data-inbox-empty]")).to_be_visible()
    expect(page.locator(BADGE)).to_have_count(0)

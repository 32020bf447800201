"""A confirmation the agent asked through a tool call of its own (Google ADK's
``adk_request_confirmation``) is answered by the person's decision on its interrupt.

ADK's AG-UI adapter (ag-ui-adk) turns the resume into the function response ADK expects
(``{"confirmed": bool}``) inside the agent: the resumed run sends a result for the confirmed call
(``issue_refund``) only, never for the confirmation call. Its card must say what was decided, not
wait for a result that never comes: in the decision's answer (live) and on a page load.
"""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async

from agents_ui.models import Run
from agents_ui.runs.history import transcript_of
from tests.support.waiting import settle
from tests.views.test_thread_pages import REFUND, run_sections, thread

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["thread"]  # the fixture, imported so pytest finds it here


def confirmation_card(html: str) -> str:
    card = r'<div class="tool-call" [^>]*data-tool-call="adk_request_confirmation".*?</details>'
    found = re.search(card, html, re.S)
    assert found, "no confirmation card"
    return found.group(0)


async def post_decision(person, choice: str) -> str:
    run = await Run.objects.order_by("-created_at").afirst()
    transcript = await sync_to_async(transcript_of)(run)
    chosen = {f"decision-{interrupt.id}": choice for interrupt in transcript.open_interrupts}
    response = await person.post(f"/runs/{run.pk}/decide/", chosen)
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    ("choice", "label", "captures"),
    [
        ("approve", "Approved", ("adk-refund-approve-1.sse", "adk-refund-approve-2.sse")),
        ("reject", "Rejected", ("adk-refund-reject-1.sse", "adk-refund-reject-2.sse")),
    ],
)
async def test_the_confirmation_card_shows_the_decision_live_and_on_load(thread, choice, label, captures):
    _, person, say, page = await thread(*captures)
    await say("refund my order A-1001")
    before = confirmation_card(await page())
    assert "waiting for the result" not in before  # asked, not a call the client must run
    assert "data-call-decision" not in before

    answer = await post_decision(person, choice)
    live = confirmation_card(answer)  # the decision's answer swaps the card in
    assert 'hx-swap-oob="true"' in live
    assert "waiting for the result" not in live
    assert re.search(rf"data-call-decision[^>]*>\s*{label.lower()}", live)
    await settle()

    html = await page()
    first = run_sections(html)[0]
    card = confirmation_card(first)
    assert "waiting for the result" not in card
    assert re.search(rf"data-call-decision[^>]*>\s*{label.lower()}", card)
    assert "asks to confirm" in card
    assert "waiting for the result" not in html
    if choice == "approve":
        assert REFUND in html

"""The protocol adapters behind the one decision form and the one download (agents_ui.runs.protocols)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.utils import timezone

from agents_ui.display.cards import ApprovalCard
from agents_ui.models import AgentEndpoint, ApprovalRecord, Conversation, Run
from agents_ui.runs.protocols import NotFound, Refused, adapter_for, task_file_id
from agents_ui.sdk import TranscriptBuilder
from agents_ui.sdk.external import policy as ext
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db(transaction=True)

REFUND = {"amount": 35, "currency": "EUR"}
# What the page showed of the request: its approval card (the arguments as the person saw them).
SHOWN = {
    "apr1": ApprovalCard(
        id="apr1",
        dom="apr-apr1",
        tool="refund",
        args=REFUND,
        args_json='{\n  "amount": 35,\n  "currency": "EUR"\n}',
        editable=True,
        in_place=True,
    )
}


@pytest.fixture
async def desk(fake_server):
    """An external agent that takes decisions on its approvals."""

    async def handler(exchange):
        if exchange.request.path.endswith("/approvals/apr1") and exchange.request.method == "POST":
            exchange.respond(200, {"approvalId": "apr1", "status": "resolved"})
        else:
            exchange.respond(404, {"error": {"code": "not_found", "message": "no"}})

    server = await fake_server(handler)

    def create():
        endpoint = make_endpoint(protocol="external", base_url=f"{server.url}/agent")
        user = make_user("ada")
        conversation = Conversation.objects.create(user=user, endpoint=endpoint, title="t")
        run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
        run.conversation = conversation
        return run, user

    run, user = await sync_to_async(create)()
    builder = TranscriptBuilder()
    builder.apply(
        ext.ApprovalRequested(
            approval_id="apr1", tool_call_id="c1", public_name="issue_refund", input=REFUND,
            expires_at=(timezone.now() + timedelta(minutes=5)).isoformat(),
        )
    )  # fmt: skip
    return server, run, user, builder.transcript


async def decide(desk, posted):
    _, run, user, transcript = desk
    return await adapter_for(run.conversation.endpoint).decide(run, transcript, SHOWN, {}, posted, user)


async def test_an_external_decision_follows_the_one_form_and_sends_the_edited_input(desk):
    server = desk[0]
    outcome = await decide(
        desk, {"decision-apr1": "approve", "edited-apr1": '{"amount": 30, "currency": "EUR"}'}
    )
    assert outcome.run is None and outcome.about == "apr1"  # the agent's own stream goes on
    sent = server.requests[-1].json()
    assert sent["decision"] == "approve" and sent["editedInput"] == {"amount": 30, "currency": "EUR"}
    record = await ApprovalRecord.objects.aget(request_id="apr1")
    assert record.decision == ApprovalRecord.Decision.APPROVED_WITH_EDITS


async def test_reject_is_sent_as_the_protocols_deny(desk):
    await decide(desk, {"decision-apr1": "reject", "edited-apr1": "not even json"})
    assert desk[0].requests[-1].json()["decision"] == "deny"
    assert (await ApprovalRecord.objects.aget()).decision == ApprovalRecord.Decision.REJECTED


@pytest.mark.parametrize(
    ("posted", "says"),
    [
        ({"decision-apr1": "maybe"}, "Choose approve or reject."),
        ({"decision-apr1": "approve", "edited-apr1": "{nope"}, "The edited input is not valid JSON"),
    ],
)
async def test_a_decision_that_cannot_be_sent_is_refused_on_its_card(desk, posted, says):
    with pytest.raises(Refused) as refused:
        await decide(desk, posted)
    assert refused.value.text.startswith(says) and refused.value.about == "apr1"
    assert desk[0].requests == [] and not await ApprovalRecord.objects.aexists()


async def test_a_decision_on_a_request_the_run_never_made_is_not_found(desk):
    with pytest.raises(NotFound):
        await decide(desk, {"decision-forged": "approve"})


async def test_a_protocol_without_a_thing_refuses_it():
    endpoint = AgentEndpoint(protocol="a2a")
    run = Run(conversation=Conversation(endpoint=endpoint))
    with pytest.raises(NotFound):
        await adapter_for(endpoint).decide(run, TranscriptBuilder().transcript, {}, {}, {}, None)
    with pytest.raises(NotFound):
        adapter_for(AgentEndpoint(protocol="external")).act(run, {})
    assert task_file_id("files", 0) == "files/0"

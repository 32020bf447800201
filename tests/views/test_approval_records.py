"""Approval records tell the truth: what the agent was given, who decided and when, what expired."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from agents_ui.decisions import UserAbilities, decide
from agents_ui.models import ApprovalRecord, Conversation, Run
from agents_ui.sdk import SseParser, TranscriptBuilder, fold, parse_event
from agents_ui.sdk.external import policy as ext
from agents_ui.views.run_render import RunView
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

REFUND = {"amount": 35, "currency": "EUR"}


@pytest.fixture
def refund():
    user = make_user("ada")
    conversation = Conversation.objects.create(
        user=user, endpoint=make_endpoint(protocol="external"), title="t"
    )
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
    run.conversation = conversation
    builder = TranscriptBuilder()
    return user, run, builder


def ask(builder, expires_at):
    builder.apply(
        ext.ApprovalRequested(
            approval_id="apr1", tool_call_id="c1", public_name="issue_refund", input=REFUND,
            side_effect_class="financial", expires_at=expires_at,
        )
    )  # fmt: skip


def approvals_html(run, builder, decided=None) -> str:
    plan = decide(user=UserAbilities(can_approve=True, can_upload=True, can_view_reasoning=True))
    view = RunView(run, builder.transcript, plan, decided=decided or {})
    return render_to_string("agents_ui/run.html#approvals", view.context())


def test_an_edited_approval_shows_the_arguments_sent_and_who_decided_when(refund):
    user, run, builder = refund
    ask(builder, (timezone.now() + timedelta(minutes=5)).isoformat())
    builder.apply(ext.ApprovalResolved(approval_id="apr1", decision="approve"))
    record = ApprovalRecord.objects.create(
        run=run, request_id="apr1", tool_name="issue_refund", arguments=REFUND,
        decision="approved_with_edits", edited_arguments={"amount": 30, "currency": "EUR"}, decided_by=user,
    )  # fmt: skip
    html = approvals_html(run, builder, {"apr1": record})
    sent = html.split("data-sent>")[1].split("</pre>")[0]
    assert "&quot;amount&quot;: 30" in sent and "35" not in sent
    assert "Approved with edits" in html and "by ada" in html and "<time datetime=" in html
    assert "&quot;amount&quot;: 35" in html.split("data-asked>")[1]  # what it first asked for, one click away
    assert "Deny" not in html and "<form" not in html


def test_an_expired_request_says_expired_not_deny(refund):
    _, run, builder = refund
    ask(builder, (timezone.now() - timedelta(seconds=1)).isoformat())
    builder.apply(ext.ApprovalResolved(approval_id="apr1", decision="deny"))
    html = approvals_html(run, builder)
    assert "Expired" in html and "nobody decided before" in html
    assert "Deny" not in html and "Rejected" not in html


def test_a_stopped_runs_request_stops_counting_down(refund):
    _, run, builder = refund
    ask(builder, (timezone.now() + timedelta(minutes=5)).isoformat())
    assert "data-expires-at" in approvals_html(run, builder)
    run.status = Run.Status.CANCELLED
    html = approvals_html(run, builder)
    assert "data-expires-at" not in html and "the run ended before anyone decided" in html
    assert "<form" not in html


def test_agui_records_use_the_same_words_and_show_what_was_sent(refund):
    user, run, builder = refund
    record = ApprovalRecord.objects.create(
        run=run, request_id="int1", tool_name="transfer", arguments={"amount": 120},
        decision="approved_with_edits", edited_arguments={"amount": 100}, decided_by=user,
    )  # fmt: skip
    html = approvals_html(run, builder, {"int1": record})
    assert "Approved with edits" in html and "&quot;amount&quot;: 100" in html.split("data-sent>")[1]
    assert 'data-decided="int1"' in html


def test_an_external_decision_is_recorded_once(refund):
    user, run, builder = refund
    ask(builder, (timezone.now() + timedelta(minutes=5)).isoformat())
    builder.apply(ext.ApprovalResolved(approval_id="apr1", decision="deny"))
    record = ApprovalRecord.objects.create(
        run=run, request_id="apr1", tool_name="issue_refund", arguments=REFUND, decision="rejected",
        decided_by=user,
    )  # fmt: skip
    html = approvals_html(run, builder, {"apr1": record})
    assert html.count("data-decided=") == 1 and "Rejected" in html and "data-sent" not in html


INTEROP = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
ASKED = {"order_id": "A-1001", "amount": 42.5}
EDITED = {"order_id": "A-1001", "amount": 20}


def refund_card(run: Run, decided: dict) -> str:
    """The refund's tool card as the run that asked for it shows it (pydantic-ai's capture)."""
    parser = SseParser()
    path = INTEROP / "pydantic-ai-refund-edit-1.sse"
    transcript = fold([parse_event(frame.data) for frame in parser.feed(path.read_bytes())])
    plan = decide(user=UserAbilities(can_approve=True, can_upload=True, can_view_reasoning=True))
    view = RunView(run, transcript, plan, decided=decided)
    return render_to_string(
        "agents_ui/run.html#tool-call", view.context(c=view.call_view(transcript.tool_calls["call_refund"]))
    )


def test_a_tool_card_shows_the_arguments_sent_after_an_edit_and_what_was_first_asked(refund):
    user, run, _ = refund
    assert "data-edited-from" not in refund_card(run, {})
    record = ApprovalRecord.objects.create(
        run=run, request_id="int-call_refund", tool_name="issue_refund", arguments=ASKED,
        decision="approved_with_edits", edited_arguments=EDITED, decided_by=user,
    )  # fmt: skip
    html = refund_card(run, {"int-call_refund": record})
    sent = html.split("data-sent-arguments>")[1].split("</pre>")[0]
    assert "&quot;amount&quot;: 20" in sent and "42.5" not in sent
    assert "42.5" in html.split("data-edited-from>")[1].split("</p>")[0]


def test_a_tool_card_approved_as_asked_shows_its_own_arguments(refund):
    user, run, _ = refund
    record = ApprovalRecord.objects.create(
        run=run, request_id="int-call_refund", tool_name="issue_refund", arguments=ASKED,
        decision="approved", decided_by=user,
    )  # fmt: skip
    html = refund_card(run, {"int-call_refund": record})
    assert "data-edited-from" not in html and "&quot;amount&quot;: 42.5" in html


def test_when_a_request_expires_is_said_in_words_not_as_a_raw_timestamp(refund):
    _, run, builder = refund
    ask(builder, "2031-05-04T10:20:30.123456Z")
    html = approvals_html(run, builder)
    assert "Expires <time" in html and ">at 10:20:30 UTC</time>" in html
    assert ">2031-05-04T10:20:30.123456Z<" not in html  # kept only for the machine, in datetime=

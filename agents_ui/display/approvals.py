"""A run's approval requests as one list of typed cards, whatever protocol asked them, and the
forms that decide the open ones.

An AG-UI interrupt is answered by a new run that resumes the thread, so one form decides all the
run's open interrupts at once; an external agent's request is decided while its stream waits, one
form each. Both post the same fields to `runs/<run_id>/decide/`: `decision-<id>` (approve, reject
or edit) and `edited-<id>` (the edited arguments, JSON).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.utils import timezone

from agents_ui.display.cards import ApprovalCard, ApprovalForm, DecisionCard
from agents_ui.display.values import confirmed_call, dom_id, plain_arguments, pretty_json
from agents_ui.runs.resume import answer_prefix, resume_shape

if TYPE_CHECKING:
    from agents_ui.display.run_view import RunView


def past(moment: str | None) -> bool:
    """An agent's ISO 8601 time is now or before (False when it is not one)."""
    if not moment:
        return False
    try:
        when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (when if when.tzinfo else when.replace(tzinfo=UTC)) <= timezone.now()


def decision_card(record: Any) -> DecisionCard:
    """A recorded decision as the page says it: who, when, and the arguments the agent was given."""
    edited = record.edited_arguments is not None
    rejected = record.decision == record.Decision.REJECTED
    return DecisionCard(
        label=record.get_decision_display(),
        tone="bad" if rejected else "ok",
        tool=record.tool_name,
        request_id=record.request_id,
        by=record.decided_by.get_username() if record.decided_by else "a deleted user",
        at=record.decided_at,
        sent="" if rejected else pretty_json(record.edited_arguments if edited else record.arguments),
        asked=pretty_json(record.arguments) if edited else "",
    )


def approval_cards(view: RunView) -> list[ApprovalCard]:
    """Every request of the run: those decided first, then those waiting, each in the order asked."""
    external = {approval.id for approval in view.transcript.in_run_approvals}
    decided = [
        _decided_interrupt(record) for record in view.decided.values() if record.request_id not in external
    ]
    in_run = [_in_run_card(view, approval) for approval in view.transcript.in_run_approvals]
    return decided + _interrupts(view) + in_run


def approval_forms(view: RunView) -> list[ApprovalForm]:
    """The forms of the run's open requests; not one a confirmation card decides (the person sees one
    way to answer one question)."""
    card = view.confirmed_by_card()
    cards = approval_cards(view)
    resume = [a for a in cards if a.open and not a.in_place and a.id != card]
    forms = [ApprovalForm(resume, in_place=False, errors_id=f"{view.dom}-decision-errors")] if resume else []
    for request in cards:
        if request.open and request.in_place:
            forms.append(ApprovalForm([request], in_place=True, errors_id=f"{request.dom}-errors"))
    return forms


def _decided_interrupt(record: Any) -> ApprovalCard:
    decision = decision_card(record)
    return ApprovalCard(
        id=record.request_id,
        dom=dom_id("int", record.request_id),
        tool=record.tool_name,
        args=record.arguments,
        args_json=pretty_json(record.arguments),
        editable=False,
        in_place=False,
        record=decision,
    )


def _interrupts(view: RunView) -> list[ApprovalCard]:
    """AG-UI: the run's open interrupts not decided yet, with the tool call each one is about."""
    found = []
    for interrupt in view.transcript.open_interrupts:
        if interrupt.id in view.decided:
            continue
        call = view.transcript.tool_calls.get(interrupt.tool_call_id or "")
        schema = interrupt.response_schema or {}
        metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
        tool = call.name if call else ""
        args = call.args if call and call.args is not None else {}
        original = confirmed_call(tool, args)
        if original:  # a confirmation tool wrapping the call it asks about: show that call
            tool, args = original
        info = view.tool_info(tool)
        # What the agent's schema takes: edited arguments or not, a form beside yes or no.
        shape = resume_shape(schema)
        edited_schema = (schema.get("properties") or {}).get("editedArgs")
        expired = past(interrupt.expires_at)
        args_json = pretty_json(args)
        found.append(
            ApprovalCard(
                id=interrupt.id,
                dom=dom_id("int", interrupt.id),
                tool=tool,
                args=args,
                args_json=args_json,
                editable=view.plan["approvals"].details.can_edit(schema) and shape.edits,
                in_place=False,
                reason=interrupt.reason,
                message=interrupt.message,
                args_list=plain_arguments(args),
                expires_at=interrupt.expires_at,
                expired=expired,
                side_effect_class=metadata.get("sideEffectClass") or info.get("side_effect_class"),
                idempotency=metadata.get("idempotency") or info.get("idempotency"),
                edit_schema=edited_schema if isinstance(edited_schema, dict) else None,
                fields=shape.fields,
                field_prefix=answer_prefix(interrupt.id),
                answer_problem=shape.problem,
                record=DecisionCard(
                    label="Expired",
                    tone="warn",
                    tool=tool or interrupt.reason,
                    request_id=interrupt.id,
                    expired_at=interrupt.expires_at,
                    asked=args_json,
                )
                if expired
                else None,
            )
        )
    return found


def _in_run_card(view: RunView, approval: Any) -> ApprovalCard:
    """An external agent's request (pending or resolved), decided while its stream waits."""
    info = view.tool_info(approval.name or "")
    schema = info.get("schema")
    return ApprovalCard(
        id=approval.id,
        dom=dom_id("apr", approval.id),
        tool=approval.name or "",
        args=approval.input or {},
        args_json=pretty_json(approval.input or {}),
        editable=view.plan["approvals"].details.can_edit(),
        in_place=True,
        expires_at=approval.expires_at,
        side_effect_class=approval.side_effect_class or info.get("side_effect_class"),
        idempotency=info.get("idempotency"),
        edit_schema=schema if isinstance(schema, dict) else None,
        record=None if approval.pending else _in_run_record(view, approval),
        stale=approval.pending and not view.counting_down,
    )


def _in_run_record(view: RunView, approval: Any) -> DecisionCard:
    """An external agent's resolved request, in the same words as an AG-UI decision."""
    record = view.decided.get(approval.id)
    if record is not None:
        return decision_card(record)
    expired = approval.decision != "approve" and past(approval.expires_at)
    label = "Expired" if expired else "Approved" if approval.decision == "approve" else "Rejected"
    return DecisionCard(
        label=label,
        tone="warn" if expired else "ok" if approval.decision == "approve" else "bad",
        tool=approval.name or "",
        request_id=approval.id,
        expired_at=approval.expires_at if expired else None,
        by="" if expired else "someone outside this product",
        asked=pretty_json(approval.input or {}),
    )

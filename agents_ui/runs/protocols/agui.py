"""AG-UI: every run is sent the whole thread (runs/inputs.agui_input); a decision, a tool call's
answer and an action on a surface each go in a new run of the thread (docs/PROTOCOLS.md 1)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Container, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from ag_ui import core as ag
from ag_ui.core import Tool
from asgiref.sync import sync_to_async
from django.db import transaction
from django.utils import timezone

from agents_ui.capabilities import read_agui
from agents_ui.decisions import decide as decide_plan
from agents_ui.endpoints.memo import Memo
from agents_ui.models import ApprovalRecord, CapabilitySnapshot, Run
from agents_ui.runs.inputs import RunRequest, ToolAnswer, agui_input
from agents_ui.runs.protocols.base import Decided, ProtocolAdapter, Refused, RunContext, action_run
from agents_ui.runs.resume import decided_payload
from agents_ui.runs.turns import next_run
from agents_ui.sdk import validate_against_async
from agents_ui.sdk.agui.client_tools import CLIENT_TOOLS
from agents_ui.sdk.transcript import Transcript


class AgUiAdapter(ProtocolAdapter):
    async def events(self, agent: Any, run: Run, context: RunContext) -> AsyncIterator[Any]:
        run_input = await sync_to_async(agui_input)(
            run, context.earlier, send_state=context.send_state, offer_a2ui=context.offer_a2ui
        )
        tools = await offered_client_tools(run)
        # The person's answers this run carries, as results in its transcript and log first: agents
        # do not echo a client tool's result, and the call's card shows the answer live and after a
        # reload.
        for event in answer_events(run):
            yield event
        frames = agent.run_frames(
            run_input.model_copy(update={"tools": tools}),
            stream=context.stream,
            resume=context.resume,
            warnings=context.warnings,
        )
        try:
            async for item in frames:
                yield item
        finally:
            await frames.aclose()

    async def decide(
        self, run: Run, transcript: Transcript, shown: Mapping[str, Any],
        decided: Container[str], posted: Mapping[str, str], user: Any,
    ) -> Decided:  # fmt: skip
        """One new run on the same thread whose resume answers every open interrupt at once."""
        open_interrupts = [i for i in transcript.open_interrupts if i.id not in decided]
        if not open_interrupts:
            raise Refused("This request was already decided.")
        resume, records = [], []
        for interrupt in open_interrupts:
            choice = posted.get(f"decision-{interrupt.id}")
            info = shown.get(interrupt.id)
            if choice not in ("approve", "reject", "edit"):  # never a decision nobody chose
                raise Refused("Choose approve or reject for each request.")
            if interrupt.expires_at and expired(interrupt.expires_at):
                raise Refused("This request expired: the agent no longer waits for it.")
            if choice == "reject":
                decision, edited = ApprovalRecord.Decision.REJECTED, None
            elif choice == "edit" and info is not None and info.editable:
                try:
                    edited = json.loads(posted.get(f"edited-{interrupt.id}") or "")
                except (ValueError, RecursionError) as exc:
                    raise Refused(f"The edited arguments are not valid JSON: {why(exc)}") from None
                problem = await schema_problem(edited, info.edit_schema)
                if problem:
                    raise Refused(f"The edited arguments do not fit: {problem}")
                decision = ApprovalRecord.Decision.APPROVED_WITH_EDITS
            else:
                decision, edited = ApprovalRecord.Decision.APPROVED, None
            # Written as the interrupt's responseSchema asks, and checked against it (runs/resume.py).
            payload, problem = await decided_payload(interrupt, decision, edited, posted)
            if problem:
                raise Refused(problem)
            resume.append({"interruptId": interrupt.id, "status": "resolved", "payload": payload})
            records.append(
                ApprovalRecord(
                    run=run, request_id=interrupt.id, tool_name=(info.tool if info else "")[:200],
                    arguments=(info.args if info else None) or {}, decision=decision, edited_arguments=edited,
                    decided_by=user,
                )
            )  # fmt: skip
        # IntegrityError (decided at the same instant elsewhere) goes to the caller.
        new_run = await sync_to_async(_record_and_resume, thread_sensitive=True)(run, records, resume)
        return Decided(new_run)

    def answer_tools(self, run: Run, answers: Sequence[dict[str, Any]]) -> Run:
        request = RunRequest(kind="answer", answers=tuple(answers)).as_json()
        return next_run(run.conversation, request, after=run)

    def act(self, run: Run, action: dict[str, Any]) -> Run:
        # Read by agui_input as forwardedProps.a2uiAction, as AG-UI's A2UI middleware expects it.
        return action_run(run, action)


ADAPTER = AgUiAdapter()


def _record_and_resume(run: Run, records: list[ApprovalRecord], resume: list[dict[str, Any]]) -> Run:
    with transaction.atomic():
        ApprovalRecord.objects.bulk_create(records)
        return next_run(run.conversation, RunRequest(kind="resume", resume=tuple(resume)).as_json())


def answer_events(run: Run) -> list[ag.ToolCallResultEvent]:
    """The answers a run carries (Run.request["answers"]) as tool results."""
    return [
        ag.ToolCallResultEvent(
            message_id=answer.id, tool_call_id=answer.tool_call_id, content=answer.content, role="tool"
        )
        for answer in (ToolAnswer.from_json(data) for data in (run.request or {}).get("answers") or ())
    ]


async def offered_client_tools(run: Run) -> list[Tool]:
    """The tools a run offers in ``RunAgentInput.tools``: the product's generic UI tools (ask, form,
    confirm, choose) where the plan offers them (`Plan.offers_frontend_tools`), decided from the
    agent's last stored declaration: a run never waits for the agent to be discovered again. The
    decision is remembered by the declaration's hash: a run reads which declaration is the last,
    and only a declaration not seen before is read whole and decided (off the event loop)."""
    latest = (
        CapabilitySnapshot.objects.filter(
            endpoint_id=run.conversation.endpoint_id, status=CapabilitySnapshot.Status.DECLARED
        )
        .order_by("-last_seen_at")
        .values_list("pk", "content_hash")
    )
    found = await latest.afirst()
    offers = _OFFERS_FRONTEND_TOOLS.get(found[1]) if found else None
    if offers is None:
        offers = await sync_to_async(_offers_frontend_tools)(found[0] if found else None)
        if found:
            _OFFERS_FRONTEND_TOOLS.put(found[1], offers)
    return list(CLIENT_TOOLS) if offers else []


# A declaration's hash (of its whole content) -> whether its plan offers the frontend tools.
_OFFERS_FRONTEND_TOOLS = Memo("offers frontend tools", size=256)


def _offers_frontend_tools(snapshot_id: Any) -> bool:
    declaration = (
        CapabilitySnapshot.objects.filter(pk=snapshot_id).values_list("payload", flat=True).first()
        if snapshot_id is not None
        else None
    )
    return decide_plan(profile=read_agui(declaration)).offers_frontend_tools


async def schema_problem(value: Any, schema: Mapping[str, Any] | None) -> str:
    """What is wrong with edited arguments for the agent's schema, "" when nothing.

    The schema is the agent's: it is checked by the SDK's bounded validator, off the event loop,
    so no reference it names is fetched and no pattern it holds can stall the server.
    """
    if not schema:
        return "" if isinstance(value, dict) else "arguments must be a JSON object"
    return "; ".join(await validate_against_async(value, schema))


def why(exc: Exception) -> str:
    return "it is nested too deeply" if isinstance(exc, RecursionError) else str(exc)


def expired(expires_at: str) -> bool:
    try:
        moment = datetime.fromisoformat(expires_at.replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment <= timezone.now()

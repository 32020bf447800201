"""A conversation's finished turns written as the product keeps them (a message, a run, its event
log), for tests of pages that read a thread back without an agent to talk to."""

from __future__ import annotations

import json

from ag_ui.core import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from agents_ui.models import Conversation, Message, Run, RunEvent
from agents_ui.runs.event_log import event_record


def say(
    conversation: Conversation, question: str, answer: str, *, tool: str = "", status=Run.Status.COMPLETED
):
    """A finished turn as the event log keeps it: the person's message, the agent's answer."""
    message = Message.objects.create(conversation=conversation, role="user", content=question)
    run = Run.objects.create(
        conversation=conversation, status=status, request={"kind": "message", "message_id": message.pk}
    )
    events = [RunStartedEvent(thread_id="t", run_id=str(run.pk))]
    if tool:
        events += [
            ToolCallStartEvent(tool_call_id=f"call-{run.pk}", tool_call_name=tool),
            ToolCallArgsEvent(tool_call_id=f"call-{run.pk}", delta='{"q": 1}'),
            ToolCallEndEvent(tool_call_id=f"call-{run.pk}"),
            ToolCallResultEvent(message_id=f"r-{run.pk}", tool_call_id=f"call-{run.pk}", content="42"),
        ]
    mid = f"m-{run.pk}"
    events += [
        TextMessageStartEvent(message_id=mid, role="assistant"),
        TextMessageContentEvent(message_id=mid, delta=answer),
        TextMessageEndEvent(message_id=mid),
    ]
    if status != Run.Status.RUNNING:
        events.append(RunFinishedEvent(thread_id="t", run_id=str(run.pk)))
    for seq, event in enumerate(events, start=1):
        kind, payload = event_record(event)
        RunEvent.objects.create(run=run, seq=seq, type=kind, payload=json.loads(payload))
    return run

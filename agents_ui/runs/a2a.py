"""A run of an A2A agent: the person's message sent as an A2A message, the task's updates read back.

The conversation's context id (kept as `Conversation.remote_id`) keeps its tasks together; a task
left waiting for the person (input-required, auth-required) is continued by the next message, which
carries its task id. Stopping the run (Stop, or the run's bounds) cancels a task still at work with
tasks/cancel. The card a run is sent by is the last one stored for the endpoint: a run never waits
for the agent to be discovered again.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Sequence

from agents_ui.models import Attachment, CapabilitySnapshot, Conversation, Message, Run
from agents_ui.sdk import (
    AgentError,
    AgentUnreachableError,
    ProtocolError,
    RunTooLargeError,
    UnsupportedCapabilityError,
)
from agents_ui.sdk.a2a import A2AAgent, parse_card, pb
from agents_ui.sdk.transcript import Transcript

logger = logging.getLogger(__name__)

# How long Stop waits for the agent to confirm the cancel.
CANCEL_SECONDS = 5.0


async def stored_card(run: Run) -> pb.AgentCard:
    payload = await (
        CapabilitySnapshot.objects.filter(
            endpoint_id=run.conversation.endpoint_id, status=CapabilitySnapshot.Status.DECLARED
        )
        .order_by("-last_seen_at")
        .values_list("payload", flat=True)
        .afirst()
    )
    if not isinstance(payload, dict):
        raise UnsupportedCapabilityError(
            "The agent's card could not be read, so there is nothing to send the message by.",
            capability="an Agent Card",
        )
    return parse_card(payload)


def open_task(earlier: Sequence[Transcript]) -> str:
    """The task the last run left waiting for the person, if any: the answer continues it."""
    for transcript in reversed(earlier):
        task = transcript.task
        if task is not None and task.task_id:
            return task.task_id if task.waiting else ""
    return ""


async def outgoing_message(run: Run, task_id: str) -> pb.Message:
    request = run.request or {}
    message = await Message.objects.aget(pk=request["message_id"])
    parts = [pb.Part(text=message.content)] if message.content else []
    async for attachment in Attachment.objects.filter(message=message):
        parts.append(file_part(attachment.name, attachment.mime_type, bytes(attachment.data)))
    skill = request.get("skill") or ""
    outgoing = pb.Message(
        message_id=str(uuid.uuid4()),
        role=pb.ROLE_USER,
        context_id=run.conversation.remote_id or "",
        task_id=task_id,
        parts=parts,
    )
    if skill:
        outgoing.metadata.update({"skillId": skill})
    return outgoing


def file_part(name: str, mime_type: str, data: bytes) -> pb.Part:
    """A file as a part. A text file goes as text, named and typed (every A2A 1.0 part may carry a
    filename and a media type): an agent whose input mode is text/plain reads text parts."""
    if mime_type.split(";")[0].strip().lower() == "text/plain":
        try:
            return pb.Part(text=data.decode("utf-8"), filename=name, media_type="text/plain")
        except UnicodeDecodeError:
            pass
    return pb.Part(raw=data, filename=name, media_type=mime_type)


async def a2a_events(
    agent: A2AAgent, run: Run, earlier: Sequence[Transcript], *, stream: bool
) -> AsyncIterator[pb.StreamResponse]:
    """Send the run's message and yield the agent's answer. A streamed answer cut before the task
    ended is followed again once (SubscribeToTask); a task still working when the run is stopped
    is canceled."""
    card = await stored_card(run)
    message = await outgoing_message(run, open_task(earlier))
    conversation = run.conversation
    seen = {"task_id": message.task_id, "finished": False}

    async def follow(events: AsyncIterator[pb.StreamResponse]) -> AsyncIterator[pb.StreamResponse]:
        async for event in events:
            task_id, context_id, state = _ids(event)
            seen["task_id"] = task_id or seen["task_id"]
            if context_id and context_id != conversation.remote_id:
                conversation.remote_id = context_id[:200]
                await Conversation.objects.filter(pk=conversation.pk).aupdate(
                    remote_id=conversation.remote_id
                )
            seen["finished"] = seen["finished"] or state in _ENDS
            yield event

    try:
        try:
            async for event in follow(agent.send(card, message, stream=stream)):
                yield event
        except (AgentUnreachableError, ProtocolError) as exc:
            cut = (
                stream and seen["task_id"] and not seen["finished"] and not isinstance(exc, RunTooLargeError)
            )
            if not cut:
                raise
            logger.info("the stream of A2A task %s was cut (%s): following it again", seen["task_id"], exc)
            async for event in follow(agent.subscribe(card, seen["task_id"])):
                yield event
        seen["finished"] = True
    finally:
        if not seen["finished"] and seen["task_id"]:
            await _cancel(agent, card, seen["task_id"])


_ENDS = frozenset(
    {
        pb.TASK_STATE_COMPLETED,
        pb.TASK_STATE_FAILED,
        pb.TASK_STATE_CANCELED,
        pb.TASK_STATE_REJECTED,
        pb.TASK_STATE_INPUT_REQUIRED,
        pb.TASK_STATE_AUTH_REQUIRED,
    }
)


def _ids(event: pb.StreamResponse) -> tuple[str, str, int]:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.id, event.task.context_id, event.task.status.state
    if kind == "status_update":
        update = event.status_update
        return update.task_id, update.context_id, update.status.state
    if kind == "artifact_update":
        return event.artifact_update.task_id, event.artifact_update.context_id, 0
    if kind == "message":
        # A message answered alone ends the turn: nothing is left to cancel.
        return event.message.task_id, event.message.context_id, pb.TASK_STATE_COMPLETED
    return "", "", 0


async def _cancel(agent: A2AAgent, card: pb.AgentCard, task_id: str) -> None:
    try:
        await asyncio.shield(asyncio.wait_for(agent.cancel(card, task_id), timeout=CANCEL_SECONDS))
    except (AgentError, TimeoutError, asyncio.CancelledError) as exc:
        logger.info("cancelling A2A task %s did not complete: %s", task_id, exc)

"""A run of an A2A agent: the person's message sent as an A2A message, the task's updates read back.

The conversation's context id (kept as `Conversation.remote_id`) keeps its tasks together; a task
left waiting for the person (input-required, auth-required) is continued by the next message, which
carries its task id. Stopping the run (Stop, or the run's bounds) cancels a task still at work with
tasks/cancel. The card a run is sent by is the last one stored for the endpoint: a run never waits
for the agent to be discovered again.

An agent whose card declares A2UI's extension (and the plan offers generative UI) is asked to use
it: the message activates the extension and names the catalogue this product renders
(`a2uiClientCapabilities` in its metadata); a person's action on a surface goes back as a message of
one A2UI DataPart, in the same context and task (docs/PROTOCOLS.md 3).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Sequence
from typing import Any

from agents_ui.models import Attachment, CapabilitySnapshot, Conversation, Message, Run
from agents_ui.runs import tracing
from agents_ui.sdk import (
    AgentError,
    AgentUnreachableError,
    ProtocolError,
    RunTooLargeError,
    UnsupportedCapabilityError,
    a2ui,
)
from agents_ui.sdk.a2a.client import A2AAgent, parse_card, pb
from agents_ui.sdk.transcript import Transcript

logger = logging.getLogger(__name__)

# What a run's request holds when it takes a person's action on a surface (display/activities.py).
ACTION_KEY = "a2ui_action"

# How long Stop waits for the agent to confirm the cancel.
CANCEL_SECONDS = 5.0


async def stored_card(run: Run) -> pb.AgentCard:
    """The last declared card (the extended one when it was read); none while the latest answer is
    a card the admin requires signed that is not."""
    Status = CapabilitySnapshot.Status
    found = (
        await CapabilitySnapshot.objects.filter(
            endpoint_id=run.conversation.endpoint_id, status__in=[Status.DECLARED, Status.UNTRUSTED]
        )
        .order_by("-last_seen_at")
        .values_list("status", "payload", "extended")
        .afirst()
    )
    status, payload, extended = found or ("", None, None)
    if status == Status.UNTRUSTED:
        raise UnsupportedCapabilityError(
            "The agent's card is not signed by a key this product trusts, so nothing is sent to it.",
            capability="a signed Agent Card",
        )
    if isinstance(extended, dict) and isinstance(extended.get("payload"), dict):
        payload = extended["payload"]
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


async def outgoing_message(
    run: Run, task_id: str, *, offer_a2ui: bool = False, replies: Sequence[dict[str, Any]] = ()
) -> pb.Message:
    request = run.request or {}
    action = request.get(ACTION_KEY)
    version = action.get("version") if isinstance(action, dict) else None
    version = version if version in a2ui.VERSIONS else a2ui.VERSION
    if isinstance(action, dict) and isinstance(action.get("userAction"), dict):
        parts = [a2ui_part(a2ui.action_messages(action["userAction"], version))]
    else:
        action = None
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
    if replies:
        # v1.0 renderer-to-agent messages owed for the last turn's surfaces (docs/PROTOCOLS.md 3.3a).
        outgoing.parts.append(a2ui_part(list(replies)))
    if offer_a2ui or action is not None or replies:
        outgoing.extensions.extend([a2ui.EXTENSION_URI, a2ui.EXTENSION_URI_1])
        outgoing.metadata.update({a2ui.CLIENT_CAPABILITIES_KEY: a2ui.client_capabilities()})
    if action is not None and action.get("dataModel") is not None:
        model = a2ui.client_data_model(str(action.get("surface")), action["dataModel"], version)
        outgoing.metadata.update({a2ui.CLIENT_DATA_MODEL_KEY: model})
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


def a2ui_part(messages: list[dict[str, Any]]) -> pb.Part:
    """A DataPart of A2UI messages, marked as A2UI's A2A extension says."""
    part = pb.Part()
    part.data.list_value.extend(messages)
    part.metadata.update({"mimeType": a2ui.A2A_MIME_TYPE})
    return part


async def a2a_events(
    agent: A2AAgent, run: Run, earlier: Sequence[Transcript], *, stream: bool, offer_a2ui: bool = False
) -> AsyncIterator[pb.StreamResponse]:
    """Send the run's message and yield the agent's answer. A streamed answer cut before the task
    ended is followed again once (SubscribeToTask); a task still working when the run is stopped
    is canceled."""
    card = await stored_card(run)
    replies = a2ui.thread_replies(list(earlier))
    message = await outgoing_message(run, open_task(earlier), offer_a2ui=offer_a2ui, replies=replies)
    extensions = tuple(message.extensions)
    conversation = run.conversation
    seen = {"task_id": message.task_id, "finished": False}

    async def follow(events: AsyncIterator[pb.StreamResponse], call: Any) -> AsyncIterator[pb.StreamResponse]:
        async for event in events:
            task_id, context_id, state = _ids(event)
            if call:
                call.observe(task_id, context_id, state)
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
            method = "SendStreamingMessage" if stream else "SendMessage"
            sent = agent.send(card, message, stream=stream, extensions=extensions)
            with tracing.a2a_call(method, message.task_id) as call:
                async for event in follow(sent, call):
                    yield event
        except (AgentUnreachableError, ProtocolError) as exc:
            cut = (
                stream and seen["task_id"] and not seen["finished"] and not isinstance(exc, RunTooLargeError)
            )
            if not cut:
                raise
            logger.info("the stream of A2A task %s was cut (%s): following it again", seen["task_id"], exc)
            again = agent.subscribe(card, seen["task_id"], extensions=extensions)
            with tracing.reconnect(str(exc)), tracing.a2a_call("SubscribeToTask", seen["task_id"]) as call:
                async for event in follow(again, call):
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
        with tracing.a2a_call("CancelTask", task_id):
            await asyncio.shield(asyncio.wait_for(agent.cancel(card, task_id), timeout=CANCEL_SECONDS))
    except (AgentError, TimeoutError, asyncio.CancelledError) as exc:
        logger.info("cancelling A2A task %s did not complete: %s", task_id, exc)

"""A thread's AG-UI message history, built from the transcripts of its runs.

An agent that keeps no conversation of its own (pydantic-ai's default) knows the thread only from
``RunAgentInput.messages``: every run sends the whole history, in order, as the agent said it and
as AG-UI's own client keeps it. Assistant messages carry their ``toolCalls``, each answered by a
tool message with the call's ``toolCallId``; reasoning goes back where it was kept, with its
encrypted value, and so do the encrypted values of calls and messages.

Agents check the pairing. A tool message for a call the history does not hold is refused, and so
is a new prompt after a call left without a result. A call without a result is therefore sent
only where it is still awaited: the last calls of a run being resumed, or calls a tool message
answers. Any other is left out.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui import core as ag

from ..transcript import ReasoningEntry, ToolCallRecord, Transcript, TranscriptMessage

__all__ = ["agui_history"]

# Kinds, in the order they are sent when they began at the same event.
_REASONING, _ASSISTANT, _CALL, _TOOL = range(4)

Opening = ag.Message | Sequence[ag.Message] | None


@dataclass(slots=True, eq=False)
class _Said:
    """An assistant message being assembled: its text, and the calls it made."""

    id: str
    message: TranscriptMessage | None = None
    encrypted_value: str | None = None
    calls: list[ToolCallRecord] = field(default_factory=list)
    # Calls left out: no result, and none awaited.
    dropped: set[int] = field(default_factory=set)


def agui_history(
    turns: Iterable[tuple[Opening, Transcript | None]],
    *,
    resuming: bool = False,
    answers: Iterable[ag.ToolMessage] = (),
) -> list[ag.Message]:
    """The AG-UI messages of a thread so far, oldest first, for the next run to send.

    ``turns`` are the thread's runs, oldest first: what the product sent to open each one (the
    person's message, or the tool messages answering a client-side tool; ``None`` for a resume)
    and the run's transcript (folded with its earlier runs, as
    :func:`~agents_ui.sdk.transcript.fold_thread` does; transcripts folded one by one work too,
    their snapshots' repeats are sent once). ``resuming``: the next run resumes the last one, so
    the calls its last turn left without a result are kept. ``answers``: the tool messages the
    next run opens with (they come last, and keep the last turn's calls as a resume does). The
    next run's own user message is the caller's to add.
    """
    items: list[Any] = []
    seen: set[str] = set()
    for opening, transcript in turns:
        for message in _messages(opening):
            if message.id not in seen:
                seen.add(message.id)
                items.append(message)
        if transcript is not None:
            items += _run_items(transcript, seen)
    answers = list(answers)
    items += answers
    # Answers continue the last turn as a resume does: its other calls still await theirs.
    return _paired(items, resuming=resuming or bool(answers))


def _messages(opening: Opening) -> Sequence[ag.Message]:
    if opening is None:
        return ()
    return opening if isinstance(opening, Sequence) else (opening,)


def _run_items(transcript: Transcript, seen: set[str]) -> list[Any]:
    """One run's messages, reasoning and calls, in the order the agent said them."""
    repeated = set(seen)  # ids an earlier turn already sent: a snapshot's repeats
    # A MESSAGES_SNAPSHOT sets the order of the messages it lists, and those it brought began at
    # the same event: a message never goes before one listed ahead of it (the person's messages,
    # not sent from here, do not count).
    place: dict[str, tuple[int, int]] = {}
    floor = 0
    for index, message in enumerate(transcript.messages):
        if message.role != "user":
            floor = max(floor, message.position)
        place[message.id] = (floor, index)
    entries: list[tuple[int, int, int, Any]] = []
    for message in transcript.messages:
        if message.id in repeated:
            continue
        if message.role == "assistant":
            entries.append((*place[message.id], _ASSISTANT, message))
        elif message.role == "tool" and message.tool_call_id:
            entries.append((*place[message.id], _TOOL, message))
    assistants = {m.id for m in transcript.messages if m.role == "assistant"}
    sealed_answers: dict[str, str] = {}
    for entry in transcript.reasoning:
        if entry.id in repeated or not (entry.text_length or entry.encrypted_value):
            continue
        if entry.id in assistants:
            # A value the agent gave its answer's id: it goes back on that answer.
            if entry.encrypted_value:
                sealed_answers[entry.id] = entry.encrypted_value
            continue
        entries.append((*place.get(entry.id, (entry.position, -1)), _REASONING, entry))
    for record in transcript.tool_calls.values():
        parent = record.parent_message_id
        if parent in repeated:
            continue
        floor, index = place.get(parent or "", (0, -1))  # right after the message it names
        entries.append((max(record.position, floor), index, _CALL, record))
    entries.sort(key=lambda entry: entry[:3])

    items: list[Any] = []
    said: dict[str, _Said] = {}
    others = {m.id for m in transcript.messages if m.role != "assistant"}
    for _, _, kind, value in entries:
        if kind == _CALL:
            # As AG-UI's own client keeps it: a call joins the assistant message it names, and one
            # that names none (or names another kind of message) is a message of its own.
            parent = value.parent_message_id
            owner_id = parent if parent and parent not in others else value.id
        else:
            owner_id = value.id
        if kind in (_CALL, _ASSISTANT):
            owner = said.get(owner_id)
            if owner is None:
                owner = said[owner_id] = _Said(owner_id)
                items.append(owner)
            if kind == _CALL:
                owner.calls.append(value)
            else:
                owner.message = value
                owner.encrypted_value = value.encrypted_value or sealed_answers.get(value.id)
        else:
            items.append(value)
        seen.add(owner_id)
    return items


def _is_result(item: Any) -> bool:
    return isinstance(item, ag.ToolMessage) or (isinstance(item, TranscriptMessage) and item.role == "tool")


def _paired(items: list[Any], *, resuming: bool) -> list[ag.Message]:
    """Each call followed by the tool message answering it; calls no one awaits are left out."""
    open_calls: dict[str, tuple[_Said, ToolCallRecord]] = {}
    kept: list[Any] = []
    # Consecutive assistant and reasoning messages are one model turn.
    turn_of: dict[int, int] = {}
    turn, last_turn_with_calls, in_turn = 0, -1, False
    for item in items:
        if isinstance(item, _Said | ReasoningEntry):
            if not in_turn:
                turn, in_turn = turn + 1, True
            if isinstance(item, _Said) and item.calls:
                turn_of[id(item)] = last_turn_with_calls = turn
                for record in item.calls:
                    superseded = open_calls.get(record.id)
                    if superseded is not None:  # an id used again: the older call stays unanswered
                        superseded[0].dropped.add(id(superseded[1]))
                    open_calls[record.id] = (item, record)
        else:
            in_turn = False
            if _is_result(item) and open_calls.pop(item.tool_call_id or "", None) is None:
                continue  # answers a call the history does not hold, or one answered already
        kept.append(item)

    # Calls still open: a result the transcript holds without the message that carried it goes
    # right after the call; the last turn's calls wait for the resume; any other is left out.
    after: dict[int, list[ag.Message]] = {}
    for owner, record in open_calls.values():
        if record.has_result:
            after.setdefault(id(owner), []).append(_result_message(record))
        elif not (resuming and turn_of[id(owner)] == last_turn_with_calls):
            owner.dropped.add(id(record))

    history: list[ag.Message] = []
    pending: list[ag.Message] = []
    for item in kept:
        if pending and not _is_result(item):
            history += pending
            pending = []
        if isinstance(item, _Said):
            message = _assistant_message(item)
            if message is not None:
                history.append(message)
            pending += after.get(id(item), ())
        elif isinstance(item, TranscriptMessage):
            history.append(_tool_message(item))
        elif isinstance(item, ReasoningEntry):
            history.append(_reasoning_message(item))
        else:
            history.append(item)
    return history + pending


def _assistant_message(said: _Said) -> ag.AssistantMessage | None:
    calls = [
        ag.ToolCall(
            id=record.id,
            function=ag.FunctionCall(name=record.name, arguments=record.args_text or "{}"),
            encrypted_value=record.encrypted_value,
        )
        for record in said.calls
        if id(record) not in said.dropped
    ]
    message = said.message
    text = message.text if message is not None else ""
    if not (text or calls or said.encrypted_value):
        return None
    return ag.AssistantMessage(
        id=said.id,
        content=text or None,
        tool_calls=calls or None,
        encrypted_value=said.encrypted_value,
        name=message.name if message is not None else None,
        subagent_run_id=message.subagent_run_id if message is not None else None,
    )


def _tool_message(message: TranscriptMessage) -> ag.ToolMessage:
    text, parts = message.text, message.parts
    content: Any = ([ag.TextPart(text=text)] if text else []) + parts if parts else text
    return ag.ToolMessage(
        id=message.id,
        content=content,
        tool_call_id=message.tool_call_id or "",
        error=message.error,
        encrypted_value=message.encrypted_value,
        subagent_run_id=message.subagent_run_id,
    )


def _result_message(record: ToolCallRecord) -> ag.ToolMessage:
    """A result the transcript holds without the tool message that carried it."""
    result = record.result
    if not isinstance(result, str | list):
        result = json.dumps(result, ensure_ascii=False, default=str)
    return ag.ToolMessage(
        id=f"result-{record.id}", content=result, tool_call_id=record.id, error=record.result_error
    )


def _reasoning_message(entry: ReasoningEntry) -> ag.ReasoningMessage:
    return ag.ReasoningMessage(
        id=entry.id,
        content=entry.text,
        encrypted_value=entry.encrypted_value,
        subagent_run_id=entry.subagent_run_id,
    )

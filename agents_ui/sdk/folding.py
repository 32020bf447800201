"""The fold: an event stream (any protocol) -> the run transcript the UI renders and tests assert.

``TranscriptBuilder.apply(event)`` folds live, one event at a time; ``fold(events)`` folds a whole
stream, ``fold_thread(runs)`` a thread's runs, each seeing the ones before it (a resume's results
belong to the calls the interrupted run opened). Each protocol's handlers live in its subpackage
(``agui.fold``, ``external.fold``, ``a2a.fold``), named one per event; the builder dispatches by the
event's type and holds what they share. Every protocol lands in the same ``Transcript``. The fold
never raises on a strange stream: what cannot be applied is recorded in ``Transcript.errors`` and
the fold goes on.
"""

from __future__ import annotations

import json
import logging
import weakref
from collections.abc import AsyncIterable, Callable, Iterable
from typing import Any

from .a2a.fold import A2AFold
from .a2ui.catalog import ACTIVITY_TYPE as A2UI_ACTIVITY
from .agui.fold import AgUiFold
from .external.fold import ExternalFold
from .state import StateKeeper
from .transcript import (
    ActivityRecord,
    Artifact,
    ArtifactPart,
    ReasoningEntry,
    ToolCallRecord,
    Transcript,
    TranscriptMessage,
    content_text,
)

__all__ = ["TranscriptBuilder", "afold", "fold", "fold_thread"]

logger = logging.getLogger(__name__)

MEDIA_KINDS = ("image", "audio")
# Media artifacts kept per tool result: the parts themselves stay on the result.
MAX_MEDIA_ARTIFACTS = 20


def media_artifact(key: str, part: Any) -> Artifact:
    """An image or audio part of a tool's result as an artifact: its type, its name, and its link
    when the agent gave one (inline bytes stay on the result, not copied here)."""
    source = getattr(part, "source", None)
    media_type = getattr(source, "mime_type", None) or ""
    url = getattr(source, "value", "") if getattr(source, "type", None) == "url" else ""
    metadata = getattr(part, "metadata", None)
    name = metadata.get("filename") if isinstance(metadata, dict) else None
    return Artifact(
        key,
        name=name if isinstance(name, str) else "",
        parts=[ArtifactPart("file", media_type=str(media_type)[:128], url=str(url)[:2048])],
        complete=True,
        media_type=str(media_type)[:128] or None,
    )


def _said_ids(transcripts: Iterable[Transcript]) -> frozenset[str]:
    """What runs said, by id: messages, reasoning, and the messages their calls named."""
    ids: set[str] = set()
    for t in transcripts:
        ids.update(m.id for m in t.messages)
        ids.update(r.id for r in t.reasoning)
        ids.update(c.parent_message_id for c in t.tool_calls.values() if c.parent_message_id)
    return frozenset(ids)


class TranscriptBuilder:
    """Folds events into ``self.transcript``, one :meth:`apply` at a time.

    ``earlier`` are the transcripts of the thread's earlier runs, oldest first (each folded with its
    own earlier runs, as :func:`fold_thread` does). AG-UI ids are not unique across runs, so this
    run's tool calls are its own, keyed by id within the run; what belongs to an earlier run stays
    there: a result for a call an earlier run left open (a resume) goes on that call, and a
    MESSAGES_SNAPSHOT's repeat of earlier messages only fills in what those calls lacked.
    """

    def __init__(self, transcript: Transcript | None = None, *, earlier: Iterable[Transcript] = ()) -> None:
        self.transcript = transcript or Transcript()
        self.earlier: tuple[Transcript, ...] = tuple(earlier)
        if self.transcript.state is None and not self.transcript.event_count:
            # The thread's state goes on from run to run: a patch before this run's first
            # snapshot applies to the state the runs before it left (an owned copy).
            self.transcript.state = _last_state(self.earlier)
        # This run's messages and reasoning entries, by id.
        self.messages: dict[str, TranscriptMessage] = {m.id: m for m in self.transcript.messages}
        self.reasoning: dict[str, ReasoningEntry] = {r.id: r for r in self.transcript.reasoning}
        self.earlier_ids = _said_ids(self.earlier)
        # Encrypted values for a tool call or message not begun yet: given to it when it begins.
        self.waiting_values: dict[str, str] = {}
        # Snapshots and patches of the state and of activities, within their bounds (sdk/state.py).
        self.state_keeper = StateKeeper("state")
        self.activity_keeper = StateKeeper("activity")
        # The folds reach this builder weakly: it holds them and their handlers, so a builder nobody
        # keeps (a follower's that ended, a run's first one) is freed at once, not left to the cycle
        # collector's rare full passes, with everything it folded (tens of KB a run).
        me = weakref.proxy(self)
        self.agui = AgUiFold(me)
        self.external = ExternalFold(me)
        self.a2a = A2AFold(me)
        self._handlers: dict[type, Callable[[Any], None]] = {
            **self.agui.handlers(),
            **self.external.handlers(),
            **self.a2a.handlers(),
        }
        self._text_deltas: dict[type, str] = {**AgUiFold.TEXT_DELTAS, **ExternalFold.TEXT_DELTAS}

    def apply(self, event: Any) -> None:
        """Fold one event. Unknown event objects are logged and skipped."""
        if event is None:
            return
        handler = self._handlers.get(type(event))
        if handler is None:
            logger.warning("the transcript fold skipped an event of type %s", type(event).__name__)
            return
        transcript = self.transcript
        transcript.event_count += 1
        texts = self._text_deltas.get(type(event))
        if texts is None or event.message_id not in getattr(self, texts):
            transcript.revision += 1
        handler(event)

    def apply_all(self, events: Iterable[Any]) -> Transcript:
        apply = self.apply
        for event in events:
            apply(event)
        return self.transcript

    # --- what every protocol's fold builds with ------------------------------------------------

    def message(
        self, message_id: str, role: str = "assistant", subagent_run_id: str | None = None
    ) -> TranscriptMessage:
        message = self.messages.get(message_id)
        if message is None:
            message = TranscriptMessage(
                id=message_id,
                role=role,
                position=self.transcript.event_count,
                subagent_run_id=subagent_run_id,
            )
            self.messages[message_id] = message
            self.transcript.messages.append(message)
            if self.waiting_values:
                message.encrypted_value = self.waiting_values.pop(message_id, None)
        return message

    def tool(self, tool_call_id: str, name: str = "", **extra: Any) -> ToolCallRecord:
        record = self.transcript.tool_calls.get(tool_call_id)
        if record is None:
            record = ToolCallRecord(id=tool_call_id, name=name, position=self.transcript.event_count, **extra)
            self.transcript.tool_calls[tool_call_id] = record
            self.transcript.observed.tool_calls = True
            if self.waiting_values:
                record.encrypted_value = self.waiting_values.pop(tool_call_id, None)
        elif name and not record.name:
            record.name = name
        return record

    def earlier_call(self, tool_call_id: str, *, open_only: bool = False) -> ToolCallRecord | None:
        """The latest call with this id in an earlier run (still without a result, if ``open_only``)."""
        for transcript in reversed(self.earlier):
            record = transcript.tool_calls.get(tool_call_id)
            if record is not None and not (open_only and record.has_result):
                return record
        return None

    def answer_earlier(self, record: ToolCallRecord, content: Any, error: str | None = None) -> None:
        """This run gives the result of a call an earlier run opened: it goes on that call."""
        self.store_result(record, content, error)
        self.transcript.answered_earlier[record.id] = record
        for transcript in self.earlier:
            if transcript.tool_calls.get(record.id) is record:
                transcript.revision += 1  # a view of that run sees it changed

    def reasoning_entry(self, entry_id: str, subagent_run_id: str | None = None) -> ReasoningEntry:
        entry = self.reasoning.get(entry_id)
        if entry is None:
            entry = ReasoningEntry(
                id=entry_id, subagent_run_id=subagent_run_id, position=self.transcript.event_count
            )
            self.reasoning[entry_id] = entry
            self.transcript.reasoning.append(entry)
            if self.waiting_values:
                entry.encrypted_value = self.waiting_values.pop(entry_id, None)
        return entry

    @staticmethod
    def store_result(record: ToolCallRecord, content: Any, error: str | None = None) -> None:
        record.finish()  # a result implies the arguments are complete (chunked calls have no END)
        text, parts = content_text(content)
        record.result = text if not parts else content
        record.has_result = True
        record.result_error = error

    def see_media(self, parts: list[Any], tool_call_id: str) -> None:
        """A tool result's images and audio: seen, and each kept as an artifact of the call."""
        media = [part for part in parts if getattr(part, "type", None) in MEDIA_KINDS]
        if not media:
            return
        t = self.transcript
        t.observed.media = True
        for number, part in enumerate(media[:MAX_MEDIA_ARTIFACTS], 1):
            key = f"{tool_call_id}-media-{number}"
            if key not in t.artifacts:
                t.artifacts[key] = media_artifact(key, part)

    def activity(self, message_id: str, activity_type: str) -> ActivityRecord:
        t = self.transcript
        t.observed.activities = True
        t.observed.a2ui = t.observed.a2ui or activity_type == A2UI_ACTIVITY
        record = t.activities.get(message_id)
        if record is None:
            record = ActivityRecord(message_id, activity_type, None, t.event_count)
            t.activities[message_id] = record
        record.revision += 1
        return record


def fold(events: Iterable[Any]) -> Transcript:
    """Fold a whole stream (events of any protocol) into a transcript."""
    return TranscriptBuilder().apply_all(events)


def _last_state(transcripts: Iterable[Transcript]) -> Any:
    """An owned copy of the state the latest of ``transcripts`` that has one left (None without)."""
    for transcript in reversed(tuple(transcripts)):
        if transcript.state is not None:
            return json.loads(json.dumps(transcript.state))
    return None


def fold_thread(runs: Iterable[Iterable[Any]]) -> list[Transcript]:
    """Fold a thread's runs, oldest first, each seeing the ones before it: one transcript per run.

    A resume run's results land on the calls the earlier runs opened (see :class:`TranscriptBuilder`).
    """
    transcripts: list[Transcript] = []
    for events in runs:
        transcripts.append(TranscriptBuilder(earlier=transcripts).apply_all(events))
    return transcripts


async def afold(events: AsyncIterable[Any]) -> Transcript:
    """Fold an async stream, e.g. ``await afold(agent.run(input))``."""
    builder = TranscriptBuilder()
    async for event in events:
        builder.apply(event)
    return builder.transcript

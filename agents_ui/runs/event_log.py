"""The run's event log: each event as stored (type, JSON), and read back in one loop.

Every event a run receives is stored as the agent sent it, so a finished run, or one another
server process drives, is shown by folding its log again with the SDK's TranscriptBuilder.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from typing import Any

from agents_ui.models import AgentEndpoint, Run, RunEvent
from agents_ui.sdk.a2a import client as a2a
from agents_ui.sdk.agui.client import parse_event_object
from agents_ui.sdk.external.policy import EXTERNAL_EVENT_TYPES, Done, ExternalEvent, LegacyText
from agents_ui.sdk.folding import TranscriptBuilder
from agents_ui.sdk.transcript import Transcript

logger = logging.getLogger(__name__)


def event_record(event: Any) -> tuple[str, str]:
    """A typed event -> (type, JSON text) for the run's event log."""
    if isinstance(event, a2a.pb.StreamResponse):
        return a2a.event_record(event)
    if isinstance(event, ExternalEvent):
        if isinstance(event, LegacyText):
            return "legacy:text", json.dumps({"text": event.text})
        if isinstance(event, Done):
            return "legacy:done", "{}"
        return event.event_name, event.model_dump_json(by_alias=True, exclude_none=True)
    return event.type.value, event.model_dump_json(by_alias=True, exclude_none=True)


def event_from_record(protocol: str, type_: str, payload: dict[str, Any]) -> Any:
    if protocol == AgentEndpoint.Protocol.AGUI:
        return parse_event_object(payload)
    if protocol == AgentEndpoint.Protocol.A2A:
        return a2a.event_from_record(type_, payload)
    if type_ == "legacy:text":
        return LegacyText(text=payload.get("text", ""))
    if type_ == "legacy:done":
        return Done()
    cls = EXTERNAL_EVENT_TYPES.get(type_)
    return cls.model_validate(payload) if cls else None


def _parsed(run_id: Any, protocol: str, rows: Iterable[tuple[str, Any]]) -> Iterator[Any]:
    for type_, payload in rows:
        try:
            event = event_from_record(protocol, type_, payload)
        except Exception:  # a stored event that no longer parses must not hide the rest
            logger.warning("skipping stored event %s of run %s", type_, run_id, exc_info=True)
            continue
        if event is not None:
            yield event


def stored_events(run: Run, *, upto: int | None = None) -> list[Any]:
    """A run's stored events, parsed, in the order they arrived (up to the `upto`-th, if given)."""
    rows = RunEvent.objects.filter(run_id=run.pk).order_by("seq")
    rows = (rows if upto is None else rows.filter(seq__lte=upto)).values_list("type", "payload")
    return list(_parsed(run.pk, run.conversation.endpoint.protocol, rows))


class EventLogReader:
    """Folds a run's event log into a transcript, each call going on from the last event it read."""

    def __init__(self, run_id: Any, protocol: str, *, earlier: Iterable[Transcript] = ()) -> None:
        self.run_id = run_id
        self.protocol = protocol
        self.builder = TranscriptBuilder(earlier=earlier)
        self.last_seq = 0

    @property
    def transcript(self) -> Transcript:
        return self.builder.transcript

    def read(self, limit: int | None = None, *, upto: int | None = None) -> int:
        """Fold the events stored since the last read (at most `limit`, none after the `upto`-th);
        returns how many were read."""
        rows = RunEvent.objects.filter(run_id=self.run_id, seq__gt=self.last_seq)
        if upto is not None:
            rows = rows.filter(seq__lte=upto)
        rows = rows.order_by("seq").values_list("seq", "type", "payload")
        count = 0
        # Row by row from the database cursor: a run may hold tens of megabytes of events, and
        # a page must not hold them all at once on top of the transcript they fold into.
        batch = (rows[:limit] if limit else rows).iterator(chunk_size=200)

        def rows_seen():
            nonlocal count
            for seq, type_, payload in batch:
                self.last_seq, count = seq, count + 1
                yield type_, payload

        for event in _parsed(self.run_id, self.protocol, rows_seen()):
            self.builder.apply(event)
        return count

    def apply_record(self, seq: int, type_: str, payload: str) -> None:
        """Fold one event given as its log record (its JSON text), the one after the last read."""
        self.last_seq = seq
        try:
            event = event_from_record(self.protocol, type_, json.loads(payload))
        except Exception:  # as for a stored event: one that does not parse must not hide the rest
            logger.warning("skipping streamed event %s of run %s", type_, self.run_id, exc_info=True)
            return
        if event is not None:
            self.builder.apply(event)


def replay(run: Run) -> Transcript:
    """The transcript of a run from its event log (a finished run, or one driven elsewhere)."""
    reader = EventLogReader(run.pk, run.conversation.endpoint.protocol)
    reader.read()
    return reader.transcript

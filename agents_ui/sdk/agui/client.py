"""Client for AG-UI agents (docs/PROTOCOLS.md section 1): capability discovery and runs.

Every type is ``ag_ui.core``'s own; this module only moves bytes and validates them. What a run's
stream must be (AG-UI 1.1's consumer rules) is checked by :mod:`.rules` on every event.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import aclosing
from typing import Any

import httpx
from ag_ui.core import (
    AgentCapabilities,
    Event,
    EventType,
    RunAgentInput,
    StateDeltaEvent,
    ToolCallResultEvent,
)
from pydantic import BaseModel, TypeAdapter, ValidationError

from ..discovery import DiscoveryResult
from ..errors import AgentError, ProtocolError, RunTooLargeError, validation_problems
from ..limits import (
    DEFAULT_EVENT_IDLE_TIMEOUT,
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    DEFAULT_RUN_TIME_LIMIT,
    MAX_JSON_DEPTH,
    exceeds_depth,
    json_text_depth,
    safe_link,
)
from ..sse import SseParser
from ..transport import (
    BodyOutOfBoundsError,
    RunClock,
    check_content_type,
    client_for,
    make_timeout,
    raise_for_status,
    read_json,
    translate_transport_errors,
)
from .rules import CLIENT_PROTOCOL_VERSION, THINKING_TO_REASONING, StreamRules, era_input

__all__ = [
    "EVENT_ADAPTER",
    "THINKING_TO_REASONING",
    "AgUiAgent",
    "check_event_depth",
    "normalize_capabilities",
    "parse_capabilities",
    "parse_event",
]

logger = logging.getLogger(__name__)

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


# One model class per type string: validating against the class chosen from "type" costs a
# fraction of trying the discriminated union, and it is the same ag_ui.core class either way.
_EVENT_CLASSES: dict[str, type[BaseModel]] = {}
for _member in Event.__origin__.__args__:  # type: ignore[attr-defined]
    _EVENT_CLASSES[_member.model_fields["type"].default.value] = _member
# The classes' own core validators, called directly: model_validate_json's Python wrapper costs
# about a fifth of the validation itself at this event size.
_VALIDATE_JSON = {name: cls.__pydantic_validator__.validate_json for name, cls in _EVENT_CLASSES.items()}

_TERMINAL_TYPES = frozenset({EventType.RUN_FINISHED, EventType.RUN_ERROR})
# The events of most of a stream, whose every field is a string or an open object: when one
# validates with nothing undescribed and no null, the rules' own parse is not needed.
# (An undescribed enum member fails this validation and goes through the rules, which strip it.)
_HOT_TYPES = frozenset(
    {
        "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
        "REASONING_START", "REASONING_MESSAGE_START", "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END", "REASONING_END",
        "STEP_STARTED", "STEP_FINISHED", "STATE_SNAPSHOT", "STATE_DELTA",
    }
)  # fmt: skip


def _described(event: Any) -> bool:
    """Nothing in the validated event that AG-UI does not describe: no extra field on it, nor on a
    delta's operations; a result with content parts (models within models) goes through the rules."""
    if event.__pydantic_extra__:
        return False
    if isinstance(event, StateDeltaEvent):
        return not any(operation.__pydantic_extra__ for operation in event.delta)
    return not isinstance(event, ToolCallResultEvent) or isinstance(event.content, str)


# After a run's terminal event, how long the stream may stay silent before the run is over: a
# producer may start another run in the same stream, one that holds the connection open is done.
AFTER_TERMINAL_WAIT = 1.0
_TYPE_PREFIX = '{"type":"'
# An event shorter than this cannot nest past MAX_JSON_DEPTH: most events skip the depth check.
_DEPTH_CHECK_FROM = 2 * MAX_JSON_DEPTH


def check_event_depth(data: str) -> None:
    """ProtocolError when one event's JSON nests past MAX_JSON_DEPTH (read before it is parsed)."""
    if (
        len(data) > _DEPTH_CHECK_FROM
        and data.count("{") + data.count("[") > MAX_JSON_DEPTH
        and json_text_depth(data) > MAX_JSON_DEPTH
    ):
        raise ProtocolError(f"the agent sent an event nested more than {MAX_JSON_DEPTH} levels deep")


def _shape_error(exc: ValidationError, type_name: str) -> ProtocolError:
    first = validation_problems(exc, limit=1, root="(event)")
    return ProtocolError(
        f"the agent sent a {type_name} event that does not match AG-UI 1.0: {first} "
        f"({exc.error_count()} problem(s))"
    )


def parse_event(data: str) -> Event | None:
    """One SSE ``data`` payload -> a typed ``ag_ui.core`` event.

    Returns None (and logs) for an unknown event type. THINKING_* events are mapped to REASONING_*.
    Raises ProtocolError for malformed JSON, a payload that is not a valid event, or one nested
    past MAX_JSON_DEPTH.
    """
    check_event_depth(data)
    # Fast path: producers built on ag_ui's encoder (and both capture servers) write "type" first.
    if data.startswith(_TYPE_PREFIX):
        end = data.find('"', 9)
        validate_json = _VALIDATE_JSON.get(data[9:end])
        if validate_json is not None:
            try:
                return validate_json(data)
            except ValidationError as exc:
                if exc.errors()[0]["type"] == "json_invalid":
                    raise ProtocolError(
                        f"the agent sent an event that is not valid JSON: {exc.errors()[0]['msg']}"
                    ) from exc
                raise _shape_error(exc, data[9:end]) from exc
    try:
        obj = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"the agent sent an event that is not valid JSON ({exc})") from exc
    return parse_event_object(obj)


def parse_event_object(obj: Any) -> Event | None:
    """Like :func:`parse_event`, for an already decoded JSON value."""
    if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
        raise ProtocolError("the agent sent an event that is not a JSON object with a string 'type'")
    type_name = obj["type"]
    mapped = THINKING_TO_REASONING.get(type_name)
    if mapped is not None:
        obj = {**obj, "type": mapped}
        if mapped == "REASONING_MESSAGE_START":
            obj.setdefault("role", "reasoning")
        if (
            "messageId" not in obj
            and "message_id" not in obj
            and mapped in ("REASONING_START", "REASONING_END")
        ):
            # THINKING_START/END carried no id in 0.x; 1.0 requires one. Use a stable placeholder.
            obj["messageId"] = "thinking"
        type_name = mapped
    if type_name not in _EVENT_CLASSES:
        logger.warning("skipping AG-UI event of unknown type %r", type_name[:100])
        return None
    try:
        return EVENT_ADAPTER.validate_python(obj)
    except ValidationError as exc:
        raise _shape_error(exc, type_name) from exc


def normalize_capabilities(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Accept the 0.x spelling ``multiAgent.subAgents`` as ``subagents`` (docs/PROTOCOLS.md 1.2),
    and drop an ``identity.documentationUrl`` that is not an http(s) link (it is shown as one).

    Without the first, ag_ui's ``extra="allow"`` would keep the old key as an unknown extra and
    leave ``subagents`` empty, silently.
    """
    data = dict(raw)
    identity = data.get("identity")
    if isinstance(identity, Mapping):
        identity = dict(identity)
        for key in ("documentationUrl", "documentation_url"):
            if key in identity and safe_link(identity[key]) is None:
                del identity[key]
        data["identity"] = identity
    for key in ("multiAgent", "multi_agent"):
        multi = data.get(key)
        if isinstance(multi, Mapping):
            multi = dict(multi)
            for old in ("subAgents", "sub_agents"):
                if old in multi:
                    value = multi.pop(old)
                    multi.setdefault("subagents", value)
            data[key] = multi
    return data


def parse_capabilities(raw: Mapping[str, Any]) -> AgentCapabilities:
    """Validate a declaration; raises ProtocolError with the validation message when invalid.

    A declaration nested past MAX_JSON_DEPTH is invalid before any validator recurses into it.
    """
    if exceeds_depth(raw, MAX_JSON_DEPTH):
        raise ProtocolError(
            f"the agent's capability declaration is invalid: it is nested more than {MAX_JSON_DEPTH} "
            "levels deep"
        )
    try:
        return AgentCapabilities.model_validate(normalize_capabilities(raw))
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise ProtocolError(f"the agent's capability declaration is invalid: {problems}") from exc


class AgUiAgent:
    """An AG-UI 1.0 agent at ``url``. Stateless: every call is one HTTP request.

    Pass ``client`` to reuse connections; the SDK never closes a client it did not create.
    ``timeout.read`` bounds the silence between two reads. A run is also bounded by
    ``max_total_bytes`` (all it sends), ``event_idle_timeout`` (the wait for the next whole event,
    however many bytes trickle in) and ``run_time_limit`` (the whole run); None turns a time off.
    """

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: httpx.AsyncClient | None = None,
        discovery_url: str | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        event_idle_timeout: float | None = DEFAULT_EVENT_IDLE_TIMEOUT,
        run_time_limit: float | None = DEFAULT_RUN_TIME_LIMIT,
        max_protocol_version: str | None = None,
    ) -> None:
        self.url = url
        # The newest AG-UI version the agent reads (None: current), for the era shims of rules.py.
        self.max_protocol_version = max_protocol_version
        self.discovery_url = discovery_url or f"{url.rstrip('/')}/capabilities"
        self._headers = dict(headers or {})
        self.timeout = make_timeout(timeout)
        self._client = client
        self.max_frame_bytes = max_frame_bytes
        self.max_total_bytes = max_total_bytes
        self.event_idle_timeout = event_idle_timeout
        self.run_time_limit = run_time_limit

    def __repr__(self) -> str:  # no headers: they may hold credentials
        return f"AgUiAgent({self.url!r})"

    async def discover(self) -> DiscoveryResult[AgentCapabilities]:
        """Ask the agent what it currently declares. Never raises for agent-side problems."""
        try:
            return await self._discover()
        except AgentError as exc:
            return DiscoveryResult("unreachable", self.discovery_url, error=str(exc), error_code=exc.code)

    async def get_capabilities(self) -> AgentCapabilities | None:
        """The current declaration, or None when the agent has no discovery.

        Raises ProtocolError for an invalid declaration, and the typed transport or HTTP error
        (AgentUnreachableError, AgentTimeoutError, ...) when discovery itself fails.
        """
        result = await self._discover()
        if result.status == "invalid":
            raise ProtocolError(result.error)
        return result.declaration

    async def _discover(self) -> DiscoveryResult[AgentCapabilities]:
        url = self.discovery_url
        async with client_for(self._client) as client:
            with translate_transport_errors("capability discovery"):
                async with client.stream(
                    "GET",
                    url,
                    headers={**self._headers, "Accept": "application/json"},
                    timeout=self.timeout,
                ) as response:
                    if response.status_code in (404, 405):
                        return DiscoveryResult("none", url)
                    await raise_for_status(response)
                    try:
                        body = await read_json(response, "capability discovery")
                    except BodyOutOfBoundsError as exc:
                        return DiscoveryResult("invalid", url, error=exc.message, error_code=exc.code)
                    except ProtocolError as exc:
                        # A 200 that is not JSON (an HTML catch-all page, say): no discovery.
                        return DiscoveryResult("none", url, error=exc.message)
        if not isinstance(body, dict):
            return DiscoveryResult("none", url, error="the discovery answer is not a JSON object")
        try:
            capabilities = parse_capabilities(body)
        except ProtocolError as exc:
            return DiscoveryResult("invalid", url, raw=body, error=exc.message, error_code=exc.code)
        return DiscoveryResult("declared", url, declaration=capabilities, raw=body)

    async def run(
        self, input: RunAgentInput, *, notes: list[str] | None = None, warnings: list[str] | None = None
    ) -> AsyncIterator[Event]:
        """Start a run and yield its events as they arrive (AG-UI 1.1's consumer rules applied).

        Ends when the stream does after a run's terminal event (RUN_FINISHED or RUN_ERROR; a stream
        may carry several runs in sequence). Raises ProtocolError if it ends while a run is still
        open (a truncated answer: after yielding what did arrive), :class:`~.rules.RuleViolation`
        when the agent breaks a rule, and the errors of the run's bounds (RunTooLargeError,
        EventIdleTimeoutError, RunTimeLimitError). Closing the iterator early closes the connection.
        ``notes`` receives a sentence for a person when part of the stream was left out (a frame
        that is not UTF-8): pass the transcript's ``errors`` to show it with the run. ``warnings``
        receives what the rules stripped or translated (for staff).
        """
        async with aclosing(self.run_frames(input, notes=notes, warnings=warnings)) as frames:
            async for event, _ in frames:
                yield event

    async def run_frames(
        self,
        input: RunAgentInput,
        *,
        notes: list[str] | None = None,
        stream: bool = True,
        resume: bool = False,
        warnings: list[str] | None = None,
    ) -> AsyncIterator[tuple[Event, str]]:
        """Like :meth:`run`, with each event's JSON text (as the agent sent it, or as the rules
        left it when they stripped or expanded something) for an event log.

        ``stream=False`` (the agent declares ``transport.streaming: false``): the answer is read as
        one complete response, SSE or a JSON list of events, before any event is handed on.
        ``resume=True`` (``transport.resumable: true``): when the connection is cut after an event
        with an SSE ``id:``, the run is asked again with ``Last-Event-ID`` and goes on from there,
        at most ``MAX_RESUMES`` times; an event whose id was already handed on is skipped.
        """
        rules = StreamRules(peer_version=self.max_protocol_version, warnings=warnings)
        if input.protocol_version is None:
            input = input.model_copy(update={"protocol_version": CLIENT_PROTOCOL_VERSION})
        request = era_input(
            json.loads(input.model_dump_json(by_alias=True)), self.max_protocol_version, rules.warnings
        )
        body = json.dumps(request, ensure_ascii=False, separators=(",", ":"))
        clock = RunClock(self.event_idle_timeout, self.run_time_limit)
        last_id: str | None = None
        seen: set[str] = set()
        resumes = 0
        while True:
            connection = self._connection(body, clock, notes, rules, seen, stream=stream, last_id=last_id)
            try:
                async with aclosing(connection) as frames:
                    async for event, data, event_id in frames:
                        if event_id is not None:
                            last_id = event_id
                        yield event, data
                return
            except AgentError as exc:
                if not (resume and last_id is not None and resumes < MAX_RESUMES and _cut(exc)):
                    if rules.run_open and _cut(exc) and not isinstance(exc, _StreamEnded):
                        # The connection broke inside the run: a truncated answer too.
                        raise _StreamEnded(f"the agent's stream broke off {_TRUNCATED}") from exc
                    raise
                logger.info("AG-UI run cut after event %s: resuming", last_id)
                resumes += 1

    def _admit(self, rules: StreamRules, data: str) -> list[tuple[Any, str]]:
        """One payload through the rules (a well-formed hot event skips their parse)."""
        check_event_depth(data)
        if data.startswith(_TYPE_PREFIX):
            end = data.find('"', 9)
            type_name = data[9:end]
            if type_name in _HOT_TYPES and "null" not in data:
                try:
                    event = _VALIDATE_JSON[type_name](data)
                except ValidationError:
                    pass  # the rules say what is wrong with it
                else:
                    if _described(event):
                        return rules.admit(data, event)
        return rules.admit(data)

    async def _connection(
        self,
        body: str,
        clock: RunClock,
        notes: list[str] | None,
        rules: StreamRules,
        seen: set[str],
        *,
        stream: bool,
        last_id: str | None,
    ) -> AsyncIterator[tuple[Event, str, str | None]]:
        """One request of a run: its events with their SSE ids; raises when it ends inside a run."""
        headers = {
            **self._headers,
            "Content-Type": "application/json",
            "Accept": "text/event-stream" if stream else "text/event-stream, application/json;q=0.9",
        }
        if last_id is not None:
            headers["Last-Event-ID"] = last_id
        parser = SseParser(
            max_frame_bytes=self.max_frame_bytes, max_total_bytes=self.max_total_bytes, notes=notes
        )
        cut = False
        async with client_for(self._client) as client:
            with translate_transport_errors("AG-UI run"):
                async with client.stream(
                    "POST", self.url, content=body, headers=headers, timeout=self.timeout
                ) as response:
                    await raise_for_status(response)
                    if not stream:
                        async for found in self._complete_response(response, parser, clock, rules):
                            yield found
                        if rules.run_open or not rules.seen_terminal:
                            raise _StreamEnded(f"the agent's answer ended {_TRUNCATED}")
                        return
                    check_content_type(response, "text/event-stream", "AG-UI run")
                    chunks = response.aiter_bytes()
                    while (chunk := await self._next_chunk(clock, chunks, rules)) is not None:
                        frames = parser.feed(chunk)
                        for frame in frames:
                            if not frame.data:
                                continue
                            if frame.id is not None:
                                if frame.id in seen:
                                    continue  # the agent repeated what it sent before the cut
                                seen.add(frame.id)
                            for event, data in self._admit(rules, frame.data):
                                yield event, data, frame.id
                        if frames:
                            clock.event_seen()
                    cut = parser.has_partial_frame
                    parser.close()
        if rules.seen_terminal and not rules.run_open and not cut:
            return
        where = " in the middle of a frame" if cut else ""
        raise _StreamEnded(f"the agent's stream ended{where} {_TRUNCATED}")

    @staticmethod
    async def _next_chunk(clock: RunClock, chunks: AsyncIterator[bytes], rules: StreamRules) -> bytes | None:
        if rules.run_open or not rules.seen_terminal:
            return await clock.next_chunk(chunks)
        try:
            async with asyncio.timeout(AFTER_TERMINAL_WAIT):
                return await clock.next_chunk(chunks)
        except (TimeoutError, httpx.TransportError, AgentError):
            # The run is over: a producer holding the stream open, or a connection that then broke
            # or timed out, has nothing more to add to it.
            return None

    async def _complete_response(
        self, response: httpx.Response, parser: SseParser, clock: RunClock, rules: StreamRules
    ) -> AsyncIterator[tuple[Event, str, str | None]]:
        """A response read whole (within the run's byte and time bounds), then its events."""
        content_type = response.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if content_type not in ("text/event-stream", "application/json"):
            check_content_type(response, "text/event-stream", "AG-UI run")
        whole = bytearray()
        chunks = response.aiter_bytes()
        while (chunk := await clock.next_chunk(chunks)) is not None:
            whole += chunk
            if len(whole) > self.max_total_bytes:
                raise RunTooLargeError(f"the agent's answer is larger than {self.max_total_bytes} bytes")
        if content_type == "application/json":
            for data in _json_events(bytes(whole)):
                for event, text in self._admit(rules, data):
                    yield event, text, None
            return
        frames = parser.feed(bytes(whole))
        parser.close()
        for frame in frames:
            if frame.data:
                for event, text in self._admit(rules, frame.data):
                    yield event, text, frame.id


# The stream ended while a run was open (docs/PROTOCOLS.md 1.7, truncation).
_TRUNCATED = "without a terminal event (RUN_FINISHED or RUN_ERROR)"

# How often one run is resumed after a cut connection before it fails.
MAX_RESUMES = 3


class _StreamEnded(ProtocolError):
    """The connection ended, cleanly or not, before the run did: a truncated answer, never success."""

    code = "stream_truncated"


def _cut(exc: AgentError) -> bool:
    """A connection that broke (not an agent that answered wrongly, nor a bound that passed)."""
    if isinstance(exc, _StreamEnded):
        return True
    cause = exc.__cause__
    return isinstance(cause, httpx.TransportError) and not isinstance(cause, httpx.TimeoutException)


def _json_events(body: bytes) -> list[str]:
    """A complete answer as JSON: a list of events, or {"events": [...]}; each event's JSON text."""
    check_event_depth(body.decode("utf-8", errors="replace"))
    try:
        found = json.loads(body)
    except ValueError as exc:
        raise ProtocolError("the agent's answer is not valid JSON") from exc
    if isinstance(found, dict):
        found = found.get("events")
    if not isinstance(found, list):
        raise ProtocolError('the agent\'s answer is neither a list of events nor {"events": [...]}')
    return [json.dumps(item) for item in found]

"""AG-UI 1.1's consumer rules, applied to every event of a run before it is folded.

docs/PROTOCOLS.md 1.7 decides each rule with its spec section; tests/conformance/agui/ holds them to
the fixtures. :class:`StreamRules` turns one SSE ``data`` payload into the events the fold sees:

1. era shims: the retired ``THINKING_*`` shapes become reasoning; a peer older than sub-agents
   (``max_protocol_version`` before 0.0.58) has its ``SUBAGENT_*`` events dropped, with a warning;
2. the processing model (:mod:`.schema_strip`): unknown types, properties and members stripped
   with a warning, malformed known values fatal;
3. chunk expansion: ``*_CHUNK`` events become start / content / end, with the checks the
   streaming pattern makes (an opener names its id, a continuation agrees with it);
4. the lifecycle and streaming discipline (:class:`_Verifier`): the first event, closed runs,
   balanced steps, messages, tool calls, reasoning and sub-agent invocations, attribution.

A broken rule raises :class:`RuleViolation` (a ProtocolError): the run ends saying which rule, and
keeps the event that broke it (bounded) for staff. Warnings are sentences appended to a list.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ag_ui import core as ag
from pydantic import BaseModel, ValidationError

from ..errors import ProtocolError, validation_problems
from .schema_strip import Malformed, strip_event

__all__ = [
    "CLIENT_PROTOCOL_VERSION",
    "RuleViolation",
    "StreamRules",
    "era_input",
    "older_than",
    "upgrade_legacy_content",
]

# The AG-UI version this product speaks, sent in RunAgentInput.protocolVersion.
CLIENT_PROTOCOL_VERSION = "1.1"
_CLIENT = (1, 1)
# How much of the offending event a violation keeps for staff.
MAX_RAW_CHARS = 4000

THINKING_TO_REASONING = {
    "THINKING_START": "REASONING_START",
    "THINKING_END": "REASONING_END",
    "THINKING_TEXT_MESSAGE_START": "REASONING_MESSAGE_START",
    "THINKING_TEXT_MESSAGE_CONTENT": "REASONING_MESSAGE_CONTENT",
    "THINKING_TEXT_MESSAGE_END": "REASONING_MESSAGE_END",
}

EVENT_CLASSES: dict[str, type[BaseModel]] = {
    member.model_fields["type"].default.value: member
    for member in ag.Event.__origin__.__args__  # type: ignore[attr-defined]
}
_SUBAGENT_LIFECYCLE = frozenset({"SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"})
_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?$")


class RuleViolation(ProtocolError):
    """The agent broke an AG-UI rule. ``message`` names it for a person; ``detail`` is the rule's
    technical wording, ``spec`` the section, ``raw`` the event as the agent sent it (bounded)."""

    code = "agent_broke_protocol"

    def __init__(self, detail: str, *, spec: str, raw: str = "") -> None:
        detail = detail if len(detail) <= 500 else detail[:499] + "…"
        self.detail = detail
        self.spec = spec
        self.raw = raw[:MAX_RAW_CHARS]
        super().__init__(f"The agent broke an AG-UI rule ({spec}): {detail.rstrip('.')}.")


def version_tuple(text: Any) -> tuple[int, ...] | None:
    match = _VERSION.match(text) if isinstance(text, str) else None
    return tuple(int(g) for g in match.groups() if g is not None) if match else None


def older_than(peer: str | None, version: tuple[int, ...]) -> bool:
    """Whether the peer's pinned version (None: current) is before ``version``."""
    parsed = version_tuple(peer) if peer else None
    return parsed is not None and parsed < version


def era_input(body: dict[str, Any], peer: str | None, warnings: list[str]) -> dict[str, Any]:
    """A RunAgentInput (its JSON, camelCase) as a peer of version ``peer`` reads it.

    Always: a legacy ``{"type": "binary"}`` part becomes typed media (its payload intact). Before
    0.0.40: content is flattened to its text, and the parts that cannot go are named in a warning.
    Before 0.0.58: no sub-agent attribution. Before 1.0: no ``protocolVersion``.
    """
    flatten = older_than(peer, (0, 0, 40))
    no_subagents = older_than(peer, (0, 0, 58))
    if older_than(peer, (1, 0)):
        body.pop("protocolVersion", None)
    for message in body.get("messages") or ():
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = message["content"] = [_upgrade_binary(part) for part in content]
            if flatten:
                texts = [
                    p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text"
                ]
                dropped = len(content) - len(texts)
                message["content"] = "".join(texts)
                if dropped:
                    warnings.append(
                        f"the agent speaks AG-UI {peer}, which DROPS non-text parts: {dropped} part(s) of "
                        f"message {message.get('id')!r} were not sent"
                    )
        if no_subagents:
            message.pop("subagentRunId", None)
    return body


def upgrade_legacy_content(messages: list[Any]) -> list[Any]:
    """Messages (JSON) with every legacy ``{"type": "binary"}`` part as the typed media it is."""
    return [
        {**m, "content": [_upgrade_binary(p) for p in m["content"]]}
        if isinstance(m, dict) and isinstance(m.get("content"), list)
        else m
        for m in messages
    ]


def _upgrade_binary(part: Any) -> Any:
    if not isinstance(part, dict) or part.get("type") != "binary":
        return part
    mime = part.get("mimeType") or "application/octet-stream"
    kind = next((k for k in ("image", "audio", "video") if mime.startswith(f"{k}/")), "document")
    if part.get("url"):
        source = {"type": "url", "value": part["url"], "mimeType": mime}
    else:
        source = {"type": "data", "value": part.get("data") or "", "mimeType": mime}
    upgraded: dict[str, Any] = {"type": kind, "source": source}
    if part.get("id"):
        upgraded["id"] = part["id"]
    return upgraded


def _dump(event: BaseModel) -> str:
    return event.model_dump_json(by_alias=True, exclude_none=True)


class StreamRules:
    """The rules for one run's stream (several runs in sequence, when the agent sends them)."""

    def __init__(self, *, peer_version: str | None = None, warnings: list[str] | None = None) -> None:
        self.peer_version = peer_version
        self.warnings = warnings if warnings is not None else []
        self.verifier = _Verifier()
        self.chunks = _Chunks()
        self._old_peer = older_than(peer_version, (0, 0, 58))

    @property
    def run_open(self) -> bool:
        return self.verifier.active

    @property
    def seen_terminal(self) -> bool:
        return self.verifier.closed_with is not None

    def admit(self, data: str, event: BaseModel | None = None) -> list[tuple[Any, str]]:
        """One payload -> the events to fold, each with the JSON text to store for it.

        ``event``: the payload already validated (the fast path of a well-formed hot event).
        """
        if event is None:
            event, data = self._parse(data)
            if event is None:
                return []
        out: list[tuple[Any, str]] = []
        for expanded, text in self.chunks.expand(event, data):
            self.verifier.check(expanded, text)
            if isinstance(expanded, ag.RunStartedEvent):
                self._check_version(expanded.protocol_version)
            out.append((expanded, text))
        return out

    def _parse(self, data: str) -> tuple[BaseModel | None, str]:
        try:
            obj = json.loads(data)
        except (ValueError, RecursionError) as exc:
            # Not an event at all: the stream cannot be read (the same as a broken SSE frame).
            raise ProtocolError(f"the agent sent an event that is not valid JSON ({exc})") from exc
        if not isinstance(obj, dict) or not isinstance(obj.get("type"), str):
            raise RuleViolation(
                "an event that is not a JSON object with a string 'type'", spec="basic/processing", raw=data
            )
        type_name = obj["type"]
        mapped = THINKING_TO_REASONING.get(type_name)
        if mapped is not None:
            obj = self._thinking(obj, type_name, mapped)
            type_name = mapped
        model = EVENT_CLASSES.get(type_name)
        if model is None:
            self.warnings.append(
                f"dropped an event of a type AG-UI 1.1 does not describe: {type_name[:100]!r}"
            )
            return None, data
        if self._old_peer and type_name in _SUBAGENT_LIFECYCLE:
            self.warnings.append(
                f"dropping {type_name}: the agent speaks AG-UI {self.peer_version}, from before sub-agents"
            )
            return None, data
        noted = len(self.warnings)
        try:
            stripped = strip_event(model, obj, self.warnings)
            event = model.model_validate(stripped)
        except Malformed as exc:
            raise RuleViolation(
                f"a {type_name} event whose {exc.pointer} is malformed: {exc.problem}",
                spec="basic/processing",
                raw=data,
            ) from exc
        except ValidationError as exc:
            problems = validation_problems(exc, limit=2, root="")
            raise RuleViolation(
                f"a {type_name} event that does not match AG-UI 1.1: {problems}",
                spec="basic/processing",
                raw=data,
            ) from exc
        if len(self.warnings) != noted or mapped is not None:
            data = _dump(event)
        return event, data

    def _thinking(self, obj: dict[str, Any], old: str, new: str) -> dict[str, Any]:
        """A retired THINKING_* event as the reasoning event it became (the same payload)."""
        self.warnings.append(f"translated the retired {old} into {new}")
        obj = {**obj, "type": new}
        obj.pop("title", None)
        if new == "REASONING_MESSAGE_START":
            obj.setdefault("role", "reasoning")
        if "messageId" not in obj and "message_id" not in obj:
            # 0.x carried no ids: one span and one message at a time, under stable ids.
            obj["messageId"] = (
                "thinking" if new in ("REASONING_START", "REASONING_END") else "thinking-message"
            )
        return obj

    def _check_version(self, declared: str | None) -> None:
        if declared is None:
            return
        parsed = version_tuple(declared)
        if parsed is None:
            self.warnings.append(
                f"the agent declares protocolVersion {declared[:40]!r}, which this product cannot interpret: "
                f"it is read as AG-UI {CLIENT_PROTOCOL_VERSION}"
            )
        elif parsed[:2] > _CLIENT:
            self.warnings.append(
                f"the agent declares AG-UI {declared}, newer than the {CLIENT_PROTOCOL_VERSION} this product "
                "speaks: what it does not know is stripped"
            )


# An event type -> the name of its check's method (built as types are first seen).
_HANDLERS: dict[str, str] = {}
_CHUNKS = (ag.TextMessageChunkEvent, ag.ToolCallChunkEvent, ag.ReasoningMessageChunkEvent)


class _Chunks:
    """Chunk expansion (spec ``basic/patterns/streaming``): one open lane each for text, tool calls
    and reasoning. RAW stands aside; any other event closes the open lanes first."""

    def __init__(self) -> None:
        self.text: dict[str, Any] | None = None
        self.tool: dict[str, Any] | None = None
        self.reasoning: dict[str, Any] | None = None

    def expand(self, event: Any, data: str) -> list[tuple[Any, str]]:
        if self.text is None and self.tool is None and self.reasoning is None and type(event) not in _CHUNKS:
            return [(event, data)]  # most of a stream: nothing to expand, no lane to close
        if isinstance(event, ag.TextMessageChunkEvent):
            return self._close("tool", "reasoning") + self._text_chunk(event)
        if isinstance(event, ag.ToolCallChunkEvent):
            return self._close("text", "reasoning") + self._tool_chunk(event)
        if isinstance(event, ag.ReasoningMessageChunkEvent):
            return self._close("text", "tool") + self._reasoning_chunk(event)
        if isinstance(event, ag.RawEvent):
            return [(event, data)]
        return [*self._close("text", "tool", "reasoning"), (event, data)]

    def _close(self, *lanes: str) -> list[tuple[Any, str]]:
        out = []
        for lane in lanes:
            opened = getattr(self, lane)
            if opened is None:
                continue
            setattr(self, lane, None)
            sub = opened["subagent"]
            if lane == "text":
                end: Any = ag.TextMessageEndEvent(message_id=opened["id"], subagent_run_id=sub)
            elif lane == "tool":
                end = ag.ToolCallEndEvent(tool_call_id=opened["id"], subagent_run_id=sub)
            else:
                end = ag.ReasoningMessageEndEvent(message_id=opened["id"], subagent_run_id=sub)
            out.append((end, _dump(end)))
        return out

    @staticmethod
    def _agree(kind: str, field: str, given: Any, opened: Any) -> None:
        if given is not None and opened is not None and given != opened:
            raise RuleViolation(
                f"{kind} {field} {given!r} does not match the open stream's {field} {opened!r}",
                spec="basic/patterns/streaming",
            )

    def _text_chunk(self, event: ag.TextMessageChunkEvent) -> list[tuple[Any, str]]:
        out: list[tuple[Any, str]] = []
        lane = self.text
        if event.message_id is not None and (lane is None or lane["id"] != event.message_id):
            out += self._close("text")
            role = event.role or "assistant"
            lane = self.text = {"id": event.message_id, "role": role, "subagent": event.subagent_run_id}
            start = ag.TextMessageStartEvent(
                message_id=event.message_id, role=role, name=event.name, subagent_run_id=event.subagent_run_id
            )
            out.append((start, _dump(start)))
        elif lane is None:
            raise RuleViolation(
                "First TEXT_MESSAGE_CHUNK must have a messageId", spec="basic/patterns/streaming"
            )
        else:
            self._agree("TEXT_MESSAGE_CHUNK", "role", event.role, lane["role"])
            self._agree("TEXT_MESSAGE_CHUNK", "subagentRunId", event.subagent_run_id, lane["subagent"])
        if event.delta:
            content = ag.TextMessageContentEvent(
                message_id=lane["id"],
                delta=event.delta,
                subagent_run_id=lane["subagent"],
                metadata=event.metadata,
            )
            out.append((content, _dump(content)))
        return out

    def _tool_chunk(self, event: ag.ToolCallChunkEvent) -> list[tuple[Any, str]]:
        out: list[tuple[Any, str]] = []
        lane = self.tool
        if event.tool_call_id is not None and (lane is None or lane["id"] != event.tool_call_id):
            out += self._close("tool")
            if not event.tool_call_name:
                raise RuleViolation(
                    "First TOOL_CALL_CHUNK must have a toolCallName", spec="basic/patterns/streaming"
                )
            lane = self.tool = {
                "id": event.tool_call_id, "name": event.tool_call_name, "parent": event.parent_message_id,
                "subagent": event.subagent_run_id,
            }  # fmt: skip
            start = ag.ToolCallStartEvent(
                tool_call_id=event.tool_call_id, tool_call_name=event.tool_call_name,
                parent_message_id=event.parent_message_id, subagent_run_id=event.subagent_run_id,
            )  # fmt: skip
            out.append((start, _dump(start)))
        elif lane is None:
            raise RuleViolation(
                "First TOOL_CALL_CHUNK must have a toolCallId", spec="basic/patterns/streaming"
            )
        else:
            self._agree("TOOL_CALL_CHUNK", "toolCallName", event.tool_call_name, lane["name"])
            self._agree("TOOL_CALL_CHUNK", "parentMessageId", event.parent_message_id, lane["parent"])
            self._agree("TOOL_CALL_CHUNK", "subagentRunId", event.subagent_run_id, lane["subagent"])
        if event.delta:
            args = ag.ToolCallArgsEvent(
                tool_call_id=lane["id"],
                delta=event.delta,
                subagent_run_id=lane["subagent"],
                metadata=event.metadata,
            )
            out.append((args, _dump(args)))
        return out

    def _reasoning_chunk(self, event: ag.ReasoningMessageChunkEvent) -> list[tuple[Any, str]]:
        out: list[tuple[Any, str]] = []
        lane = self.reasoning
        if event.message_id is not None and (lane is None or lane["id"] != event.message_id):
            out += self._close("reasoning")
            lane = self.reasoning = {"id": event.message_id, "subagent": event.subagent_run_id}
            start = ag.ReasoningMessageStartEvent(
                message_id=event.message_id, role="reasoning", subagent_run_id=event.subagent_run_id
            )
            out.append((start, _dump(start)))
        elif lane is None:
            raise RuleViolation(
                "First REASONING_MESSAGE_CHUNK must have a messageId", spec="basic/patterns/streaming"
            )
        else:
            self._agree("REASONING_MESSAGE_CHUNK", "subagentRunId", event.subagent_run_id, lane["subagent"])
        if event.delta:
            content = ag.ReasoningMessageContentEvent(
                message_id=lane["id"], delta=event.delta, subagent_run_id=lane["subagent"]
            )
            out.append((content, _dump(content)))
        return out


class _Verifier:
    """The lifecycle (spec ``events/lifecycle``) and the bracketing of everything streamed."""

    def __init__(self) -> None:
        self.first = True
        self.active = False
        self.run_id: str | None = None
        self.closed_with: str | None = None
        self._reset()

    def _reset(self) -> None:
        # id -> the subagentRunId its opener carried.
        self.messages: dict[str, str | None] = {}
        self.tools: dict[str, str | None] = {}
        self.reasoning: dict[str, str | None] = {}
        self.spans: set[str] = set()
        self.steps: list[str] = []
        self.subagents: set[str] = set()

    def check(self, event: Any, raw: str) -> None:
        try:
            self._check(event)
        except RuleViolation as exc:
            exc.raw = exc.raw or raw[:MAX_RAW_CHARS]
            raise

    def _check(self, event: Any) -> None:
        kind = event.type.value
        lifecycle = "events/lifecycle"
        if self.first:
            self.first = False
            if kind not in ("RUN_STARTED", "RUN_ERROR"):
                raise RuleViolation(
                    f"First event must be 'RUN_STARTED' or 'RUN_ERROR', not {kind!r}", spec=lifecycle
                )
        elif not self.active:
            if self.closed_with == "RUN_FINISHED" and kind not in ("RUN_STARTED", "RUN_ERROR"):
                raise RuleViolation(
                    f"The run has already finished with 'RUN_FINISHED': only RUN_STARTED or RUN_ERROR may "
                    f"follow it, not {kind!r}",
                    spec=lifecycle,
                )
            if self.closed_with == "RUN_ERROR" and kind != "RUN_STARTED":
                raise RuleViolation(
                    "The run has already errored with 'RUN_ERROR': only RUN_STARTED may follow it, "
                    f"not {kind!r}",
                    spec=lifecycle,
                )
        name = _HANDLERS.get(kind)
        if name is None:
            name = _HANDLERS[kind] = f"_{kind.lower()}"
        handler = getattr(self, name, None)
        if handler is not None:
            handler(event)

    # --- the run ------------------------------------------------------------------------------

    def _run_started(self, event: ag.RunStartedEvent) -> None:
        if self.active:
            raise RuleViolation(
                "Cannot send 'RUN_STARTED' while a run is still active", spec="events/lifecycle"
            )
        self.active, self.run_id, self.closed_with = True, event.run_id, None
        self._reset()

    def _run_finished(self, event: ag.RunFinishedEvent) -> None:
        if self.run_id is not None and event.run_id != self.run_id:
            raise RuleViolation(
                f"RUN_FINISHED runId {event.run_id!r} does not match the open run {self.run_id!r}",
                spec="events/lifecycle",
            )
        for what, open_ids in (
            ("text messages", self.messages), ("tool calls", self.tools),
            ("reasoning messages", self.reasoning), ("steps", self.steps),
            ("subagent invocations", self.subagents),
        ):  # fmt: skip
            if open_ids:
                names = ", ".join(sorted(open_ids))[:300]
                raise RuleViolation(
                    f"Cannot send 'RUN_FINISHED' while {what} are still active: {names}",
                    spec="events/subagents" if what == "subagent invocations" else "events/lifecycle",
                )
        self.active, self.closed_with = False, "RUN_FINISHED"

    def _run_error(self, event: ag.RunErrorEvent) -> None:
        self.active, self.closed_with = False, "RUN_ERROR"
        self._reset()

    def _step_started(self, event: ag.StepStartedEvent) -> None:
        if event.step_name in self.steps:
            raise RuleViolation(f"Step {event.step_name!r} is already active", spec="events/lifecycle")
        self.steps.append(event.step_name)

    def _step_finished(self, event: ag.StepFinishedEvent) -> None:
        if event.step_name not in self.steps:
            raise RuleViolation(
                f"Cannot send 'STEP_FINISHED' for step {event.step_name!r} that was not started",
                spec="events/lifecycle",
            )
        self.steps.remove(event.step_name)

    # --- bracketed entities -------------------------------------------------------------------

    def _open(self, table: dict[str, str | None], what: str, ident: str, event: Any, spec: str) -> None:
        if ident in table:
            raise RuleViolation(f"A {what} with ID {ident!r} is already in progress", spec=spec)
        table[ident] = event.subagent_run_id

    def _owner(self, table: dict[str, str | None], what: str, ident: str, event: Any, spec: str) -> None:
        if ident not in table:
            raise RuleViolation(f"No active {what} found with ID {ident!r}", spec=spec)
        opened, given = table[ident], getattr(event, "subagent_run_id", None)
        if given is not None and opened is not None and given != opened:
            raise RuleViolation(
                f"{event.type.value} subagentRunId {given!r} does not match {opened!r}, which opened {what} "
                f"{ident!r}",
                spec="events/subagents",
            )

    def _text_message_start(self, e: ag.TextMessageStartEvent) -> None:
        self._open(self.messages, "text message", e.message_id, e, "events/text-messages")

    def _text_message_content(self, e: ag.TextMessageContentEvent) -> None:
        self._owner(self.messages, "text message", e.message_id, e, "events/text-messages")

    def _text_message_end(self, e: ag.TextMessageEndEvent) -> None:
        self._owner(self.messages, "text message", e.message_id, e, "events/text-messages")
        del self.messages[e.message_id]

    def _tool_call_start(self, e: ag.ToolCallStartEvent) -> None:
        self._open(self.tools, "tool call", e.tool_call_id, e, "events/tool-calls")

    def _tool_call_args(self, e: ag.ToolCallArgsEvent) -> None:
        self._owner(self.tools, "tool call", e.tool_call_id, e, "events/tool-calls")

    def _tool_call_end(self, e: ag.ToolCallEndEvent) -> None:
        self._owner(self.tools, "tool call", e.tool_call_id, e, "events/tool-calls")
        del self.tools[e.tool_call_id]

    def _reasoning_start(self, e: ag.ReasoningStartEvent) -> None:
        if e.message_id in self.spans:
            raise RuleViolation(
                f"A reasoning with ID {e.message_id!r} is already in progress", spec="events/reasoning"
            )
        self.spans.add(e.message_id)

    def _reasoning_end(self, e: ag.ReasoningEndEvent) -> None:
        if e.message_id not in self.spans:
            raise RuleViolation(
                f"No active reasoning found with ID {e.message_id!r}", spec="events/reasoning"
            )
        self.spans.discard(e.message_id)

    def _reasoning_message_start(self, e: ag.ReasoningMessageStartEvent) -> None:
        self._open(self.reasoning, "reasoning message", e.message_id, e, "events/reasoning")

    def _reasoning_message_content(self, e: ag.ReasoningMessageContentEvent) -> None:
        self._owner(self.reasoning, "reasoning message", e.message_id, e, "events/reasoning")

    def _reasoning_message_end(self, e: ag.ReasoningMessageEndEvent) -> None:
        self._owner(self.reasoning, "reasoning message", e.message_id, e, "events/reasoning")
        del self.reasoning[e.message_id]

    def _subagent_started(self, e: ag.SubagentStartedEvent) -> None:
        if e.subagent_run_id in self.subagents:
            raise RuleViolation(
                f"Subagent invocation {e.subagent_run_id!r} is already active", spec="events/subagents"
            )
        self.subagents.add(e.subagent_run_id)

    def _subagent_finished(self, e: Any) -> None:
        if e.subagent_run_id not in self.subagents:
            raise RuleViolation(
                f"Cannot send {e.type.value!r} for subagent invocation {e.subagent_run_id!r} "
                "that is not active",
                spec="events/subagents",
            )
        self.subagents.discard(e.subagent_run_id)

    _subagent_error = _subagent_finished

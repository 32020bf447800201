"""A conversation with a real AG-UI peer through the product's SDK, as a careful client holds it.

Each run goes through ``AgUiAgent.run_frames`` and is folded with ``TranscriptBuilder``, once on its
own and once with the thread's earlier runs (as the product folds a thread: ``fold_thread``, which
is where a resume's result must meet its original call). The history
sent back is AG-UI's client's full history (``history.full_history``).
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import RunAgentInput, Tool

from agents_ui.sdk import AgUiAgent, ToolCallRecord, Transcript, TranscriptBuilder
from tests.interop import history


@dataclass
class RunResult:
    request: RunAgentInput
    events: list[Any]
    frames: list[dict[str, Any]]
    transcript: Transcript

    @property
    def types(self) -> list[str]:
        return [frame["type"] for frame in self.frames]

    @property
    def text(self) -> str:
        """What the agent itself said in this run (not a MESSAGES_SNAPSHOT's earlier answers, nor a
        sub-agent's)."""
        streamed = {f.get("messageId") for f in self.frames if f["type"].startswith("TEXT_MESSAGE")}
        return "".join(
            m.text
            for m in self.transcript.messages
            if m.role == "assistant" and m.id in streamed and not m.subagent_run_id
        )


@dataclass
class AgUiThread:
    url: str
    thread_id: str = field(default_factory=lambda: f"thread-{uuid.uuid4().hex[:12]}")
    messages: list[dict[str, Any]] = field(default_factory=list)
    state: Any = None
    runs: list[RunResult] = field(default_factory=list)
    # Each run folded with the ones before it, oldest first.
    thread: list[Transcript] = field(default_factory=list)

    def call(self, tool_call_id: str) -> ToolCallRecord:
        """The thread's latest call with this id, as the thread shows it."""
        for transcript in reversed(self.thread):
            if tool_call_id in transcript.tool_calls:
                return transcript.tool_calls[tool_call_id]
        raise KeyError(tool_call_id)

    @property
    def last(self) -> RunResult:
        return self.runs[-1]

    async def send(
        self,
        text: str | None = None,
        *,
        resume: list[dict[str, Any]] | None = None,
        messages: list[dict[str, Any]] | None = None,
        tools: list[Tool] | None = None,
    ) -> RunResult:
        sent = list(self.messages if messages is None else messages)
        if text is not None:
            sent.append(history.user(f"user-{uuid.uuid4().hex[:8]}", text))
        request = RunAgentInput(
            thread_id=self.thread_id,
            run_id=f"run-{uuid.uuid4().hex[:12]}",
            protocol_version="1.0",
            messages=sent,
            state=self.state,
            tools=tools or [],
            context=[],
            resume=resume,
        )
        agent = AgUiAgent(self.url, timeout=60)
        own = TranscriptBuilder()
        folded = TranscriptBuilder(earlier=self.thread)
        events: list[Any] = []
        frames: list[dict[str, Any]] = []
        async for event, raw in agent.run_frames(request):
            events.append(event)
            frames.append(json.loads(raw))
            own.apply(event)
            folded.apply(event)
        self.thread.append(folded.transcript)
        result = RunResult(request, events, frames, own.transcript)
        self.runs.append(result)
        self.messages = history.full_history(sent, frames)
        if own.transcript.state is not None:
            self.state = own.transcript.state
        return result

    async def decide(self, payload: Any, **kwargs: Any) -> RunResult:
        """Answer every open interrupt of the last run with ``payload``."""
        interrupts = self.last.transcript.open_interrupts
        assert interrupts, f"the last run ended without an interrupt: {self.last.types}"
        entries = [{"interruptId": i.id, "status": "resolved", "payload": payload} for i in interrupts]
        return await self.send(resume=entries, **kwargs)

    def pending_call(self) -> str:
        answered = {m.get("toolCallId") for m in self.messages if m["role"] == "tool"}
        for message in reversed(self.messages):
            for call in message.get("toolCalls") or []:
                if call["id"] not in answered:
                    return call["id"]
        raise AssertionError("no tool call is waiting for an answer")

"""What every AG-UI demo agent shares: the agent's shape, its run context, and the event sequences.

Every agent is deterministic and speaks AG-UI 1.0 exactly as a real server does (docs/PROTOCOLS.md 1):
`ag_ui.core` types for every event and declaration, so what goes on the wire is valid by
construction. The run envelope is in running.py; the HTTP side (SSE framing, routes) in ../views.py.

An agent that remembers something between runs keeps it in its own module and forgets it in
`reset`. That assumes one server process, which is how the product serves its demo agents.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    IdentityCapabilities,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallResultEvent,
    UserMessage,
)

from agents_ui.demo.gate import MAX_BODY_BYTES
from agents_ui.demo.replies import deltas, paced, pause

PROVIDER = "Agents UI demo agents"
FRAMEWORK = "agents-ui-demo"


class RunFailure(Exception):
    """Ends a run with RUN_ERROR: what a real agent does when it cannot go on."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class RunContext:
    """One run: its input, and how it will end (set by the agent while it runs)."""

    input: RunAgentInput
    outcome: Any = None
    result: Any = None

    @property
    def user_text(self) -> str:
        return last_user_text(self.input)


def new_id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def last_user_message(run_input: RunAgentInput) -> UserMessage | None:
    for message in reversed(run_input.messages):
        if isinstance(message, UserMessage):
            return message
    return None


def last_user_text(run_input: RunAgentInput) -> str:
    message = last_user_message(run_input)
    if message is None:
        return ""
    if isinstance(message.content, str):
        return message.content
    return " ".join(part.text for part in message.content if getattr(part, "type", "") == "text")


# --- Event sequences shared by the agents ------------------------------------------------------------


async def text_message(
    text: str, *, message_id: str | None = None, subagent_run_id: str | None = None
) -> AsyncIterator[BaseEvent]:
    """A streamed assistant message: START, one CONTENT per delta (paced), END."""
    message_id = message_id or new_id("msg")
    yield TextMessageStartEvent(message_id=message_id, role="assistant", subagent_run_id=subagent_run_id)
    async for delta in paced(deltas(text)):
        yield TextMessageContentEvent(message_id=message_id, delta=delta, subagent_run_id=subagent_run_id)
    yield TextMessageEndEvent(message_id=message_id, subagent_run_id=subagent_run_id)


async def reasoning(text: str, *, streaming: bool) -> AsyncIterator[BaseEvent]:
    """A reasoning block: streamed delta by delta, or (not streaming) delivered whole at the end."""
    message_id = new_id("reasoning")
    yield ReasoningStartEvent(message_id=message_id)
    yield ReasoningMessageStartEvent(message_id=message_id, role="reasoning")
    if streaming:
        async for delta in paced(deltas(text, words_per_delta=3)):
            yield ReasoningMessageContentEvent(message_id=message_id, delta=delta)
    else:
        await pause()
        yield ReasoningMessageContentEvent(message_id=message_id, delta=text)
    yield ReasoningMessageEndEvent(message_id=message_id)
    yield ReasoningEndEvent(message_id=message_id)


def args_fragments(args: dict[str, Any]) -> list[str]:
    """Tool arguments as a few JSON fragments that concatenate to one document, as models stream them."""
    document = json.dumps(args)
    size = max(8, len(document) // 3)
    return [document[i : i + size] for i in range(0, len(document), size)]


def tool_result(tool_call_id: str, output: Any) -> ToolCallResultEvent:
    content = output if isinstance(output, str) else json.dumps(output)
    return ToolCallResultEvent(
        message_id=new_id("tool"), tool_call_id=tool_call_id, content=content, role="tool"
    )


# --- The agent ---------------------------------------------------------------------------------------


class AgUiDemoAgent:
    """One AG-UI demo agent. Subclasses declare (`capabilities`) and behave (`run`)."""

    slug: str = ""
    name: str = ""
    description: str = ""
    version: str = "1.0.0"
    # A legacy server predates timestamps and protocol versions; the others send both.
    modern: bool = True
    # The largest RunAgentInput this agent reads (413 past it).
    max_input_bytes: int = MAX_BODY_BYTES

    def capabilities(self, documentation_url: str) -> AgentCapabilities | None:
        """The current declaration, or None: this agent has no discovery route (404)."""
        raise NotImplementedError

    def identity(self, documentation_url: str, **metadata: Any) -> IdentityCapabilities:
        return IdentityCapabilities(
            name=self.name,
            type=FRAMEWORK,
            description=self.description,
            version=self.version,
            provider=PROVIDER,
            documentation_url=documentation_url,
            metadata=metadata or None,
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        raise NotImplementedError
        yield  # pragma: no cover - makes this an async generator

    def reset(self) -> None:
        """Forget what earlier runs left behind (tests, and a fresh demo). Most agents keep nothing."""

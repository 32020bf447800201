"""The AG-UI demo agents: what each declares, and what each run emits.

Every agent is deterministic and speaks AG-UI 1.0 exactly as a real server does (docs/PROTOCOLS.md 1):
`ag_ui.core` types for every event and declaration, so what goes on the wire is valid by
construction. The HTTP side (SSE framing, routes) is in views.py.

In-process stores (the operations agent's open interrupts, the toolsmith's tool list) live at module
level. That assumes one server process, which is how the product serves its demo agents.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import logging
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import unquote, urlsplit

import filetype
from ag_ui.core import (
    PROTOCOL_VERSION,
    AgentCapabilities,
    AssistantMessage,
    BaseEvent,
    CustomEvent,
    DataSource,
    DocumentPart,
    ExecutionCapabilities,
    FunctionCall,
    HumanInTheLoopCapabilities,
    IdentityCapabilities,
    ImagePart,
    Interrupt,
    MessagesSnapshotEvent,
    MultiAgentCapabilities,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    OutputCapabilities,
    ReasoningCapabilities,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessage,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateCapabilities,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    SubagentFinishedEvent,
    SubagentInfo,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    Tool,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
    UrlSource,
    UserMessage,
)

from agents_ui.demo.replies import deltas, first_amount, human_size, keywords, paced, pause, topic_of

logger = logging.getLogger(__name__)

PROVIDER = "Agents UI demo agents"
FRAMEWORK = "agents-ui-demo"
INTERRUPT_TTL = timedelta(minutes=15)
DOCUMENT_MAX_BYTES = 10 * 1024 * 1024
DOCUMENT_MIME_TYPES = ["application/pdf", "image/png", "image/jpeg", "image/webp", "image/gif"]


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


# --- The agents -------------------------------------------------------------------------------------


class AgUiDemoAgent:
    """One AG-UI demo agent. Subclasses declare (`capabilities`) and behave (`run`)."""

    slug: str = ""
    name: str = ""
    description: str = ""
    version: str = "1.0.0"
    # A legacy server predates timestamps and protocol versions; the others send both.
    modern: bool = True

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


class ResearchAssistant(AgUiDemoAgent):
    slug = "research-assistant"
    name = "Research Assistant"
    description = (
        "Researches a question: thinks out loud, searches and reads sources in parallel, and answers "
        "with a structured summary and its sources."
    )
    version = "2.3.1"
    tools = [
        Tool(
            name="web_search",
            description="Search the web and return the top results with titles, URLs and snippets.",
            parameters={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "What to search for."},
                    "maxResults": {"type": "integer", "minimum": 1, "maximum": 10, "default": 3},
                },
                "required": ["query"],
            },
        ),
        Tool(
            name="read_paper",
            description="Fetch a paper or article from a scholarly index and extract its abstract.",
            parameters={
                "type": "object",
                "properties": {
                    "topic": {"type": "string"},
                    "yearFrom": {"type": "integer", "minimum": 1900},
                },
                "required": ["topic"],
            },
        ),
    ]

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url, model="deterministic-demo"),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(
                supported=True, items=self.tools, parallel_calls=True, client_provided=False
            ),
            output=OutputCapabilities(
                structured_output=True, supported_mime_types=["text/markdown", "application/json"]
            ),
            reasoning=ReasoningCapabilities(supported=True, streaming=True, encrypted=False),
            execution=ExecutionCapabilities(max_iterations=6, max_execution_time=60_000),
            human_in_the_loop=HumanInTheLoopCapabilities(supported=True, feedback=True),
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        topic = topic_of(ctx.user_text)
        terms = keywords(ctx.user_text)
        query = " ".join(terms)
        thought = (
            f"The question is about “{topic}”. I will search the web and a scholarly index at the same "
            f"time for “{query}”, compare what they say, and keep only claims two sources agree on."
        )
        async for event in reasoning(thought, streaming=True):
            yield event

        # Two calls opened before either ends: the parallel calls the declaration promises.
        yield StepStartedEvent(step_name="gather sources")
        calls = [
            (new_id("call"), "web_search", {"query": query, "maxResults": 3}),
            (new_id("call"), "read_paper", {"topic": query, "yearFrom": 2020}),
        ]
        for call_id, tool_name, _ in calls:
            yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=tool_name)
        fragments = [args_fragments(args) for _, _, args in calls]
        for index in range(max(len(f) for f in fragments)):
            for (call_id, _, _), parts in zip(calls, fragments, strict=True):
                if index < len(parts):
                    yield ToolCallArgsEvent(tool_call_id=call_id, delta=parts[index])
            await pause()
        for call_id, _, _ in calls:
            yield ToolCallEndEvent(tool_call_id=call_id)
        sources = [
            {
                "title": f"{term.capitalize()}: a practical overview",
                "url": f"https://example.org/search?q={term}",
                "snippet": f"What practitioners currently know about {term}.",
            }
            for term in terms
        ]
        yield tool_result(calls[0][0], {"results": sources})
        yield tool_result(
            calls[1][0],
            {"abstract": f"A 2023 survey of {query}: findings agree on the main trade-offs.", "year": 2023},
        )
        yield StepFinishedEvent(step_name="gather sources")

        findings = [f"Sources agree on the basics of {term}." for term in terms]
        answer = (
            f"Here is what I found about {topic}.\n\n"
            + "\n".join(f"- {finding}" for finding in findings)
            + f"\n\nI read {len(sources) + 1} sources; the structured summary lists them."
        )
        async for event in text_message(answer):
            yield event
        # The structured output: a JSON document a program can consume, alongside the prose.
        ctx.result = {"topic": topic, "findings": findings, "sources": sources, "confidence": 0.8}


class Orchestrator(AgUiDemoAgent):
    slug = "orchestrator"
    name = "Project Orchestrator"
    description = (
        "Splits a request across specialist sub-agents: delegates research and drafting, then hands the "
        "conversation off to a reviewer."
    )
    version = "1.2.0"
    subagents = [
        SubagentInfo(name="researcher", description="Finds facts and sources for a brief."),
        SubagentInfo(name="fact-checker", description="Verifies each claim the researcher makes."),
        SubagentInfo(name="writer", description="Turns research notes into a clear draft."),
        SubagentInfo(name="reviewer", description="Takes over the conversation to review and finalise."),
    ]

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            multi_agent=MultiAgentCapabilities(
                supported=True, delegation=True, handoffs=True, subagents=self.subagents
            ),
            tools=ToolsCapabilities(
                supported=True,
                parallel_calls=False,
                items=[
                    Tool(
                        name="delegate",
                        description="Give a sub-task to a sub-agent and wait for its result.",
                        parameters={
                            "type": "object",
                            "properties": {
                                "subagent": {"type": "string", "enum": [s.name for s in self.subagents]},
                                "task": {"type": "string"},
                            },
                            "required": ["subagent", "task"],
                        },
                    ),
                    Tool(
                        name="handoff",
                        description="Transfer the conversation to another agent for good.",
                        parameters={
                            "type": "object",
                            "properties": {"to": {"type": "string"}, "reason": {"type": "string"}},
                            "required": ["to"],
                        },
                    ),
                ],
            ),
            execution=ExecutionCapabilities(max_iterations=10),
        )

    async def _delegate(
        self, subagent: str, task: str, text: str, parent_subagent_run_id: str | None = None
    ) -> AsyncIterator[BaseEvent]:
        description = next(s.description for s in self.subagents if s.name == subagent)
        call_id = new_id("call")
        # A nested sub-agent is started by its parent sub-agent, not by a tool call of the orchestrator.
        if parent_subagent_run_id is None:
            yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name="delegate")
            yield ToolCallArgsEvent(
                tool_call_id=call_id, delta=json.dumps({"subagent": subagent, "task": task})
            )
            yield ToolCallEndEvent(tool_call_id=call_id)
        run_id = new_id(f"sub-{subagent}")
        yield SubagentStartedEvent(
            subagent_run_id=run_id,
            name=subagent,
            description=description,
            parent_subagent_run_id=parent_subagent_run_id,
            parent_tool_call_id=call_id if parent_subagent_run_id is None else None,
        )
        async for event in text_message(text, subagent_run_id=run_id):
            yield event
        if subagent == "researcher":
            async for event in self._delegate(
                "fact-checker", f"verify the notes on {task}", "Checked 3 claims: all hold.", run_id
            ):
                yield event
        yield SubagentFinishedEvent(
            subagent_run_id=run_id, result={"subagent": subagent, "task": task}, outcome={"type": "success"}
        )
        if parent_subagent_run_id is None:
            yield tool_result(call_id, {"subagent": subagent, "status": "done"})

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        topic = topic_of(ctx.user_text)
        # The person may address one sub-agent directly (docs/PROTOCOLS.md 1.1: forwardedProps.subagent).
        chosen = (
            (ctx.input.forwarded_props or {}).get("subagent")
            if isinstance(ctx.input.forwarded_props, dict)
            else None
        )
        if chosen in {s.name for s in self.subagents}:
            async for event in text_message(f"Passing “{topic}” straight to the {chosen}, as you asked."):
                yield event
            async for event in self._delegate(
                chosen, topic, f"{chosen.capitalize()} here, on {topic}: done as asked."
            ):
                yield event
            ctx.result = {"answeredBy": chosen}
            return
        async for event in text_message(
            f"Plan for “{topic}”: research first, then a draft, then a review. Delegating now."
        ):
            yield event
        async for event in self._delegate(
            "researcher", topic, f"Research notes on {topic}: three key facts, two sources."
        ):
            yield event
        async for event in self._delegate("writer", topic, f"Draft: a one-page brief on {topic}."):
            yield event

        # The handoff: the reviewer takes the conversation over and speaks last, as itself.
        yield CustomEvent(
            name="agents_ui.handoff",
            value={
                "from": "orchestrator",
                "to": "reviewer",
                "reason": "final review belongs to the reviewer",
            },
        )
        reviewer = new_id("sub-reviewer")
        yield SubagentStartedEvent(
            subagent_run_id=reviewer,
            name="reviewer",
            description=self.subagents[3].description,
            metadata={"mode": "handoff"},
        )
        async for event in text_message(
            f"Reviewer here: the brief on {topic} is ready. Ask me for changes.", subagent_run_id=reviewer
        ):
            yield event
        yield SubagentFinishedEvent(subagent_run_id=reviewer, outcome={"type": "success"})
        ctx.result = {"handedOffTo": "reviewer"}


@dataclass
class ReceivedFile:
    name: str
    mime_type: str
    size: int | None = None
    pages: int | None = None
    note: str = ""


_DELETE_TARGET = re.compile(
    r"\b(?:delete|purge|remove|erase)\s+(?:(?:all|the|old|stale|of|my|our)\s+)*(\w+)", re.I
)
_PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


def pdf_page_count(data: bytes) -> int:
    """Count page objects (/Type /Page), not page-tree nodes (/Type /Pages)."""
    return len(_PDF_PAGE.findall(data))


class DocumentReviewer(AgUiDemoAgent):
    slug = "document-reviewer"
    name = "Document Reviewer"
    description = (
        "Reviews the PDFs and images you attach: says what it received (names, types, sizes, PDF page "
        "counts) and what it would check next."
    )
    version = "0.9.4"

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            multimodal=MultimodalCapabilities(
                input=MultimodalInputCapabilities(image=True, pdf=True, audio=False, video=False, file=False),
                output=MultimodalOutputCapabilities(image=False, audio=False),
            ),
            reasoning=ReasoningCapabilities(supported=True, streaming=False),
            output=OutputCapabilities(supported_mime_types=["text/markdown"]),
            # AG-UI has no field for a size limit: declared here so a client can enforce it up front.
            custom={"input": {"maxBytes": DOCUMENT_MAX_BYTES, "mimeTypes": DOCUMENT_MIME_TYPES}},
        )

    def _inspect(self, index: int, part: ImagePart | DocumentPart) -> ReceivedFile:
        metadata = part.metadata if isinstance(part.metadata, dict) else {}
        source = part.source
        if isinstance(source, DataSource):
            name = str(metadata.get("filename") or metadata.get("name") or f"attachment-{index}")
            try:
                data = base64.b64decode(source.value, validate=True)
            except (binascii.Error, ValueError):
                return ReceivedFile(name, source.mime_type, note="its data is not valid base64")
            sniffed = filetype.guess_mime(data) or source.mime_type
            received = ReceivedFile(name, sniffed, size=len(data))
            if sniffed != source.mime_type:
                received.note = f"labelled {source.mime_type} but the bytes are {sniffed}"
            if len(data) > DOCUMENT_MAX_BYTES:
                received.note = f"over my {human_size(DOCUMENT_MAX_BYTES)} limit, so I did not read it"
            elif sniffed == "application/pdf":
                received.pages = pdf_page_count(data)
            return received
        if isinstance(source, UrlSource):
            name = str(metadata.get("filename") or unquote(urlsplit(source.value).path.rsplit("/", 1)[-1]))
            # Never fetched: a demo agent must not become a way to make the server call arbitrary URLs.
            return ReceivedFile(name or f"attachment-{index}", source.mime_type or "unknown", note="by URL")
        return ReceivedFile(
            f"attachment-{index}", source.mime_type or "unknown", note="a provider file handle I cannot open"
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        message = last_user_message(ctx.input)
        parts = [] if message is None or isinstance(message.content, str) else message.content
        media = [part for part in parts if isinstance(part, (ImagePart, DocumentPart))]
        others = [part.type for part in parts if part.type not in ("text", "image", "document")]
        files = [self._inspect(index, part) for index, part in enumerate(media, start=1)]

        if not files:
            thought = "No attachment in this message: nothing to review yet."
            answer = (
                f"You asked about “{topic_of(ctx.user_text)}”, but I review documents: attach a PDF or an "
                f"image (up to {human_size(DOCUMENT_MAX_BYTES)}) and I will tell you what I see."
            )
        else:
            thought = f"{len(files)} attachment(s). Checked each type on its bytes, counted PDF page objects."
            lines = []
            for received in files:
                details = [received.mime_type]
                if received.size is not None:
                    details.append(human_size(received.size))
                if received.pages is not None:
                    details.append(f"{received.pages} page{'s' if received.pages != 1 else ''}")
                line = f"- **{received.name}**: {', '.join(details)}"
                lines.append(line + (f" ({received.note})" if received.note else ""))
            answer = f"I received {len(files)} file{'s' if len(files) != 1 else ''}:\n" + "\n".join(lines)
            if ctx.user_text.strip():
                answer += f"\n\nAbout your question, “{topic_of(ctx.user_text)}”: the files look complete."
        if others:
            answer += f"\n\nI cannot read {', '.join(sorted(set(others)))} input, so I skipped it."

        # Not streaming: the whole reasoning arrives at once, after the work.
        async for event in reasoning(thought, streaming=False):
            yield event
        async for event in text_message(answer):
            yield event
        ctx.result = {
            "files": [
                {"name": f.name, "mimeType": f.mime_type, "size": f.size, "pages": f.pages} for f in files
            ]
        }


@dataclass
class OpenInterrupt:
    """An approval the operations agent is waiting for, until a resumed run answers it."""

    interrupt_id: str
    thread_id: str
    tool_call_id: str
    tool_name: str
    args: dict[str, Any]
    expires_at: datetime
    history: list[Any] = field(default_factory=list)


# interrupt id -> the interrupt. One server process (see the module docstring).
OPEN_INTERRUPTS: dict[str, OpenInterrupt] = {}


class Operations(AgUiDemoAgent):
    slug = "operations"
    name = "Operations Agent"
    description = (
        "Runs back-office operations. Anything sensitive (moving money, deleting records) stops for your "
        "approval first, and you may edit the arguments before approving."
    )
    version = "3.0.2"
    tool_schemas: dict[str, dict[str, Any]] = {
        "transfer_funds": {
            "type": "object",
            "properties": {
                "fromAccount": {"type": "string"},
                "toAccount": {"type": "string"},
                "amount": {"type": "number", "exclusiveMinimum": 0},
                "currency": {"type": "string", "enum": ["EUR", "USD", "GBP"]},
                "memo": {"type": "string"},
            },
            "required": ["fromAccount", "toAccount", "amount", "currency"],
        },
        "delete_records": {
            "type": "object",
            "properties": {
                "table": {"type": "string"},
                "filter": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1},
            },
            "required": ["table", "filter"],
        },
        "get_balance": {
            "type": "object",
            "properties": {"account": {"type": "string"}},
            "required": ["account"],
        },
    }
    tool_descriptions = {
        "transfer_funds": "Move money between two accounts. Financial, not idempotent: asks for approval.",
        "delete_records": "Delete the records matching a filter. Destructive: asks for approval.",
        "get_balance": "Read an account's balance. Read-only.",
    }

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(
                supported=True,
                parallel_calls=False,
                items=[
                    Tool(name=name, description=self.tool_descriptions[name], parameters=schema)
                    for name, schema in self.tool_schemas.items()
                ],
            ),
            human_in_the_loop=HumanInTheLoopCapabilities(
                supported=True, approvals=True, interrupts=True, approve_with_edits=True, interventions=True
            ),
            state=StateCapabilities(persistent_state=True),
            execution=ExecutionCapabilities(max_execution_time=120_000),
        )

    def _proposal(self, text: str) -> tuple[str, dict[str, Any], str]:
        target = _DELETE_TARGET.search(text)
        if target:
            table = target.group(1).lower()
            args = {"table": table, "filter": "created_at < now() - interval '90 days'", "limit": 500}
            return "delete_records", args, f"Delete up to 500 old rows from “{table}”?"
        amount = first_amount(text, 250.0)
        args = {"fromAccount": "OPS-001", "toAccount": "VENDOR-042", "amount": amount, "currency": "EUR"}
        args["memo"] = topic_of(text, 40)
        return "transfer_funds", args, f"Transfer {amount:g} EUR from OPS-001 to VENDOR-042?"

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        if ctx.input.resume:
            async for event in self._resume(ctx):
                yield event
            return

        # A new request on the thread supersedes what was still waiting there; expired ones go too.
        now = datetime.now(UTC)
        for stale in [
            i for i in OPEN_INTERRUPTS.values() if i.thread_id == ctx.input.thread_id or i.expires_at < now
        ]:
            OPEN_INTERRUPTS.pop(stale.interrupt_id, None)
        tool_name, args, question = self._proposal(ctx.user_text)
        message_id = new_id("msg")
        intro = f"I can do that with `{tool_name}`. It is sensitive, so I need your approval first."
        async for event in text_message(intro, message_id=message_id):
            yield event
        call_id = new_id("call")
        yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=tool_name, parent_message_id=message_id)
        async for fragment in paced(args_fragments(args)):
            yield ToolCallArgsEvent(tool_call_id=call_id, delta=fragment)
        yield ToolCallEndEvent(tool_call_id=call_id)

        expires_at = datetime.now(UTC) + INTERRUPT_TTL
        interrupt = OpenInterrupt(
            interrupt_id=new_id("interrupt"),
            thread_id=ctx.input.thread_id,
            tool_call_id=call_id,
            tool_name=tool_name,
            args=args,
            expires_at=expires_at,
            history=[
                *[m for m in ctx.input.messages if isinstance(m, UserMessage)][-1:],
                AssistantMessage(
                    id=message_id,
                    content=intro,
                    tool_calls=[
                        ToolCall(
                            id=call_id, function=FunctionCall(name=tool_name, arguments=json.dumps(args))
                        )
                    ],
                ),
            ],
        )
        OPEN_INTERRUPTS[interrupt.interrupt_id] = interrupt
        ctx.outcome = RunFinishedInterruptOutcome(
            interrupts=[
                Interrupt(
                    id=interrupt.interrupt_id,
                    reason="tool_call",
                    message=question,
                    tool_call_id=call_id,
                    response_schema={
                        "type": "object",
                        "properties": {
                            "approved": {"type": "boolean"},
                            "editedArgs": self.tool_schemas[tool_name],
                        },
                        "required": ["approved"],
                    },
                    expires_at=expires_at.isoformat().replace("+00:00", "Z"),
                    metadata={
                        "sideEffectClass": "financial" if tool_name == "transfer_funds" else "destructive"
                    },
                )
            ]
        )

    async def _resume(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        thread_id = ctx.input.thread_id
        answered: list[tuple[OpenInterrupt, Any, str]] = []
        for entry in ctx.input.resume or []:
            interrupt = OPEN_INTERRUPTS.get(entry.interrupt_id)
            if interrupt is None or interrupt.thread_id != thread_id:
                raise RunFailure(
                    f"Unknown interrupt id {entry.interrupt_id!r} for this thread: nothing to resume.",
                    code="unknown_interrupt",
                )
            if interrupt.expires_at < datetime.now(UTC):
                OPEN_INTERRUPTS.pop(interrupt.interrupt_id, None)
                raise RunFailure(
                    f"Interrupt {entry.interrupt_id!r} expired; start again.", "interrupt_expired"
                )
            answered.append((interrupt, entry.payload, entry.status))
        answered_ids = {interrupt.interrupt_id for interrupt, _, _ in answered}
        still_open = [
            i.interrupt_id
            for i in OPEN_INTERRUPTS.values()
            if i.thread_id == thread_id and i.interrupt_id not in answered_ids
        ]
        if still_open:
            raise RunFailure(
                f"A resume must answer every open interrupt; missing {still_open}.", "incomplete_resume"
            )

        history: list[Any] = []
        for interrupt, _, _ in answered:
            history.extend(interrupt.history)
        # Like LangGraph's resumed runs: the history first, so the result below refers to a known call.
        yield MessagesSnapshotEvent(messages=history)
        for interrupt, payload, status in answered:
            OPEN_INTERRUPTS.pop(interrupt.interrupt_id, None)
            payload = payload if isinstance(payload, dict) else {}
            approved = status == "resolved" and payload.get("approved") is True
            edited = payload.get("editedArgs")
            if approved and edited is not None and not isinstance(edited, dict):
                raise RunFailure("editedArgs must be an object with the tool's arguments.", "invalid_resume")
            args = edited if approved and edited else interrupt.args
            if approved:
                output = {"status": "executed", "tool": interrupt.tool_name, "arguments": args}
                output["reference"] = (
                    "OP-" + hashlib.sha1(json.dumps(args, sort_keys=True).encode()).hexdigest()[:8]
                )
                which = "your edited" if edited else "the proposed"
                described = self._describe(interrupt.tool_name, args)
                summary = f"Done: `{interrupt.tool_name}` ran with {which} arguments ({described}). "
                summary += f"Reference {output['reference']}."
            else:
                why = "cancelled" if status == "cancelled" else "rejected"
                output = {"status": why, "tool": interrupt.tool_name}
                summary = f"Understood: you {why} `{interrupt.tool_name}`, so nothing was changed."
            yield tool_result(interrupt.tool_call_id, output)
            async for event in text_message(summary):
                yield event
            ctx.result = output

    @staticmethod
    def _describe(tool_name: str, args: dict[str, Any]) -> str:
        if tool_name == "transfer_funds":
            amount = args.get("amount")
            amount = f"{amount:g}" if isinstance(amount, int | float) else amount
            return f"{amount} {args.get('currency')} to {args.get('toAccount')}"
        return f"table {args.get('table')}, filter {args.get('filter')}"


class Planner(AgUiDemoAgent):
    slug = "planner"
    name = "Launch Planner"
    description = (
        "Builds a step-by-step plan as a shared state document and advances it live with JSON Patch "
        "updates, within a fixed number of iterations."
    )
    version = "1.0.0"
    max_iterations = 5

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            state=StateCapabilities(snapshots=True, deltas=True, persistent_state=True, memory=False),
            execution=ExecutionCapabilities(max_iterations=self.max_iterations, max_execution_time=30_000),
            # Explicitly false (not absent): the planner is known not to reason visibly or call tools.
            reasoning=ReasoningCapabilities(supported=False),
            tools=ToolsCapabilities(supported=False),
            human_in_the_loop=HumanInTheLoopCapabilities(supported=True, interventions=True),
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        goal = topic_of(ctx.user_text)
        previous = ctx.input.state if isinstance(ctx.input.state, dict) else {}
        revision = int(previous.get("revision", 0)) + 1 if previous.get("goal") else 1
        titles = [
            f"Clarify the goal: {goal}",
            *(f"Gather what is needed for {term}" for term in keywords(ctx.user_text, 2)),
            "Draft the schedule",
            "Review risks and sign off",
        ][: self.max_iterations]
        state = {
            "goal": goal,
            "revision": revision,
            "iteration": 0,
            "maxIterations": self.max_iterations,
            "status": "planning",
            "steps": [{"title": title, "status": "pending"} for title in titles],
        }
        yield StateSnapshotEvent(snapshot=state)
        for index, title in enumerate(titles):
            yield StepStartedEvent(step_name=title)
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "in_progress"},
                    {"op": "replace", "path": "/iteration", "value": index + 1},
                ]
            )
            await pause()
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "done"},
                    {"op": "add", "path": f"/steps/{index}/note", "value": f"{title}: done."},
                ]
            )
            yield StepFinishedEvent(step_name=title)
            state["steps"][index].update(status="done", note=f"{title}: done.")
        state.update(iteration=len(titles), status="ready")
        yield StateDeltaEvent(delta=[{"op": "replace", "path": "/status", "value": "ready"}])
        # A final snapshot lets a client that missed a delta resynchronise.
        yield StateSnapshotEvent(snapshot=state)
        async for event in text_message(
            f"The plan for {goal} is ready: {len(titles)} steps in {len(titles)} of "
            f"{self.max_iterations} iterations (revision {revision})."
        ):
            yield event


# The tools the toolsmith can load; it picks up the next one on each discovery, cycling.
TOOLSMITH_PLUGINS = [
    Tool(
        name="convert_units",
        description="Convert a value between units (km/mi, kg/lb, °C/°F).",
        parameters={
            "type": "object",
            "properties": {"value": {"type": "number"}, "from": {"type": "string"}, "to": {"type": "string"}},
            "required": ["value", "from", "to"],
        },
    ),
    Tool(
        name="currency_rates",
        description="Look up the exchange rate between two currencies.",
        parameters={
            "type": "object",
            "properties": {"base": {"type": "string"}, "quote": {"type": "string"}},
            "required": ["base", "quote"],
        },
    ),
    Tool(
        name="time_zones",
        description="Tell the current time in a city.",
        parameters={"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    ),
    Tool(
        name="word_count",
        description="Count the words and characters of a text.",
        parameters={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    ),
]
TOOLSMITH_CORE = Tool(
    name="list_tools",
    description="List the tools loaded right now.",
    parameters={"type": "object", "properties": {}},
)


@dataclass
class ToolsmithRegistry:
    """The toolsmith's runtime tool list (one server process, see the module docstring)."""

    generation: int = 0

    def advance(self) -> None:
        self.generation += 1

    def current(self) -> list[Tool]:
        # Two plugins loaded at a time, sliding by one each generation: every discovery differs.
        count = len(TOOLSMITH_PLUGINS)
        loaded = [TOOLSMITH_PLUGINS[(self.generation + i) % count] for i in range(2)]
        return [TOOLSMITH_CORE, *loaded]


TOOLSMITH = ToolsmithRegistry()


class Toolsmith(AgUiDemoAgent):
    slug = "toolsmith"
    name = "Toolsmith"
    description = (
        "Loads and unloads tool plugins while it runs: its tool list changes from one discovery to the "
        "next. Also uses tools your client provides."
    )
    version = "0.4.0"

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        # Discovery is dynamic (PROTOCOLS 1.2): each call reports the current list, then a hot reload.
        tools = TOOLSMITH.current()
        declaration = AgentCapabilities(
            identity=self.identity(documentation_url, toolGeneration=TOOLSMITH.generation),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(supported=True, items=tools, parallel_calls=False, client_provided=True),
        )
        TOOLSMITH.advance()
        return declaration

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        tools = TOOLSMITH.current()
        names = [tool.name for tool in tools]
        call_id = new_id("call")
        yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name="list_tools")
        yield ToolCallArgsEvent(tool_call_id=call_id, delta="{}")
        yield ToolCallEndEvent(tool_call_id=call_id)
        yield tool_result(call_id, {"tools": names, "generation": TOOLSMITH.generation})
        client_tools = [tool.name for tool in ctx.input.tools or []]
        answer = f"For “{topic_of(ctx.user_text)}” I have these tools loaded right now: {', '.join(names)}."
        if client_tools:
            answer += f" Your client also offered: {', '.join(client_tools)}."
        answer += " Ask again later: my plugins reload all the time."
        async for event in text_message(answer):
            yield event


class Cipher(AgUiDemoAgent):
    slug = "cipher"
    name = "Cipher"
    description = (
        "Reasons in zero-data-retention mode: its reasoning travels only as an encrypted blob the client "
        "keeps and sends back, never as readable text."
    )
    version = "1.1.0"

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            reasoning=ReasoningCapabilities(supported=True, encrypted=True, streaming=False),
            state=StateCapabilities(memory=False, persistent_state=False),
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        returned = sum(
            1
            for message in ctx.input.messages
            if isinstance(message, ReasoningMessage | AssistantMessage) and message.encrypted_value
        )
        message_id = new_id("msg")
        # Opaque to everyone but this agent: a digest of the thread, standing in for a provider's blob.
        digest = hashlib.sha256(f"{ctx.input.thread_id}:{ctx.user_text}".encode()).digest()
        blob = base64.b64encode(b"agents-ui-demo:v1:" + digest).decode()
        yield ReasoningEncryptedValueEvent(subtype="message", entity_id=message_id, encrypted_value=blob)
        answer = f"I thought about “{topic_of(ctx.user_text)}” privately; my reasoning stays encrypted."
        if returned:
            answer += f" You sent back {returned} encrypted reasoning block(s) from earlier turns: thank you."
        async for event in text_message(answer, message_id=message_id):
            yield event


class Legacy(AgUiDemoAgent):
    slug = "legacy"
    name = "Legacy Helpdesk Bot"
    description = "An older AG-UI server with no discovery route: it declares nothing, yet it reasons."
    version = "0.3.0"
    modern = False

    def capabilities(self, documentation_url: str) -> None:
        return None

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        topic = topic_of(ctx.user_text)
        async for event in reasoning(f"User asks about {topic}. Look up the FAQ entry.", streaming=True):
            yield event
        async for event in text_message(f"From our FAQ on “{topic}”: try turning it off and on again."):
            yield event


AGUI_AGENTS: dict[str, AgUiDemoAgent] = {
    agent.slug: agent
    for agent in (
        ResearchAssistant(),
        Orchestrator(),
        DocumentReviewer(),
        Operations(),
        Planner(),
        Toolsmith(),
        Cipher(),
        Legacy(),
    )
}


# --- Running -----------------------------------------------------------------------------------------


def upgrade_legacy_parts(payload: Any) -> Any:
    """Rewrite pre-1.0 `binary` content parts as 1.0 media parts, as AG-UI's own clients do on input.

    ag_ui 1.0 rejects a `binary` part at RunAgentInput validation; older clients still send them.
    """
    if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
        return payload
    for message in payload["messages"]:
        content = message.get("content") if isinstance(message, dict) else None
        if not isinstance(content, list):
            continue
        for index, part in enumerate(content):
            if not isinstance(part, dict) or part.get("type") != "binary":
                continue
            mime = part.get("mimeType") or part.get("mime_type") or "application/octet-stream"
            kind = "image" if mime.startswith("image/") else "document"
            if part.get("data"):
                source = {"type": "data", "value": part["data"], "mimeType": mime}
            else:
                source = {"type": "url", "value": part.get("url") or part.get("id") or "", "mimeType": mime}
            upgraded: dict[str, Any] = {"type": kind, "source": source}
            if part.get("filename"):
                upgraded["metadata"] = {"filename": part["filename"]}
            content[index] = upgraded
    return payload


def _stamp(event: BaseEvent, modern: bool) -> BaseEvent:
    if modern and event.timestamp is None:
        event.timestamp = int(time.time() * 1000)
    return event


async def run_agent(agent: AgUiDemoAgent, run_input: RunAgentInput) -> AsyncIterator[BaseEvent]:
    """A whole run: RUN_STARTED, the agent's events, then exactly one RUN_FINISHED or RUN_ERROR."""
    ctx = RunContext(input=run_input)
    modern = agent.modern
    yield _stamp(
        RunStartedEvent(
            thread_id=run_input.thread_id,
            run_id=run_input.run_id,
            parent_run_id=run_input.parent_run_id,
            protocol_version=PROTOCOL_VERSION if modern else None,
        ),
        modern,
    )
    try:
        async for event in agent.run(ctx):
            yield _stamp(event, modern)
    except RunFailure as failure:
        yield _stamp(RunErrorEvent(message=failure.message, code=failure.code), modern)
        return
    except Exception:
        logger.exception("demo agent %s failed", agent.slug)
        yield _stamp(RunErrorEvent(message="The agent failed unexpectedly.", code="internal"), modern)
        return
    outcome = ctx.outcome
    if outcome is None and modern:
        outcome = RunFinishedSuccessOutcome()
    yield _stamp(
        RunFinishedEvent(
            thread_id=run_input.thread_id, run_id=run_input.run_id, outcome=outcome, result=ctx.result
        ),
        modern,
    )


def reset_state() -> None:
    """Forget every open interrupt and reload the toolsmith from scratch (tests, and a fresh demo)."""
    OPEN_INTERRUPTS.clear()
    TOOLSMITH.generation = 0

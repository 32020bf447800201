"""The Operations Agent: a sensitive tool call pauses the run with an interrupt until a resume answers it.

Open interrupts live at module level: that assumes one server process, which is how the product serves
its demo agents.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    AssistantMessage,
    BaseEvent,
    ExecutionCapabilities,
    FunctionCall,
    HumanInTheLoopCapabilities,
    Interrupt,
    MessagesSnapshotEvent,
    RunFinishedInterruptOutcome,
    StateCapabilities,
    Tool,
    ToolCall,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
    UserMessage,
)

from agents_ui.demo.agui.base import (
    AgUiDemoAgent,
    RunContext,
    RunFailure,
    args_fragments,
    new_id,
    text_message,
    tool_result,
)
from agents_ui.demo.replies import first_amount, paced, topic_of

INTERRUPT_TTL = timedelta(minutes=15)
_DELETE_TARGET = re.compile(
    r"\b(?:delete|purge|remove|erase)\s+(?:(?:all|the|old|stale|of|my|our)\s+)*(\w+)", re.I
)


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

    def reset(self) -> None:
        OPEN_INTERRUPTS.clear()

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

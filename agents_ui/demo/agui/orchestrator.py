"""The Project Orchestrator: delegation to nested sub-agents, then a handoff to the reviewer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    CustomEvent,
    ExecutionCapabilities,
    MultiAgentCapabilities,
    SubagentFinishedEvent,
    SubagentInfo,
    SubagentStartedEvent,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, new_id, text_message, tool_result
from agents_ui.demo.replies import topic_of


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

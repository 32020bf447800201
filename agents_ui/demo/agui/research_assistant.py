"""The Research Assistant: streamed reasoning, two tool calls in parallel, structured output."""

from __future__ import annotations

from collections.abc import AsyncIterator

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    ExecutionCapabilities,
    HumanInTheLoopCapabilities,
    OutputCapabilities,
    ReasoningCapabilities,
    StepFinishedEvent,
    StepStartedEvent,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import (
    AgUiDemoAgent,
    RunContext,
    args_fragments,
    new_id,
    reasoning,
    text_message,
    tool_result,
)
from agents_ui.demo.replies import keywords, pause, topic_of


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

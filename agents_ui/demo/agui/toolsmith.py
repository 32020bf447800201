"""The Toolsmith: a tool list that changes from one discovery to the next, and client-provided tools.

The loaded tools live at module level (one server process).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, new_id, text_message, tool_result
from agents_ui.demo.replies import topic_of

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

    def reset(self) -> None:
        TOOLSMITH.generation = 0

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

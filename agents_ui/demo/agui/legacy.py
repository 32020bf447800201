"""The Legacy Helpdesk Bot: an older AG-UI server with no discovery route."""

from __future__ import annotations

from collections.abc import AsyncIterator

from ag_ui.core import (
    BaseEvent,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, reasoning, text_message
from agents_ui.demo.replies import topic_of


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

"""Cipher: reasoning that only travels as an encrypted blob."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterator

from ag_ui.core import (
    AgentCapabilities,
    AssistantMessage,
    BaseEvent,
    ReasoningCapabilities,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessage,
    ReasoningStartEvent,
    StateCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, new_id, text_message
from agents_ui.demo.replies import topic_of


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
        message_id, reasoning_id = new_id("msg"), new_id("reasoning")
        # Opaque to everyone but this agent: a digest of the thread, standing in for a provider's blob.
        digest = hashlib.sha256(f"{ctx.input.thread_id}:{ctx.user_text}".encode()).digest()
        blob = base64.b64encode(b"agents-ui-demo:v1:" + digest).decode()
        # Reasoning that exists only sealed: a span holding nothing but the encrypted value.
        yield ReasoningStartEvent(message_id=reasoning_id)
        yield ReasoningEncryptedValueEvent(subtype="message", entity_id=reasoning_id, encrypted_value=blob)
        yield ReasoningEndEvent(message_id=reasoning_id)
        answer = f"I thought about “{topic_of(ctx.user_text)}” privately; my reasoning stays encrypted."
        if returned:
            answer += f" You sent back {returned} encrypted reasoning block(s) from earlier turns: thank you."
        async for event in text_message(answer, message_id=message_id):
            yield event

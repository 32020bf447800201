"""A whole AG-UI run as it goes on the wire, whichever demo agent runs it.

The input is upgraded from pre-1.0 shapes first; then RUN_STARTED, the agent's events, and exactly one
RUN_FINISHED or RUN_ERROR, every event stamped as a modern server stamps them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, RunFailure

logger = logging.getLogger(__name__)


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

"""An AG-UI agent that answers with an A2UI v1.0 surface (made whole by one createSurface, from
tests/support/a2ui_v1.py) and the tokens it used, for view and browser tests. It also asks the page
to run `openUrl` for it (a callRendererFunction the page must refuse). An action on the surface is
answered with what was sent; every request is kept (`RECEIVED`) for the test to read.

    GET  {base}/capabilities   its declaration (A2UI v1.0, as a custom capability)
    POST {base}/               a run
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.a2ui_agent import _read
from tests.support.a2ui_v1 import BASIC, booking_surface
from tests.support.live_server import ThreadedUvicorn

__all__ = ["DECLARATION", "USAGE", "V1AgentServer", "events"]

DECLARATION = {"custom": {"a2ui": {"v1.0": {"supportedCatalogIds": [BASIC]}}}}
USAGE = [
    {
        "provider": "openai",
        "model": "gpt-5",
        "inputTokens": 1234,
        "outputTokens": 567,
        "cachedInputTokens": 200,
        "reasoningTokens": 50,
        "totalTokens": 1801,
    },
    {"provider": "local", "model": "small", "inputTokens": 12},
]
OPEN_FOR_ME = {
    "version": "v1.0",
    "callRendererFunction": {
        "functionCallId": "open-1",
        "callFunction": {"@call": "openUrl", "args": {"url": "https://example.com/"}, "catalogId": BASIC},
    },
}


def _said(message_id: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def events(run_input: dict[str, Any]) -> list[dict[str, Any]]:
    thread, run = run_input.get("threadId", "t"), run_input.get("runId", "r")
    action = (run_input.get("forwardedProps") or {}).get("a2uiAction")
    if action:
        name = action["userAction"]["context"].get("name") or "nobody"
        room = action["userAction"]["context"].get("room")
        said = _said(f"m-{run}", f"Booked the {room} room for {name}.")
        usage = [{"provider": "openai", "model": "gpt-5", "inputTokens": 40, "outputTokens": 8}]
    else:
        said = [
            *_said(f"m-{run}", "Here is a form."),
            {
                "type": "ACTIVITY_SNAPSHOT",
                "messageId": "a2ui-surface-booking",
                "activityType": "a2ui-surface",
                "content": {"a2ui_operations": [*booking_surface(), OPEN_FOR_ME]},
            },
        ]
        usage = USAGE
    return [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run},
        *said,
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run, "usage": usage},
    ]


RECEIVED: list[dict[str, Any]] = []


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await _read(receive)
    if scope["path"].rstrip("/").endswith("/capabilities"):
        payload, content_type = json.dumps(DECLARATION).encode(), "application/json"
    else:
        run_input = json.loads(body or b"{}")
        RECEIVED.append(run_input)
        frames = events(run_input)
        payload = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in frames)
        content_type = "text/event-stream"
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type.encode())]}
    )
    await send({"type": "http.response.body", "body": payload})


class V1AgentServer(ThreadedUvicorn):
    """uvicorn serving the agent from a thread of this process."""

    def __init__(self) -> None:
        super().__init__(application)

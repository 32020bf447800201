"""An AG-UI agent that answers with hostile A2UI surfaces and an activity of its own type, for
browser tests: script URLs everywhere, markup in every text, a list of thousands, nesting hundreds
deep, a component that contains itself, and a `PLAN` activity no renderer knows.

    GET  {base}/capabilities   its declaration (A2UI, as a custom capability)
    POST {base}/               a run
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.fault_agent import PAYLOADS, URL_PAYLOADS
from tests.support.live_server import ThreadedUvicorn

__all__ = ["CATALOG", "EVIL", "HostileA2uiServer", "events", "surface_operations"]

CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
# From the one catalogue of payloads (tests/support/fault_agent.py): each sets window.__pwned if it runs.
EVIL = PAYLOADS[3] + PAYLOADS[1]
SCRIPT_URL = URL_PAYLOADS[0]


def surface_operations(items: int = 5000) -> list[dict[str, Any]]:
    deep = [{"id": f"d{i}", "component": "Column", "children": [f"d{i + 1}"]} for i in range(300)]
    components = [
        {
            "id": "root",
            "component": "Column",
            "children": ["t", "img", "vid", "aud", "link", "list", "d0", "loop"],
        },
        {"id": "t", "component": "Text", "text": EVIL + " **still words**"},
        {"id": "img", "component": "Image", "url": SCRIPT_URL, "description": EVIL},
        {"id": "vid", "component": "Video", "url": URL_PAYLOADS[5]},
        {"id": "aud", "component": "AudioPlayer", "url": {"path": "/evil"}},
        {
            "id": "link",
            "component": "Button",
            "child": "t",
            "action": {"functionCall": {"call": "openUrl", "args": {"url": SCRIPT_URL}}},
        },
        {"id": "list", "component": "List", "children": {"path": "/items", "componentId": "item"}},
        {"id": "item", "component": "Text", "text": {"path": "n"}},
        {"id": "loop", "component": "Card", "child": "loop"},
        *deep,
    ]
    data = {"evil": SCRIPT_URL, "items": [{"n": f"item {i}"} for i in range(items)]}
    return [
        {
            "version": "v0.9",
            "createSurface": {"surfaceId": "evil", "catalogId": CATALOG, "theme": {"primaryColor": EVIL}},
        },
        {"version": "v0.9", "updateComponents": {"surfaceId": "evil", "components": components}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": "evil", "value": data}},
    ]


def events(run_input: dict[str, Any]) -> list[dict[str, Any]]:
    thread, run = run_input.get("threadId", "t"), run_input.get("runId", "r")
    return [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": "Here is an interface."},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a2ui-surface-evil",
            "activityType": "a2ui-surface",
            "content": {"a2ui_operations": surface_operations()},
        },
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "plan-1",
            "activityType": "PLAN",
            "content": {"title": EVIL, "steps": [{"title": "Search", "status": "done"}]},
        },
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run},
    ]


async def _read(receive: Any) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    body = await _read(receive)
    if scope["path"].rstrip("/").endswith("/capabilities"):
        payload, kind = (
            json.dumps({"custom": {"a2ui": {"v0.9": {"supportedCatalogIds": [CATALOG]}}}}).encode(),
            "json",
        )
    else:
        frames = events(json.loads(body or b"{}"))
        payload, kind = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in frames), "event-stream"
    content_type = "application/json" if kind == "json" else "text/event-stream"
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", content_type.encode())]}
    )
    await send({"type": "http.response.body", "body": payload})


class HostileA2uiServer(ThreadedUvicorn):
    """uvicorn serving the agent from a thread of this process."""

    def __init__(self) -> None:
        super().__init__(application)

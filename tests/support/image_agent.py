"""An AG-UI agent whose answer names images on its own host: one in its Markdown, one in an A2UI
Image component, both served by it at /pic.png (a PNG) and /broken.png (SVG labelled PNG).

    GET  {base}/capabilities   its declaration (A2UI, as a custom capability)
    GET  {base}/pic.png        the image
    POST {base}/               a run
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.a2ui_agent import CATALOG, _read
from tests.support.image_site import PNG, SVG
from tests.support.live_server import ThreadedUvicorn


def events(base: str, run_input: dict[str, Any]) -> list[dict[str, Any]]:
    thread, run = run_input.get("threadId", "t"), run_input.get("runId", "r")
    components = [
        {"id": "root", "component": "Column", "children": ["pic", "broken"]},
        {"id": "pic", "component": "Image", "url": f"{base}/pic.png", "description": "A surface picture"},
        {"id": "broken", "component": "Image", "url": f"{base}/broken.png", "description": "A fake picture"},
    ]
    surface = [
        {"version": "v0.9", "createSurface": {"surfaceId": "pics", "catalogId": CATALOG}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "pics", "components": components}},
    ]
    text = f"Here is a chart: ![an answer picture]({base}/pic.png)"
    return [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run},
        {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a2ui-surface-pics",
            "activityType": "a2ui-surface",
            "content": {"a2ui_operations": surface},
        },
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run},
    ]


class ImageAgent(ThreadedUvicorn):
    """uvicorn serving the agent from a thread of this process; `requests` lists the paths asked."""

    def __init__(self) -> None:
        self.requests: list[str] = []

        async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self.answer(scope, receive, send)

        super().__init__(application)

    async def answer(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await _read(receive)
        path = scope["path"].rstrip("/")
        self.requests.append(path)
        if path.endswith("/capabilities"):
            declaration = {"custom": {"a2ui": {"v0.9": {"supportedCatalogIds": [CATALOG]}}}}
            payload = json.dumps(declaration).encode()
            content_type = "application/json"
        elif path.endswith(".png"):
            payload, content_type = (PNG if path.endswith("/pic.png") else SVG), "image/png"
        else:
            frames = events(self.url, json.loads(body or b"{}"))
            payload = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in frames)
            content_type = "text/event-stream"
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", content_type.encode())],
            }
        )
        await send({"type": "http.response.body", "body": payload})

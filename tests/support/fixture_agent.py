"""An AG-UI agent that replays the conformance fixtures (tests/conformance/agui/streams/) over HTTP.

``POST /<fixture name>`` answers with that fixture's ``stream`` as SSE frames, each event's JSON sent
verbatim, then ends the response (a stream without a terminal event is simply cut there). The
request bodies are kept per fixture, for the fixtures that check what the client sent. It is served
by uvicorn in a thread (:class:`FixtureAgent`), so the product's SDK and the workspace in a browser
reach it over real HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn


class FixtureApp:
    def __init__(self, fixtures: Mapping[str, Mapping[str, Any]]) -> None:
        self.fixtures = fixtures
        self.requests: dict[str, list[Any]] = {}

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send)
            return
        name = scope["path"].strip("/")
        fixture = self.fixtures.get(name)
        if scope["method"] != "POST" or fixture is None:
            await send({"type": "http.response.start", "status": 404, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.requests.setdefault(name, []).append(json.loads(body or b"null"))
        headers = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        for event in fixture["stream"]:
            frame = f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


class FixtureAgent(ThreadedUvicorn):
    """The fixtures served from a thread of this process, at ``url + "/" + name``."""

    def __init__(self, fixtures: Mapping[str, Mapping[str, Any]]) -> None:
        self.app = FixtureApp(fixtures)
        super().__init__(self.app)

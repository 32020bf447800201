"""A loopback site serving images and their hostile variants, for the remote image fetcher's tests."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

# A 1x1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    path = scope["path"]
    status, headers, body, delay = 200, [(b"content-type", b"image/png")], PNG, 0.0
    if path == "/svg.png":
        body = SVG
    elif path == "/to-private":
        status, headers, body = 302, [(b"location", b"http://169.254.169.254/latest/x.png")], b""
    elif path == "/huge.png":
        body = PNG + b"\0" * (2 * 1024 * 1024)
    elif path == "/slow.png":
        delay = 5.0
    elif path == "/missing.png":
        status, body = 404, b""
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if delay:
        await send({"type": "http.response.body", "body": body[:8], "more_body": True})
        await asyncio.sleep(delay)
        body = body[8:]
    await send({"type": "http.response.body", "body": body})

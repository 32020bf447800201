"""Fixtures for the demo agents: a clean in-process state per test, and helpers to talk to them."""

from __future__ import annotations

import base64
import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from agents_ui.demo import registry
from agents_ui.demo.gate import KEY_HEADER, demo_key

SDK_HEADERS = {"X-Agent-SDK-Version": "1.0.0"}


def keyed() -> dict[str, str]:
    """The header the product sends every demo agent (the credential registration gives them)."""
    return {KEY_HEADER: demo_key()}


@pytest.fixture(autouse=True)
def fresh_demo_state() -> Iterator[None]:
    """The agents remember things in module-level stores; every test starts from a blank slate."""
    registry.reset_state()
    yield
    registry.reset_state()


def run_input(text: str = "hello", *, thread_id: str | None = None, **extra: Any) -> dict[str, Any]:
    """A RunAgentInput as a client puts it on the wire."""
    content = extra.pop("content", text)
    return {
        "threadId": thread_id or f"thread-{uuid.uuid4().hex[:8]}",
        "runId": f"run-{uuid.uuid4().hex[:8]}",
        "protocolVersion": "1.0",
        "state": {},
        "messages": [{"id": f"user-{uuid.uuid4().hex[:6]}", "role": "user", "content": content}],
        "tools": [],
        "context": [],
        "forwardedProps": {},
        **extra,
    }


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sse_data(body: str) -> list[str]:
    """The `data:` payloads of an SSE body, one per frame."""
    payloads = []
    for frame in body.replace("\r\n", "\n").split("\n\n"):
        lines = [line[5:].lstrip() for line in frame.split("\n") if line.startswith("data:")]
        if lines:
            payloads.append("\n".join(lines))
    return payloads


async def agui_run(url: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    """POST one run over HTTP and return its events as wire dicts."""
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.post(url, json=body, headers={"Accept": "text/event-stream", **keyed()})
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/event-stream")
    return [json.loads(data) for data in sse_data(response.text)]


def pdf_bytes(pages: int) -> bytes:
    """A small but real PDF with `pages` pages (one /Pages tree node, `pages` /Page objects)."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>")
    objects += ["<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>" for _ in range(pages)]
    out = b"%PDF-1.4\n"
    for number, obj in enumerate(objects, start=1):
        out += f"{number} 0 obj\n{obj}\nendobj\n".encode()
    return out + b"trailer\n<< /Root 1 0 R >>\n%%EOF\n"


PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

"""Fixtures for the demo agents: a clean in-process state per test, and helpers to talk to them."""

from __future__ import annotations

import base64
import io
import json
import uuid
import zlib
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from pypdf import PdfWriter

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


def pdf_bytes(pages: int, *, padding: int = 0) -> bytes:
    """A real PDF of `pages` blank pages, written by a PDF library; `padding` bytes of embedded file."""
    writer = PdfWriter()
    for _ in range(pages):
        writer.add_blank_page(width=612, height=792)
    if padding:
        writer.add_attachment("padding.bin", b"0" * padding)
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def packed_pdf_bytes(pages: int) -> bytes:
    """A PDF saved as most producers save them since PDF 1.5: the page tree inside a compressed object
    stream, found through a compressed cross-reference stream. No `/Type /Page` is visible in its bytes.
    """
    tree = f"<< /Type /Pages /Kids [{' '.join(f'{3 + i} 0 R' for i in range(pages))}] /Count {pages} >>"
    packed_objects = {2: tree} | {
        3 + i: "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>" for i in range(pages)
    }
    index, body = [], b""
    for number, text in packed_objects.items():
        index.append(f"{number} {len(body)}")
        body += text.encode() + b"\n"
    head = " ".join(index).encode() + b"\n"
    stream_number, xref_number = 3 + pages, 4 + pages
    packed = zlib.compress(head + body)

    out = b"%PDF-1.5\n"
    offsets = {1: len(out)}
    out += b"1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n"
    offsets[stream_number] = len(out)
    out += (
        (
            f"{stream_number} 0 obj\n<< /Type /ObjStm /N {len(packed_objects)} /First {len(head)} "
            f"/Filter /FlateDecode /Length {len(packed)} >>\nstream\n"
        ).encode()
        + packed
        + b"\nendstream\nendobj\n"
    )
    offsets[xref_number] = len(out)
    rows = b""
    for number in range(xref_number + 1):
        if number == 0:
            kind, field, generation = 0, 0, 65535
        elif number in offsets:
            kind, field, generation = 1, offsets[number], 0
        else:  # inside the object stream: its number, and the object's place in it
            kind, field, generation = 2, stream_number, list(packed_objects).index(number)
        rows += bytes([kind]) + field.to_bytes(4, "big") + generation.to_bytes(2, "big")
    xref = zlib.compress(rows)
    out += (
        (
            f"{xref_number} 0 obj\n<< /Type /XRef /Size {xref_number + 1} /W [1 4 2] /Root 1 0 R "
            f"/Filter /FlateDecode /Length {len(xref)} >>\nstream\n"
        ).encode()
        + xref
        + b"\nendstream\nendobj\n"
    )
    return out + f"startxref\n{offsets[xref_number]}\n%%EOF\n".encode()


PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)

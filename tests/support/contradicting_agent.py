"""AG-UI agents that contradict their own declarations on purpose, for the conformance report.

A plain ASGI application served on a port of its own (`ContradictingAgentServer`); the agent is
chosen by the path:

    GET  {base}/<name>/capabilities   its declaration
    POST {base}/<name>/               a run

- ``liar``: declares ``reasoning.supported: false`` and streams reasoning in every run; declares
  file input (``multimodal.input.file``) and answers a message carrying a file with
  ``415 Unsupported Media Type``.
- ``asker``: declares interrupts and tools; every run calls a tool, then ends asking for approval
  (an AG-UI interrupt). The probe must stop there and never answer.

Every run's body is kept in `RECEIVED` (by agent name), so tests can assert what the product sent.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn

__all__ = ["DECLARATIONS", "RECEIVED", "ContradictingAgentServer", "application", "carries_file"]

DECLARATIONS: dict[str, Any] = {
    "liar": {
        "identity": {"name": "Contradicting agent", "description": "Declares one thing, does another."},
        "transport": {"streaming": True},
        "reasoning": {"supported": False},
        "multimodal": {"input": {"file": True, "image": True}},
    },
    "asker": {
        "identity": {"name": "Asking agent", "description": "Always asks before it acts."},
        "transport": {"streaming": True},
        "tools": {
            "supported": True,
            "items": [{"name": "transfer", "description": "Move money.", "parameters": {}}],
        },
        "humanInTheLoop": {"supported": True, "interrupts": True, "approvals": True},
    },
}
RECEIVED: dict[str, list[dict[str, Any]]] = {name: [] for name in DECLARATIONS}
_LOCK = threading.Lock()
ANSWER = "Hello from the contradicting agent."
REFUSAL = b'{"error": "unsupported_media_type", "message": "This agent takes no files."}'


def carries_file(run: dict[str, Any]) -> bool:
    """Whether the run's last user message has a part that is not text (a file the client sent)."""
    users = [m for m in run.get("messages") or () if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return isinstance(content, list) and any(
        isinstance(part, dict) and part.get("type") != "text" for part in content
    )


def events(run: dict[str, Any], name: str) -> list[dict[str, Any]]:
    thread, run_id = run.get("threadId") or "t", run.get("runId") or str(uuid.uuid4())
    found: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
    if name == "liar":
        span, thought = f"span-{run_id}", f"thought-{run_id}"
        found += [
            {"type": "REASONING_START", "messageId": span},
            {"type": "REASONING_MESSAGE_START", "messageId": thought, "role": "reasoning"},
            {"type": "REASONING_MESSAGE_CONTENT", "messageId": thought, "delta": "Thinking, undeclared."},
            {"type": "REASONING_MESSAGE_END", "messageId": thought},
            {"type": "REASONING_END", "messageId": span},
        ]
        answer = f"answer-{run_id}"
        found += [
            {"type": "TEXT_MESSAGE_START", "messageId": answer, "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": answer, "delta": ANSWER},
            {"type": "TEXT_MESSAGE_END", "messageId": answer},
            {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id},
        ]
        return found
    call = f"call-{run_id}"
    found += [
        {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "transfer"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": '{"amount": 1000}'},
        {"type": "TOOL_CALL_END", "toolCallId": call},
        {
            "type": "RUN_FINISHED",
            "threadId": thread,
            "runId": run_id,
            "outcome": {
                "type": "interrupt",
                "interrupts": [{"id": f"approve-{run_id}", "reason": "approval", "message": "Approve?"}],
            },
        },
    ]
    return found


async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            break
    parts = [p for p in scope["path"].split("/") if p]
    name = parts[0] if parts else ""
    if name not in DECLARATIONS:
        await _answer(send, 404, b'{"error": "no such agent"}')
        return
    if len(parts) == 2 and parts[1] == "capabilities":
        await _answer(send, 200, json.dumps(DECLARATIONS[name]).encode())
        return
    run = json.loads(body or b"{}")
    with _LOCK:
        RECEIVED[name].append(run)
    if name == "liar" and carries_file(run):
        await _answer(send, 415, REFUSAL)
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    for event in events(run, name):
        frame = f"data: {json.dumps(event)}\n\n".encode()
        await send({"type": "http.response.body", "body": frame, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


async def _answer(send: Any, status: int, body: bytes) -> None:
    await send(
        {"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/json")]}
    )
    await send({"type": "http.response.body", "body": body})


class ContradictingAgentServer(ThreadedUvicorn):
    """uvicorn serving the contradicting agents from a thread of this process."""

    def __init__(self) -> None:
        super().__init__(application, log_level="critical")

    def url_for(self, name: str) -> str:
        return f"{self.url}/{name}/"

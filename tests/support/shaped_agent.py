"""AG-UI agents that declare in particular shapes and connection strategies, for browser tests.

A plain ASGI application served on a port of its own (`ShapedAgentServer`); the agent is chosen by
the path:

    GET  {base}/<name>/capabilities   its declaration
    POST {base}/<name>/               a run

- ``strands``: the AWS Strands shape (``features.interrupts``, ``toolCallInterruptEditedArgs`` ...).
- ``oneshot``: ``transport.streaming: false``; answers with one JSON list of events, after a
  moment of work (`ONESHOT_WORK`).
- ``bounded``: ``execution.maxIterations: 1`` and ``maxExecutionTime: 1000``, and a run that goes
  past both (two steps over `BOUNDED_WORK`).
- ``resumable``: ``transport.resumable: true``; cuts the first connection of each run in the
  middle of a frame, and goes on after the ``Last-Event-ID`` it is sent.
- ``limited``: image input and ``custom.rateLimit {maxRequestsPerMinute: 2}``.
- ``code``: streams an answer with a fenced code block, pausing while the block is still open.
- ``a2ui-spec``: declares A2UI under the name A2UI's specification gives the object
  (``custom.a2uiServerCapabilities``) and answers with the A2UI catalogue it was offered, if any.
- ``worded``: asks before publishing, with an interrupt whose ``responseSchema`` is a string
  ("approved" or "rejected"); the resume says what it was given, and fails on anything else.
- ``reasoned``: the same, its ``responseSchema`` an object asking a decision and a reason.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn

__all__ = ["ANSWER_PARTS", "CUT_RUNS", "ShapedAgentServer", "application"]

ANSWER_PARTS = ("First part. ", "Second part. ", "Third part. ", "Fourth part.")
# Long enough for the live answer to settle part of the open block before it closes.
CODE_LINES = tuple("".join(f"    total = a + b  # step {10 * n + i}\n" for i in range(10)) for n in range(10))
CODE_PARTS = (
    "Here is the function:\n\n",
    "```python\n",
    "def add(a, b):\n",
    *CODE_LINES,
    "    return a + b\n",
    "``",
    "`\n\nDone.",
)
CODE_OPEN_SECONDS = 2.5  # the block stays open (its closing fence half sent) this long
CUT_AFTER = 4  # events of the first connection of a resumable run
A2UI_CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
ONESHOT_WORK = 2.5  # seconds the one-shot agent works before it answers
BOUNDED_WORK = 5  # seconds each step of the bounded agent takes

DECLARATIONS: dict[str, Any] = {
    "strands": {
        "protocol": "1",
        "transports": {"sse": True, "protobuf": False, "websocket": False},
        "events": {"RUN_STARTED": True, "TEXT_MESSAGE_CONTENT": True},
        "features": {
            "interrupts": True,
            "toolCallInterruptEditedArgs": True,
            "resumableStreams": False,
            "messagesSnapshot": True,
            "stateDelta": False,
        },
    },
    "oneshot": {"transport": {"streaming": False}},
    "resumable": {"transport": {"streaming": True, "resumable": True}},
    "bounded": {
        "transport": {"streaming": True},
        "execution": {"maxIterations": 1, "maxExecutionTime": 1000},
    },
    "limited": {
        "multimodal": {"input": {"image": True}},
        "custom": {"rateLimit": {"maxRequestsPerMinute": 2}},
    },
    "code": {"transport": {"streaming": True}},
    "a2ui-spec": {
        "transport": {"streaming": True},
        "custom": {"a2uiServerCapabilities": {"v0.9": {"supportedCatalogIds": [A2UI_CATALOG]}}},
    },
    "worded": {"transport": {"streaming": True}, "humanInTheLoop": {"interrupts": True, "approvals": True}},
    "reasoned": {"transport": {"streaming": True}, "humanInTheLoop": {"interrupts": True, "approvals": True}},
}
# The answers the asking agents take (responseSchema).
WORDED_SCHEMA = {"type": "string", "enum": ["approved", "rejected"]}
REASONED_SCHEMA = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "enum": ["approve", "reject"]},
        "reason": {"type": "string", "minLength": 3, "title": "Why"},
    },
    "required": ["decision", "reason"],
    "additionalProperties": False,
}

# Run ids whose first connection was cut already.
CUT_RUNS: set[str] = set()


def _asking(run: dict[str, Any], schema: dict[str, Any]) -> list[dict[str, Any]]:
    """Asks before publishing; resumed, says what it was given (or fails: not what it asked)."""
    thread, run_id = run.get("threadId", "t"), run.get("runId", "r")
    found: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
    resume = run.get("resume") or []
    if not resume:
        interrupt = {
            "id": "ask-publish",
            "reason": "confirmation",
            "message": "Publish the post?",
            "toolCallId": "call-publish",
            "responseSchema": schema,
        }
        return [
            *found,
            {"type": "TOOL_CALL_START", "toolCallId": "call-publish", "toolCallName": "publish"},
            {"type": "TOOL_CALL_ARGS", "toolCallId": "call-publish", "delta": '{"post": "Launch day"}'},
            {"type": "TOOL_CALL_END", "toolCallId": "call-publish"},
            {
                "type": "RUN_FINISHED",
                "threadId": thread,
                "runId": run_id,
                "outcome": {"type": "interrupt", "interrupts": [interrupt]},
            },
        ]
    payload = resume[0].get("payload")
    fits = (
        payload in schema.get("enum", ())
        if schema.get("type") == "string"
        else (
            isinstance(payload, dict)
            and set(payload) == {"decision", "reason"}
            and len(payload["reason"]) >= 3
        )
    )
    if not fits:
        return [*found, {"type": "RUN_ERROR", "message": f"Not an answer I asked for: {json.dumps(payload)}"}]
    return [
        *found,
        {"type": "TEXT_MESSAGE_START", "messageId": f"{run_id}-m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"{run_id}-m", "delta": f"Told: {json.dumps(payload)}"},
        {"type": "TEXT_MESSAGE_END", "messageId": f"{run_id}-m"},
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id},
    ]


def events(run: dict[str, Any], name: str = "") -> list[dict[str, Any]]:
    if name in ("worded", "reasoned"):
        return _asking(run, WORDED_SCHEMA if name == "worded" else REASONED_SCHEMA)
    thread, run_id = run.get("threadId", "t"), run.get("runId", "r")
    parts = CODE_PARTS if name == "code" else ANSWER_PARTS
    if name == "a2ui-spec":
        parts = (offered_catalogue(run),)
    found: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run_id}]
    if name == "bounded":
        for step in ("Look", "Write"):
            found += [{"type": "STEP_STARTED", "stepName": step}, {"type": "STEP_FINISHED", "stepName": step}]
    found.append({"type": "TEXT_MESSAGE_START", "messageId": f"{run_id}-m", "role": "assistant"})
    found += [{"type": "TEXT_MESSAGE_CONTENT", "messageId": f"{run_id}-m", "delta": d} for d in parts]
    found += [
        {"type": "TEXT_MESSAGE_END", "messageId": f"{run_id}-m"},
        {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id},
    ]
    return found


def offered_catalogue(run: dict[str, Any]) -> str:
    """What the run's context offered as A2UI's catalogue, in words."""
    for entry in run.get("context") or []:
        if str(entry.get("description", "")).startswith("A2UI Component Schema"):
            value = json.loads(entry.get("value") or "{}")
            count = len(value.get("components", {}))
            return f"I was offered the A2UI catalogue {value.get('catalogId')} ({count} components)."
    return "No A2UI catalogue was offered."


class _Cut(Exception):
    """Raised on purpose: uvicorn drops the connection without ending the response."""


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
        await _answer(send, 404, "application/json", b'{"error": "no such agent"}')
    elif len(parts) == 2 and parts[1] == "capabilities":
        await _answer(send, 200, "application/json", json.dumps(DECLARATIONS[name]).encode())
    elif name == "oneshot":
        await asyncio.sleep(ONESHOT_WORK)
        await _answer(send, 200, "application/json", json.dumps(events(json.loads(body))).encode())
    else:
        headers = dict(scope["headers"])
        await _stream(send, json.loads(body), name, headers.get(b"last-event-id", b"").decode())


async def _answer(send: Any, status: int, content_type: str, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _stream(send: Any, run: dict[str, Any], name: str, last_id: str) -> None:
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )
    run_id = str(run.get("runId"))
    start = int(last_id) if last_id.isdigit() else 0
    cut = name == "resumable" and run_id not in CUT_RUNS
    for number, event in enumerate(events(run, name)[start:], start=start + 1):
        if name == "code" and event.get("delta") == CODE_PARTS[-1]:
            await asyncio.sleep(CODE_OPEN_SECONDS)
        if event["type"] == "STEP_FINISHED":
            await asyncio.sleep(BOUNDED_WORK)
        if cut and number > CUT_AFTER:
            CUT_RUNS.add(run_id)
            await send(
                {"type": "http.response.body", "body": b'data: {"type": "TEXT_MESS', "more_body": True}
            )
            raise _Cut
        frame = f"id: {number}\ndata: {json.dumps(event)}\n\n".encode()
        await send({"type": "http.response.body", "body": frame, "more_body": True})
    await send({"type": "http.response.body", "body": b""})


class ShapedAgentServer(ThreadedUvicorn):
    """uvicorn serving the shaped agents from a thread of this process."""

    def __init__(self) -> None:
        super().__init__(application, log_level="critical")  # the cut raises on purpose

    def url_for(self, name: str) -> str:
        return f"{self.url}/{name}/"

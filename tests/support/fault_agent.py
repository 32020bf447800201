"""A fault-injecting AG-UI agent, for tests and the reliability report only.

It is a plain ASGI application that no URL conf of the product includes and no registry lists: tests
and ``scripts/reliability.py`` serve it on a port of their own (`FaultAgentServer`) and register an
endpoint pointing at it. The fault is chosen by the path:

    POST {base}/fault/<name>/               a run that misbehaves in the way <name> says
    GET  {base}/fault/<name>/capabilities   its declaration (a huge one for ``huge-declaration``)

Query parameters tune the slow faults: ``?delay=<seconds>`` between two bytes of ``drip`` (default 1),
``?fast=<bytes>`` sent at once before dripping starts.

Every fault that has a run says something first (`SAID_BEFORE`), so a test can check that what the
agent said before it misbehaved is kept. A connection that is refused cannot be made by a server
that accepts it: `refused_url()` gives an address where nothing listens.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from collections.abc import Awaitable, Callable, Iterator
from typing import Any
from urllib.parse import parse_qs

from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn

__all__ = [
    "FAULTS",
    "LONG_LINE",
    "MARKDOWN_FORMS",
    "PAYLOADS",
    "REDOS_PATTERN",
    "SAID_AFTER",
    "SAID_BEFORE",
    "SHOWN_AS_TEXT",
    "URL_MARKDOWN",
    "URL_PAYLOADS",
    "FaultAgentServer",
    "application",
    "refused_url",
]

SAID_BEFORE = "Said before the fault."
SAID_AFTER = "Said after the bad frame."
LONG_LINE = "W" * 5000
DEEP_LEVELS = 10_000
# A pattern whose backtracking doubles with each character of "a…a!" on an engine without a bound.
REDOS_PATTERN = "^(a+)+$"
HUGE_FRAME_BYTES = 50 * 1024 * 1024
HUGE_DECLARATION_BYTES = 10 * 1024 * 1024
_CHUNK = 64 * 1024

# name -> what it does (the reliability report lists them).
FAULTS: dict[str, str] = {
    "ok": "a well-behaved run (the control)",
    "refuse": "refuses the connection (nothing listens: see refused_url)",
    "hang-headers": "accepts, then never sends the response headers",
    "hang-mid-stream": "starts answering, then goes silent with the connection open",
    "cut-mid-frame": "drops the connection in the middle of an SSE frame",
    "malformed-json": "sends an event that is not valid JSON",
    "invalid-patch": "sends a JSON Patch that cannot be applied to the state",
    "unknown-event": "sends an event type AG-UI does not define",
    "huge-frame": "sends one SSE frame of 50 MB",
    "http-500": "answers 500 with an HTML error page",
    "unsupported-capability": "answers 403 unsupported_capability",
    "rate-limited": "answers 429 rate_limited with Retry-After: 30",
    "drip": "sends its answer one byte per second",
    "huge-declaration": "declares its capabilities in a 10 MB document",
    "no-finish": "ends the stream without RUN_FINISHED or RUN_ERROR",
    "script-payloads": "puts HTML and script in every field it controls (declaration and run)",
    "error-payloads": "ends its run with an error whose code and message are markup and script",
    # Hostile agents: each attack the product must survive with its bounds.
    "endless": "never ends its answer: 64 KB of text after 64 KB, for ever",
    "drip-forever": "sends a frame that never ends, one byte per ?delay= seconds, for ever",
    "patch-amplification": "doubles its state with each JSON Patch `copy` of the whole document",
    "deep-nesting": "declares and sends documents nested 10,000 levels deep",
    "schema-ref": "asks for approval with a schema whose $ref names ?ref= (a local server, a file)",
    "redos": "asks for approval with a schema whose pattern backtracks without end",
    "bad-utf8": "sends a frame that is not UTF-8 between two good ones",
    "redirect-port": "answers its run with a redirect to ?to= (another port of the same host)",
    "long-lines": "puts a 5,000-character unbroken line in its answer, tool arguments, state and approval",
    "inbox-payloads": "asks to approve a tool named in markup and an interrupt whose reason is markup",
}

# The one catalogue of hostile payloads. Each would set window.__pwned (to the name of what it tried)
# if a browser ever executed it; the browser tests read window.__pwned, the others `tests/support/inert.py`.
PAYLOADS = [
    "<script>window.__pwned='script'</script>",
    "<img src=x onerror=\"window.__pwned='img'\">",
    "<svg onload=\"window.__pwned='svg'\"></svg>",
    "\"><script>window.__pwned='attr'</script>",
    "'><img src=x onerror=window.__pwned='quote'>",
    "<a href=\"javascript:window.__pwned='link'\">click</a>",
    "<iframe srcdoc=\"<script>parent.__pwned='iframe'</script>\"></iframe>",
    "{{ 7*7 }}{% now 'Y' %}",
    "<details open ontoggle=\"window.__pwned='details'\">d</details>",
    "<a href=\"&#x6A;&#x61;vascript&colon;window.__pwned='entity-href'\">entity</a>",
    "<form action=\"javascript:window.__pwned='form'\">"
    "<button formaction=\"javascript:window.__pwned='button'\">go</button></form>",
    '<object data="javascript:window.__pwned=\'object\'"></object><embed src="javascript:1">',
    "<math><mi xlink:href=\"javascript:window.__pwned='math'\">m</mi></math>",
    "<style>@import 'https://evil.example/x.css';body{background:url(javascript:window.__pwned='css')}</style>",
    "<b style=\"background:url(javascript:window.__pwned='style')\">css</b>",
    '<base href="https://evil.example/"><meta http-equiv="refresh" content="0;url=javascript:1">',
    "$$\\href{javascript:window.__pwned='katex'}{x}$$ "
    "$\\unknown{<img src=x onerror=window.__pwned='katex-error'>}$",
]
P = " ".join(PAYLOADS)
# Links and images an agent writes, in the spellings validators have missed: each would run a script
# or open markup of the agent's if a page ever kept it as an address.
URL_PAYLOADS = [
    "JaVaScRiPt:window.__pwned='case'",
    "&#106;avascript:window.__pwned='entity'",
    "java&#x09;script:window.__pwned='tab'",
    " javascript:window.__pwned='space'",
    "vbscript:msgbox(1)",
    "data:text/html;base64,PHNjcmlwdD53aW5kb3cuX19wd25lZD0nZGF0YSc8L3NjcmlwdD4=",
    "data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9IndpbmRvdy5fX3B3bmVkPSdzdmcnIi8+",
    "javascript&colon;window.__pwned='colon'",
    "\x01javascript:window.__pwned='control'",
    "DATA:text/html,<script>window.__pwned='data-plain'</script>",
    "data:image/svg+xml,<svg onload=window.__pwned='svg-plain'/>",
    "//evil.example/pixel.png",
]
URL_MARKDOWN = " ".join(f"[link {n}]({u}) ![image {n}]({u}) <{u}>" for n, u in enumerate(URL_PAYLOADS))
# Markdown's other ways to write a link or an image: references, and a definition with a title.
MARKDOWN_FORMS = "\n".join(
    [
        "[by reference][evil] ![image by reference][evil-image] [evil] [shortcut-svg]",
        "",
        "[evil]: javascript:window.__pwned='reference' \"title\"",
        f"[evil-image]: {URL_PAYLOADS[6]}",
        f"[shortcut-svg]: {URL_PAYLOADS[5]}",
        "",
        "<javascript:window.__pwned='autolink'> www.javascript:window.__pwned='linkify'",
    ]
)
# Words the product may show an agent's or a person's text with, for tests to find it shown as text.
SHOWN_AS_TEXT = "&lt;script&gt;window.__pwned"

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


def _frame(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event)}\n\n".encode()


def _opening(thread: str = "t", run: str = "r") -> list[dict[str, Any]]:
    return [
        {"type": "RUN_STARTED", "threadId": thread, "runId": run},
        {"type": "TEXT_MESSAGE_START", "messageId": "before", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "before", "delta": SAID_BEFORE},
        {"type": "TEXT_MESSAGE_END", "messageId": "before"},
    ]


def _finished(thread: str = "t", run: str = "r") -> dict[str, Any]:
    return {"type": "RUN_FINISHED", "threadId": thread, "runId": run}


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def _asking(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """A tool call, then an interrupt whose edited arguments must fit ``schema``."""
    interrupt = {
        "id": "ask-1",
        "reason": "tool_call",
        "message": "Send it?",
        "toolCallId": "tc",
        "responseSchema": {"type": "object", "properties": {"approved": {}, "editedArgs": schema}},
    }
    return [
        *_opening(),
        {"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "send"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc", "delta": '{"to": "a"}'},
        {"type": "TOOL_CALL_END", "toolCallId": "tc"},
        {**_finished(), "outcome": {"type": "interrupt", "interrupts": [interrupt]}},
    ]


def declaration(name: str) -> dict[str, Any]:
    if name in ("schema-ref", "redos", "long-lines", "inbox-payloads"):
        return {
            "identity": {"name": f"Fault: {name}", "description": FAULTS[name]},
            "transport": {"streaming": True},
            "humanInTheLoop": {"interrupts": True, "approvals": True},
        }
    if name in ("script-payloads", "error-payloads"):
        return {
            "identity": {"name": f"Evil {PAYLOADS[0]}", "description": P, "provider": P, "version": P},
            "transport": {"streaming": True},
            "tools": {
                "supported": True,
                "items": [
                    {
                        "name": "evil<script>window.__pwned='tool'</script>",
                        "description": P,
                        "parameters": {
                            "type": "object",
                            "title": P,
                            "properties": {"q": {"type": "string", "description": P}},
                        },
                    }
                ],
            },
            "multiAgent": {
                "supported": True,
                "subagents": [{"name": "sub<img src=x onerror=window.__pwned='sub'>", "description": P}],
            },
            "state": {"snapshots": True, "deltas": True},
            "reasoning": {"supported": True, "streaming": True},
            "humanInTheLoop": {"feedback": True},
            "custom": {"a2ui": {"v0.9": {"supportedCatalogIds": [_a2ui_catalog()]}}},
        }
    return {
        "identity": {"name": f"Fault: {name}", "description": FAULTS.get(name, "")},
        "transport": {"streaming": True},
        "state": {"snapshots": True, "deltas": True},
    }


def _a2ui_catalog() -> str:
    from tests.support.a2ui_agent import CATALOG

    return CATALOG


def _a2ui_operations() -> list[dict[str, Any]]:
    """The hostile A2UI surface (tests/support/a2ui_agent.py), markup and script URLs in every part."""
    from tests.support.a2ui_agent import surface_operations

    return surface_operations()


def script_payload_run() -> list[dict[str, Any]]:
    """A run whose every agent-controlled field carries a payload."""
    markdown = (
        f"# Title {PAYLOADS[0]}\n\n{P}\n\n[click me](javascript:window.__pwned='md-link') "
        "![img](javascript:window.__pwned='md-img') <b onmouseover=\"window.__pwned='b'\">bold</b>\n\n"
        "| a | b |\n|---|---|\n| <script>window.__pwned='table'</script> | x |\n\n"
        f"{URL_MARKDOWN}\n\n{MARKDOWN_FORMS}\n"
    )
    return [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "STATE_SNAPSHOT", "snapshot": {"title": P, "items": [P], PAYLOADS[1]: P}},
        {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/note", "value": PAYLOADS[4]}]},
        {"type": "REASONING_START", "messageId": "think"},
        {"type": "REASONING_MESSAGE_START", "messageId": "think", "role": "reasoning"},
        {"type": "REASONING_MESSAGE_CONTENT", "messageId": "think", "delta": P},
        {"type": "REASONING_MESSAGE_END", "messageId": "think"},
        {"type": "REASONING_END", "messageId": "think"},
        {"type": "STEP_STARTED", "stepName": PAYLOADS[3]},
        {"type": "STEP_FINISHED", "stepName": PAYLOADS[3]},
        {
            "type": "TOOL_CALL_START",
            "toolCallId": "call<script>1</script>",
            "toolCallName": "evil<img src=x onerror=window.__pwned='toolname'>",
        },
        {"type": "TOOL_CALL_ARGS", "toolCallId": "call<script>1</script>", "delta": json.dumps({"q": P})},
        {"type": "TOOL_CALL_END", "toolCallId": "call<script>1</script>"},
        {
            "type": "TOOL_CALL_RESULT",
            "messageId": "result",
            "toolCallId": "call<script>1</script>",
            "content": P,
        },
        {"type": "SUBAGENT_STARTED", "subagentRunId": "s1", "name": "sub" + PAYLOADS[2], "task": P},
        {"type": "SUBAGENT_FINISHED", "subagentRunId": "s1", "result": P},
        {"type": "TEXT_MESSAGE_START", "messageId": 'answer"><script>1</script>', "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": 'answer"><script>1</script>', "delta": markdown},
        {"type": "TEXT_MESSAGE_END", "messageId": 'answer"><script>1</script>'},
        {"type": "CUSTOM", "name": P, "value": P},
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "activity" + PAYLOADS[3],
            "activityType": "evil" + PAYLOADS[1],
            "content": {"title": P, "url": URL_PAYLOADS[0], "image": URL_PAYLOADS[6], "items": [P]},
        },
        {
            "type": "ACTIVITY_SNAPSHOT",
            "messageId": "a2ui-surface-evil",
            "activityType": "a2ui-surface",
            "content": {"a2ui_operations": _a2ui_operations()},
        },
        _finished(),
    ]


# --- The ASGI application ------------------------------------------------------------------------


class _Gone(Exception):
    """The client went away: stop sending."""


class _Exchange:
    def __init__(self, receive: Receive, send: Send) -> None:
        self._receive = receive
        self._send = send
        self.gone = asyncio.Event()
        self._watch: asyncio.Task[None] | None = None

    async def read_body(self) -> bytes:
        parts = []
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                raise _Gone
            parts.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        self._watch = asyncio.create_task(self._watch_disconnect())
        return b"".join(parts)

    async def _watch_disconnect(self) -> None:
        while True:
            message = await self._receive()
            if message["type"] == "http.disconnect":
                self.gone.set()
                return

    async def wait(self, seconds: float) -> None:
        """Sleep, unless the client goes away first."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.gone.wait(), timeout=seconds)
        if self.gone.is_set():
            raise _Gone

    async def start(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
        await self._send({"type": "http.response.start", "status": status, "headers": raw})

    async def body(self, data: bytes, *, more: bool = True) -> None:
        if self.gone.is_set():
            raise _Gone
        await self._send({"type": "http.response.body", "body": data, "more_body": more})

    async def sse(self) -> None:
        await self.start(200, {"content-type": "text/event-stream", "cache-control": "no-cache"})

    async def json(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(payload).encode()
        await self.start(status, {"content-type": "application/json", **(headers or {})})
        await self.body(body, more=False)

    def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()


def _huge_frame_chunks() -> Iterator[bytes]:
    """One 50 MB frame made lazily of one reused chunk: the agent itself holds almost nothing."""
    yield b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"before","delta":"'
    chunk = b"x" * _CHUNK
    for _ in range(HUGE_FRAME_BYTES // _CHUNK):
        yield chunk
    yield b'"}\n\n'


async def _run(name: str, query: dict[str, str], x: _Exchange) -> None:
    if name in ("ok", "huge-declaration"):
        await x.sse()
        for event in [*_opening(), _finished()]:
            await x.body(_frame(event))
    elif name == "hang-headers":
        await x.wait(3600)
    elif name == "hang-mid-stream":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        await x.wait(3600)
    elif name == "cut-mid-frame":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        await x.body(b'data: {"type":"TEXT_MESSAGE_START","messageId":"after","ro')
        raise ConnectionAbortedError("the fault agent cuts the stream mid-frame")
    elif name == "malformed-json":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        await x.body(b'data: {"type": "TEXT_MESSAGE_START", "messageId": "after", role: assistant\n\n')
        await x.body(_frame(_finished()))
    elif name == "invalid-patch":
        await x.sse()
        events = [
            *_opening(),
            {"type": "STATE_SNAPSHOT", "snapshot": {"steps": ["one"]}},
            {"type": "STATE_DELTA", "delta": [{"op": "replace", "path": "/missing/deep", "value": 1}]},
            {"type": "STATE_DELTA", "delta": [{"op": "add", "path": "/steps/-", "value": "two"}]},
            _finished(),
        ]
        for event in events:
            await x.body(_frame(event))
    elif name == "unknown-event":
        await x.sse()
        opening = _opening()
        events = [
            *opening[:2],
            {"type": "QUANTUM_ENTANGLEMENT", "messageId": "before", "payload": {"spin": "up"}},
            *opening[2:],
            {"type": "X_VENDOR_EXTENSION"},
            _finished(),
        ]
        for event in events:
            await x.body(_frame(event))
    elif name == "huge-frame":
        await x.sse()
        for event in _opening()[:2]:
            await x.body(_frame(event))
        await x.body(_frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "before", "delta": SAID_BEFORE}))
        for chunk in _huge_frame_chunks():
            await x.body(chunk)
        await x.body(_frame(_finished()))
    elif name == "http-500":
        await x.start(500, {"content-type": "text/html"})
        await x.body(
            b"<html><body><h1>Internal Server Error</h1><script>x()</script></body></html>", more=False
        )
        return
    elif name == "unsupported-capability":
        await x.json(
            403,
            {
                "error": {
                    "code": "unsupported_capability",
                    "message": "runs are disabled by this agent's policy",
                    "capability": "messages",
                }
            },
        )
        return
    elif name == "rate-limited":
        await x.json(
            429,
            {"error": {"code": "rate_limited", "message": "slow down"}},
            headers={"retry-after": "30"},
        )
        return
    elif name == "drip":
        delay = float(query.get("delay", "1"))
        fast = int(query.get("fast", "0"))
        body = b"".join(_frame(e) for e in [*_opening(), _finished()])
        await x.sse()
        if fast:
            await x.body(body[:fast])
        for index in range(fast, len(body)):
            await x.wait(delay)
            await x.body(body[index : index + 1])
    elif name == "endless":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        await x.body(_frame({"type": "TEXT_MESSAGE_START", "messageId": "more", "role": "assistant"}))
        chunk = _frame({"type": "TEXT_MESSAGE_CONTENT", "messageId": "more", "delta": "z" * _CHUNK})
        while True:
            await x.body(chunk)
            await asyncio.sleep(0)  # the agent's own loop goes on serving
    elif name == "drip-forever":
        delay = float(query.get("delay", "1"))
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        await x.body(b'data: {"type":"TEXT_MESSAGE_START","messageId":"after","role":"assistant","x":"')
        while True:
            await x.wait(delay)
            await x.body(b"y")
    elif name == "patch-amplification":
        await x.sse()
        for event in [*_opening(), {"type": "STATE_SNAPSHOT", "snapshot": {"seed": "s" * 1024}}]:
            await x.body(_frame(event))
        for n in range(40):  # 2**40 KB if every copy were applied
            await x.body(
                _frame({"type": "STATE_DELTA", "delta": [{"op": "copy", "from": "", "path": f"/k{n}"}]})
            )
        await x.body(_frame(_finished()))
    elif name == "deep-nesting":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
        deep = _deep(DEEP_LEVELS)
        await x.body(f'data: {{"type": "CUSTOM", "name": "deep", "value": {deep}}}\n\n'.encode())
        await x.body(_frame(_finished()))
    elif name == "schema-ref":
        await x.sse()
        for event in _asking({"$ref": query.get("ref", "file:///etc/passwd")}):
            await x.body(_frame(event))
    elif name == "redos":
        await x.sse()
        schema = {"type": "object", "properties": {"to": {"type": "string", "pattern": REDOS_PATTERN}}}
        for event in _asking(schema):
            await x.body(_frame(event))
    elif name == "bad-utf8":
        await x.sse()
        opening = _opening()
        for event in opening[:-1]:
            await x.body(_frame(event))
        bad = b'data: {"type": "TEXT_MESSAGE_START", "messageId": "bad\xff\xfe", "role": "assistant"}\n\n'
        good = [
            {"type": "TEXT_MESSAGE_START", "messageId": "after", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "after", "delta": SAID_AFTER},
            {"type": "TEXT_MESSAGE_END", "messageId": "after"},
            _finished(),
        ]
        # One read holds the bad frame and good ones on both sides of it.
        await x.body(_frame(opening[-1]) + bad + b"".join(_frame(e) for e in good))
    elif name == "long-lines":
        await x.sse()
        events = _asking({"type": "object"})
        events[-1]["outcome"]["interrupts"][0]["message"] = f"Send {LONG_LINE}?"
        events[5]["delta"] = json.dumps({"to": LONG_LINE})
        answer = [
            {"type": "STATE_SNAPSHOT", "snapshot": {"note": LONG_LINE}},
            {"type": "TEXT_MESSAGE_START", "messageId": "long", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "long", "delta": f"`{LONG_LINE}` and {LONG_LINE}"},
            {"type": "TEXT_MESSAGE_END", "messageId": "long"},
        ]
        for event in [*events[:4], *answer, *events[4:]]:
            await x.body(_frame(event))
    elif name == "inbox-payloads":
        await x.sse()
        events = _asking({"type": "object"})
        events[4]["toolCallName"] = "send" + PAYLOADS[1]
        asked = events[-1]["outcome"]["interrupts"]
        asked[0]["message"] = P
        asked.append({"id": "ask-2", "reason": PAYLOADS[2] + PAYLOADS[4], "message": P})
        for event in events:
            await x.body(_frame(event))
    elif name == "redirect-port":
        await x.start(307, {"location": query.get("to", "http://127.0.0.1:9/"), "content-length": "0"})
        await x.body(b"", more=False)
        return
    elif name == "no-finish":
        await x.sse()
        for event in _opening():
            await x.body(_frame(event))
    elif name == "script-payloads":
        await x.sse()
        for event in script_payload_run():
            await x.body(_frame(event))
    elif name == "error-payloads":
        await x.sse()
        for event in [*_opening(), {"type": "RUN_ERROR", "message": P, "code": PAYLOADS[1]}]:
            await x.body(_frame(event))
    else:
        await x.json(404, {"error": {"code": "not_found", "message": "no such fault"}})
        return
    with contextlib.suppress(_Gone):
        await x.body(b"", more=False)


async def _capabilities(name: str, x: _Exchange) -> None:
    if name == "deep-nesting":
        await x.start(200, {"content-type": "application/json"})
        await x.body(
            f'{{"identity": {{"name": "Deep"}}, "custom": {_deep(DEEP_LEVELS)}}}'.encode(), more=False
        )
        return
    if name == "huge-declaration":
        await x.start(200, {"content-type": "application/json"})
        await x.body(b'{"identity": {"name": "Huge", "description": "')
        chunk = b"y" * _CHUNK
        for _ in range(HUGE_DECLARATION_BYTES // _CHUNK):
            await x.body(chunk)
        await x.body(b'"}}', more=False)
        return
    await x.json(200, declaration(name))


async def application(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    parts = [p for p in scope["path"].split("/") if p]
    query = {k: v[-1] for k, v in parse_qs(scope.get("query_string", b"").decode()).items()}
    x = _Exchange(receive, send)
    try:
        await x.read_body()
        if len(parts) < 2 or parts[0] != "fault" or parts[1] not in FAULTS:
            await x.json(404, {"error": {"code": "not_found", "message": "no such fault"}})
        elif len(parts) == 3 and parts[2] == "capabilities" and scope["method"] == "GET":
            await _capabilities(parts[1], x)
        elif len(parts) == 2 and scope["method"] == "POST":
            await _run(parts[1], query, x)
        else:
            await x.json(405, {"error": {"code": "invalid_request", "message": "method not allowed"}})
    except _Gone:
        pass
    finally:
        x.close()


# --- Serving it ----------------------------------------------------------------------------------


def refused_url() -> str:
    """An address on this machine where nothing listens: connecting to it is refused."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/fault/refuse/"


class FaultAgentServer(ThreadedUvicorn):
    """uvicorn serving the fault agent from a thread of this process."""

    def __init__(self) -> None:
        # Critical only: the cut-mid-frame fault raises on purpose, uvicorn would log it as an error.
        super().__init__(application, log_level="critical")

    def url_for(self, fault: str, query: str = "") -> str:
        if fault == "refuse":
            return refused_url()
        return f"{self.url}/fault/{fault}/" + (f"?{query}" if query else "")

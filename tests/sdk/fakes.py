"""An in-process HTTP/1.1 server on a real socket, for the SDK's tests.

Real HTTP matters for streaming behaviour: chunk boundaries, a connection cut mid-frame, a
client that closes early. Each response is written raw and the connection closed afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

REASONS = {
    200: "OK",
    201: "Created",
    204: "No Content",
    400: "Bad Request",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    410: "Gone",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    426: "Upgrade Required",
    429: "Too Many Requests",
    500: "Internal Server Error",
    503: "Service Unavailable",
}


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Exchange:
    """What the handler writes to; ``disconnected`` is set when the client goes away."""

    request: Request
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    disconnected: asyncio.Event = field(default_factory=asyncio.Event)

    def head(self, status: int = 200, headers: dict[str, str] | None = None) -> None:
        lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}", "Connection: close"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        self.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())

    def respond(
        self, status: int, body: bytes | str | Any = b"", headers: dict[str, str] | None = None
    ) -> None:
        headers = dict(headers or {})
        if not isinstance(body, bytes | str):
            body = json.dumps(body)
            headers.setdefault("Content-Type", "application/json")
        if isinstance(body, str):
            body = body.encode()
        headers["Content-Length"] = str(len(body))
        self.head(status, headers)
        self.writer.write(body)

    def start_sse(self, status: int = 200) -> None:
        self.head(status, {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})

    async def send(self, data: bytes | str) -> None:
        self.writer.write(data.encode() if isinstance(data, str) else data)
        await self.writer.drain()


Handler = Callable[[Exchange], Awaitable[None]]


class FakeServer:
    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.exchanges: list[Exchange] = []
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.url = ""

    async def start(self) -> FakeServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            request = await self._read_request(reader)
            if request is None:
                return
            self.requests.append(request)
            exchange = Exchange(request, reader, writer)
            self.exchanges.append(exchange)
            watcher = asyncio.create_task(self._watch(exchange))
            try:
                await self.handler(exchange)
                with contextlib.suppress(ConnectionError):
                    await writer.drain()
            finally:
                watcher.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await watcher
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()
            self._tasks.discard(task)

    @staticmethod
    async def _watch(exchange: Exchange) -> None:
        # The client sends nothing after its request: EOF here means it closed the connection.
        with contextlib.suppress(ConnectionError):
            await exchange.reader.read()
        exchange.disconnected.set()

    @staticmethod
    async def _read_request(reader: asyncio.StreamReader) -> Request | None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError:
            return None
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers: dict[str, str] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        return Request(method, target, headers, body)


def sse(obj: Any, *, event: str | None = None, id: int | None = None) -> str:
    """One SSE frame."""
    head = ""
    if id is not None:
        head += f"id: {id}\n"
    if event is not None:
        head += f"event: {event}\n"
    data = obj if isinstance(obj, str) else json.dumps(obj)
    return f"{head}data: {data}\n\n"

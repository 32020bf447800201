"""A lean httpx transport for long event streams: one HTTP/1.1 connection per request, parsed in C.

httpx's default transport (httpcore over anyio, parsing with h11) costs tens of microseconds of
Python for every chunk a response delivers: a timeout scope, a stream read and an h11 event per
chunk, through a dozen layers of async iterators. For a run that is every event the agent sends,
and one server process follows hundreds of runs at once. This transport answers each request on a
connection of its own: an asyncio protocol feeds the bytes to httptools (the parser uvicorn uses),
and the body reaches httpx as the chunks the parser hands over, with nothing in between.

It does what a run's client needs and nothing more: http and https, request bodies of any size,
bodies by content-length, chunked or until the connection closes, connect and read timeouts, and
the same httpx exceptions the default transport raises, so redirects, the address guard, content
decoding and every error message work unchanged. There is no connection pool: a run is one long
request, and the few requests around it (an external agent's prepare, an upload) pay one connect,
as does each discovery of a cold catalogue (cheaper than searching a pool shared by fifty agents).
"""

from __future__ import annotations

import asyncio
import collections
import ssl
from collections.abc import AsyncIterator

import httptools
import httpx

__all__ = ["StreamingHTTPTransport"]

# Reading stops while this much of a response waits unread, and starts again under half of it.
HIGH_WATER = 1024 * 1024


class _ResponseProtocol(asyncio.Protocol):
    """Bytes in, parsed by httptools: the head once, then body chunks queued for the reader."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.status = 0
        self.headers: list[tuple[bytes, bytes]] = []
        self._loop = asyncio.get_running_loop()
        self.head = self._loop.create_future()
        self.chunks: collections.deque[bytes] = collections.deque()
        self.queued = 0
        self.complete = False  # the parser saw the end of the message
        self.closed = False  # the connection is gone
        self.error: Exception | None = None
        self.paused = False
        self._last_data = self._loop.time()
        self._idle_seconds: float | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._waiter: asyncio.Future | None = None
        self._writable = asyncio.Event()
        self._writable.set()

    # asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self._last_data = self._loop.time()
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserUpgrade:
            self._fail(httpx.RemoteProtocolError("the server switched protocols"))
        except httptools.HttpParserError as exc:
            self._fail(httpx.RemoteProtocolError(f"the server sent invalid HTTP ({exc})"))
        if self.queued > HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool:
        return False  # close the connection: connection_lost follows

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
        self._writable.set()
        if not self.head.done():
            self.head.set_exception(
                httpx.RemoteProtocolError("the server closed the connection without sending a response")
            )
        elif not self.complete and self.error is None:
            if self._close_delimited():
                self.complete = True
            else:
                self.error = httpx.RemoteProtocolError(
                    "the server closed the connection without sending the complete body"
                )
        self._wake()

    def pause_writing(self) -> None:
        self._writable.clear()

    def resume_writing(self) -> None:
        self._writable.set()

    # httptools callbacks

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        if 100 <= self.status < 200:  # an interim response: the real one follows
            self.headers = []
            return
        if not self.head.done():
            self.head.set_result(None)

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)
        self.queued += len(body)
        self._wake()

    def on_message_complete(self) -> None:
        if 100 <= self.status < 200:
            return
        self.complete = True
        self._wake()

    # The reader's side

    async def next_chunk(self, idle_seconds: float | None) -> bytes | None:
        """What has arrived of the body; None at its end. ReadTimeout after `idle_seconds` of nothing.

        The idle time is watched by one timer per connection that looks at when data last came,
        not by a timeout armed and cancelled around every chunk.
        """
        while not self.chunks:
            if self.error is not None:
                raise self.error
            if self.complete:
                return None
            if self.closed:
                raise httpx.ReadError("the connection was closed")
            self._waiter = self._loop.create_future()
            if idle_seconds is not None and self._watchdog is None:
                self._idle_seconds = idle_seconds
                self._watchdog = self._loop.call_at(self._last_data + idle_seconds, self._check_idle)
            try:
                await self._waiter
            finally:
                self._waiter = None
        # Everything that has arrived, as one piece: a burst of events costs one pass through httpx.
        chunk = self.chunks.popleft() if len(self.chunks) == 1 else b"".join(self.chunks)
        self.chunks.clear()
        self.queued -= len(chunk)
        if self.paused and self.queued < HIGH_WATER // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return chunk

    def _check_idle(self) -> None:
        assert self._idle_seconds is not None
        self._watchdog = None
        if self.closed or self.complete:
            return
        due = self._last_data + self._idle_seconds
        if self._loop.time() < due:  # data came since: look again when it would be overdue
            self._watchdog = self._loop.call_at(due, self._check_idle)
        elif self._waiter is not None and not self._waiter.done():
            self._waiter.set_exception(httpx.ReadTimeout("no data from the server within the read timeout"))
        # Overdue with nobody waiting: the reader is behind, not the server; next_chunk arms it again.

    async def drain(self) -> None:
        await self._writable.wait()
        if self.closed:
            raise httpx.WriteError("the connection was closed while the request was being sent")

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def _close_delimited(self) -> bool:
        names = {name.lower() for name, _ in self.headers}
        return b"content-length" not in names and b"transfer-encoding" not in names

    def _fail(self, error: Exception) -> None:
        if not self.head.done():
            self.head.set_exception(error)
        elif self.error is None:
            self.error = error
        self.close()
        self._wake()

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)


class _Body(httpx.AsyncByteStream):
    def __init__(self, protocol: _ResponseProtocol, read_timeout: float | None) -> None:
        self._protocol = protocol
        self._timeout = read_timeout

    async def __aiter__(self) -> AsyncIterator[bytes]:
        while (chunk := await self._protocol.next_chunk(self._timeout)) is not None:
            yield chunk

    async def aclose(self) -> None:
        self._protocol.close()


class StreamingHTTPTransport(httpx.AsyncBaseTransport):
    """One connection per request, HTTP/1.1, parsed by httptools (see the module's docstring)."""

    def __init__(self, *, verify: ssl.SSLContext | None = None) -> None:
        self._ssl = verify

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        timeouts = request.extensions.get("timeout", {})
        url = request.url
        if url.scheme not in {"http", "https"}:
            raise httpx.UnsupportedProtocol(f"unsupported URL scheme {url.scheme!r}", request=request)
        port = url.port or (443 if url.scheme == "https" else 80)
        tls: ssl.SSLContext | None = None
        if url.scheme == "https":
            tls = self._ssl or ssl.create_default_context()
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeouts.get("connect")):
                _, protocol = await loop.create_connection(
                    _ResponseProtocol,
                    host=url.host,
                    port=port,
                    ssl=tls,
                    server_hostname=request.extensions.get("sni_hostname", url.host) if tls else None,
                )
        except TimeoutError as exc:
            raise httpx.ConnectTimeout(f"connecting to {url.host}:{port} timed out", request=request) from exc
        except (OSError, ssl.SSLError) as exc:
            raise httpx.ConnectError(str(exc) or type(exc).__name__, request=request) from exc
        try:
            await self._send(protocol, request, timeouts.get("write"))
            try:
                async with asyncio.timeout(timeouts.get("read")):
                    await protocol.head
            except TimeoutError as exc:
                raise httpx.ReadTimeout("no response from the server within the read timeout") from exc
        except httpx.HTTPError as exc:
            protocol.close()
            exc.request = request
            raise
        except BaseException:
            protocol.close()
            raise
        return httpx.Response(
            protocol.status,
            headers=protocol.headers,
            stream=_Body(protocol, timeouts.get("read")),
            extensions={"http_version": b"HTTP/1.1", "reason_phrase": b""},
        )

    @staticmethod
    async def _send(protocol: _ResponseProtocol, request: httpx.Request, write_seconds: float | None) -> None:
        transport = protocol.transport
        assert transport is not None
        target = request.url.raw_path
        head = [b"%s %s HTTP/1.1\r\n" % (request.method.encode("ascii"), target)]
        head += [b"%s: %s\r\n" % (name, value) for name, value in request.headers.raw]
        head.append(b"\r\n")
        transport.write(b"".join(head))
        chunked = request.headers.get("transfer-encoding", "").lower() == "chunked"
        try:
            async with asyncio.timeout(write_seconds):
                async for part in request.stream:  # type: ignore[union-attr]
                    if part:
                        transport.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                        await protocol.drain()
                if chunked:
                    transport.write(b"0\r\n\r\n")
                await protocol.drain()
        except TimeoutError as exc:
            raise httpx.WriteTimeout("sending the request timed out") from exc

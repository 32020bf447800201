"""A round-robin TCP proxy in front of web processes, as a load balancer without sticky sessions:
each new connection goes to the next backend in turn, one that refuses it is skipped for the one
after, and a backend that dies closes the connections it held (the browser sees its stream cut).

It runs its own event loop in a thread of the test process, on a free loopback port, and notes the
request line (and Last-Event-ID) of each request it passes, with the backend that got it, so that
a test can tell which process serves a stream. `refuse()` closes every connection it holds and
each new one at once (the network gone, for the browser), until `accept()`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from dataclasses import dataclass

REQUEST = re.compile(rb"(?:^|\r\n)(GET|POST|HEAD) (\S+) HTTP/1\.1\r\n((?:[^\r\n]+\r\n)*)\r\n")
LAST_EVENT_ID = re.compile(rb"^last-event-id: *(\S*)\r$", re.I | re.M)


@dataclass(frozen=True)
class Passed:
    backend: int  # the backend's port
    method: str
    path: str
    last_event_id: str | None


class RoundRobinProxy:
    def __init__(self, backends: list[int]) -> None:
        self.backends = list(backends)
        self.passed: list[Passed] = []
        self.port = 0
        self._turn = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="round-robin-proxy", daemon=True)
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()
        self._refusing = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> RoundRobinProxy:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("the proxy did not start")
        return self

    def stop(self) -> None:
        if self._loop.is_running():
            self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def refuse(self) -> None:
        """Every connection cut, and every new one closed as it comes, until `accept()`."""

        def cut() -> None:
            self._refusing = True
            for writer in list(self._open):
                writer.close()

        self._loop.call_soon_threadsafe(cut)

    def accept(self) -> None:
        self._loop.call_soon_threadsafe(setattr, self, "_refusing", False)

    def streams(self, run_id: str) -> list[Passed]:
        """The requests for the run's event stream, in the order they came."""
        return [p for p in list(self.passed) if p.path.startswith(f"/runs/{run_id}/events/")]

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._server.close()
            for task in asyncio.all_tasks(self._loop):
                task.cancel()
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(asyncio.sleep(0))
            self._loop.close()

    async def _connect(self) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter] | None:
        for _ in self.backends:
            port = self.backends[self._turn % len(self.backends)]
            self._turn += 1
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                continue  # dead: the next one
            return port, reader, writer
        return None

    async def _handle(self, client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        found = None if self._refusing else await self._connect()
        if found is None:
            client_writer.close()
            return
        port, reader, writer = found
        self._open.add(client_writer)

        async def pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter, upstream: bool) -> None:
            pending = b""
            while data := await source.read(65536):
                if upstream:
                    pending = self._note(port, pending + data)
                sink.write(data)
                await sink.drain()

        tasks = [
            asyncio.create_task(pipe(client_reader, writer, True)),
            asyncio.create_task(pipe(reader, client_writer, False)),
        ]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            self._open.discard(client_writer)
            for task in tasks:
                task.cancel()
            for side in (writer, client_writer):
                with contextlib.suppress(Exception):
                    side.close()

    def _note(self, port: int, data: bytes) -> bytes:
        """Notes the requests whose head is in `data`; what is left of it (a head not whole yet)."""
        end = 0
        for match in REQUEST.finditer(data):
            last = LAST_EVENT_ID.search(match.group(3))
            self.passed.append(
                Passed(port, match.group(1).decode(), match.group(2).decode(),
                       last.group(1).decode() if last else None)
            )  # fmt: skip
            end = match.end()
        rest = data[end:]
        return rest[-8192:] if b"\r\n\r\n" not in rest else b""

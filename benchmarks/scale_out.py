"""The product past one process: 4 web workers, 2 run workers, PostgreSQL and Redis, and its faults.

Processes on loopback, each started here and stopped at the end:
- a throwaway PostgreSQL cluster and redis-server (installed with apt-get when missing and this
  runs as root; skipped otherwise, saying so);
- 4 web workers (`manage.py serve`, one port each, as deployed: DEBUG off) with
  AGENTS_UI_RUN_WORKERS=separate and REDIS_URL: stateless, no sticky sessions. This process is the
  proxy's round robin: each send goes to the next worker, and its stream is followed on another one;
- 2 run workers (`manage.py run_worker`) claiming the queued runs;
- a paced AG-UI agent (its own process, a raw asyncio server): each delta holds its sequence number
  and the wall-clock microsecond it was sent, so the browser side counts every word lost or shown
  twice, and how long each took to arrive.

This process is the browsers: raw asyncio SSE clients that keep the answer as the page would (a
whole render replaces it, an append grows it) and, when a stream breaks before its `done` frame,
reconnect to the next web worker as EventSource does (the page says "Reconnecting...").

Figures:
- `scale_out_follow_latency_p99_ms`: agent event to the browser, followed on a web worker other than
  the one that took the send (the run is driven by a run worker; the words go through Redis);
- `scale_out_streams_held`: streams open at once across the 4 web workers (target >= 1000);
- `scale_out_restart_lost_events`, `..._duplicate_events`: one web worker killed (SIGKILL) while
  200 streams follow through it; its browsers reconnect to the others and finish every answer;
- `scale_out_run_worker_drain_lost_runs`: a run worker stopped (SIGTERM) mid-run: it finishes its
  runs within its drain time and exits; every run ends complete;
- `scale_out_run_worker_kill_detected_s`: a run worker killed (SIGKILL): seconds until its run is
  marked "Interrupted: the server running it stopped", under the default lease and sweep settings;
- `scale_out_redis_restart_lost_events`, `scale_out_postgres_restart_lost_events`: Redis, then
  PostgreSQL, restarted while streams are open; the followers recover (from the database, by
  reconnecting) and every answer ends complete.

Usage: python benchmarks/scale_out.py [--json] [--quick] [--streams N] [--only PHASE ...]
`--quick` (the test's): fewer streams, and leases of seconds, not the defaults' minutes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.stream import free_port, wait_for_port  # noqa: E402

WEB_WORKERS = 4
RUN_WORKERS = 2
# The leases of `--quick`: a stopped run worker is noticed within seconds (the defaults: minutes).
QUICK_LEASES = {
    "AGENTS_UI_WORKER_HEARTBEAT_SECONDS": "0.5",
    "AGENTS_UI_WORKER_SWEEP_SECONDS": "1",
    "AGENTS_UI_WORKER_LEASE_SECONDS": "4",
}
SEND_CONCURRENCY = 16
PHASES = ("latency", "held", "web_restart", "drain", "kill", "redis_restart", "postgres_restart")
INTERRUPTED_PREFIX = "Interrupted: the server running it stopped"

# --- The paced agent (its own process) ---------------------------------------------------------------
#
#   POST /paced/<parts>/<interval>/   a run: <parts> deltas <interval> s apart (0: until GET /finish)
#   GET  /paced/<parts>/<interval>/capabilities, GET /finish, GET /sent

_DELTA = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"[%06d.%016d] "}\n\n'


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _event(event: dict[str, Any]) -> bytes:
    return _chunk(f"data: {json.dumps(event, separators=(',', ':'))}\n\n".encode())


async def agent_main(port: int) -> None:
    capabilities = json.dumps({"identity": {"name": "Paced agent"}, "transport": {"streaming": True}})
    finishing = {"now": asyncio.Event()}
    sent = {"events": 0, "runs": 0, "finished": 0}

    async def stream_run(writer: asyncio.StreamWriter, path: str, body: bytes) -> None:
        _, parts_text, interval_text = path.strip("/").split("/")[:3]
        parts, interval = int(parts_text), float(interval_text)
        finish = finishing["now"]
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        run = json.loads(body or b"{}")
        thread_id, run_id = run.get("threadId", "t"), run.get("runId", "r")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        writer.write(_event({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}))
        writer.write(_event({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}))
        sent["runs"] += 1
        n, due = 0, loop.time() + interval

        def tick() -> None:
            nonlocal n, due
            if writer.is_closing() or (parts and n >= parts) or (not parts and finish.is_set()):
                if not ended.done():
                    ended.set_result(not writer.is_closing())
                return
            writer.write(_chunk(_DELTA % (n, time.time_ns() // 1000)))
            sent["events"] += 1
            n += 1
            due += interval
            loop.call_at(due, tick)

        loop.call_at(due, tick)
        if await ended:
            writer.write(_event({"type": "TEXT_MESSAGE_END", "messageId": "m1"}))
            writer.write(_event({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}))
            writer.write(b"0\r\n\r\n")
            sent["finished"] += 1
            with contextlib.suppress(ConnectionError):
                await writer.drain()

    async def reply(writer: asyncio.StreamWriter, payload: str, status: str = "200 OK") -> None:
        body = payload.encode()
        writer.write(
            f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {len(body)}\r\n"
            "connection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            request_line, *header_lines = head.decode("latin-1").split("\r\n")
            method, path, _ = request_line.split(" ", 2)
            headers = dict(line.lower().split(": ", 1) for line in header_lines if ": " in line)
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            if method == "POST" and path.startswith("/paced/"):
                await stream_run(writer, path, body)
            elif path.rstrip("/").endswith("capabilities"):
                await reply(writer, capabilities)
            elif path == "/finish":
                finishing["now"].set()
                finishing["now"] = asyncio.Event()
                await reply(writer, json.dumps(sent))
            elif path == "/sent":
                await reply(writer, json.dumps(sent))
            else:
                await reply(writer, "{}", "404 Not Found")
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# --- The browsers (this process) ---------------------------------------------------------------------

_TOKEN = re.compile(rb"\[(\d{6})\.(\d{16})\]")
# What an update does to a live answer: appends what settled, replaces the tail, grows its line.
_SWAP = re.compile(
    rb'<div hx-swap-oob="beforeend:#msg-[0-9a-f]+-done">(.*?)</div>'
    rb'|<div class="md-tail" id="msg-[0-9a-f]+-tail" hx-swap-oob="true">(.*?)</div>'
    rb'|<span hx-swap-oob="beforeend:#msg-[0-9a-f]+-line">(.*?)</span>',
    re.S,
)
# A render of the whole run, or of the whole answer: what the page shows is replaced by it.
_WHOLE = re.compile(rb'class="run-body" id="[^"]+-body"|<article class="msg msg-assistant[^>]*hx-swap-oob')
# In a whole render, a live answer's settled part and its tail.
_LIVE = re.compile(
    rb'id="msg-[0-9a-f]+-done">(.*?)</div><div class="md-tail" id="msg-[0-9a-f]+-tail">(.*?)</div>', re.S
)


class Follower(asyncio.Protocol):
    """One browser tab's EventSource on /runs/<id>/events/, keeping the answer as the page shows it.

    Broken before its `done` frame, it connects again (to the next web worker: `ports` in turn),
    as EventSource does; the new stream renders the run whole, then goes on.
    """

    def __init__(self, ports: list[int], run_id: str, cookie: str, *, retries: int = 200) -> None:
        self.ports, self.run_id, self.cookie = ports, run_id, cookie
        self.turn = 0
        self.retries = retries
        self.first_update = asyncio.Event()
        self.ended = asyncio.Event()
        self.done = False
        self.error = ""
        self.reconnects = 0
        self.frames: list[bytes] = []
        self.updates = 0
        self.recording = True
        self.latencies: list[float] = []
        self.shown: list[int] = []  # sequence numbers of the words the page shows, in order
        self.worst_duplicates = self.worst_gap = self.out_of_order = 0
        self._settled: list[int] = []
        self._tail: list[int] = []
        self._newest = -1
        self._open = False
        self._buffer = b""
        self._events = b""
        self._head = False
        self._transport: asyncio.Transport | None = None

    @property
    def port(self) -> int:
        return self.ports[self.turn % len(self.ports)]

    def start(self) -> None:
        asyncio.get_running_loop().create_task(self._connect())

    async def _connect(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            await loop.create_connection(lambda: self, "127.0.0.1", self.port)
        except OSError as exc:
            self._broken(f"connect: {exc}")

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
        self._buffer, self._events, self._head, self._open = b"", b"", False, True
        transport.write(  # type: ignore[attr-defined]
            f"GET /runs/{self.run_id}/events/ HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\n"
            f"Accept: text/event-stream\r\nCookie: {self.cookie}\r\n\r\n".encode()
        )

    def data_received(self, data: bytes) -> None:
        received_us = time.time_ns() // 1000
        self._buffer += data
        if not self._head:
            if b"\r\n\r\n" not in self._buffer:
                return
            head, self._buffer = self._buffer.split(b"\r\n\r\n", 1)
            self._head = True
            if not head.startswith(b"HTTP/1.1 200"):
                self._close()
                self._broken(head.split(b"\r\n", 1)[0].decode())
                return
        while b"\r\n" in self._buffer:  # whole chunks only
            size_line, rest = self._buffer.split(b"\r\n", 1)
            size = int(size_line.strip(), 16)
            if len(rest) < size + 2:
                return
            self._buffer = rest[size + 2 :]
            if size == 0:
                break
            self._events += rest[:size]
            while b"\n\n" in self._events:
                frame, self._events = self._events.split(b"\n\n", 1)
                self._frame(frame, received_us)
            if self.done:
                break
        if self.done or (self._head and self._buffer.startswith(b"0\r\n")):
            self._close()
            if not self.done:
                self._broken("stream ended without its done frame")

    def connection_lost(self, exc: Exception | None) -> None:
        if self._open:
            self._open = False
            if not self.done:
                self._broken(f"connection lost: {exc}" if exc else "connection closed")

    def _close(self) -> None:
        self._open = False
        if self._transport is not None:
            self._transport.close()

    def _broken(self, why: str) -> None:
        """EventSource's reconnect: the next web worker, a moment later."""
        if self.done or self.ended.is_set():
            return
        if self.reconnects >= self.retries:
            self.error = why
            self.first_update.set()
            self.ended.set()
            return
        self.reconnects += 1
        self.turn += 1
        asyncio.get_running_loop().call_later(0.3 if self.reconnects > 1 else 0.05, self.start)

    def _frame(self, frame: bytes, received_us: int) -> None:
        while frame.startswith((b"id: ", b"retry: ")):  # a frame's cursor, and when to ask again
            frame = frame.partition(b"\n")[2]
        if frame.startswith(b"event: done"):
            self.done = True
            self.ended.set()
            return
        if not frame.startswith(b"event: update"):
            return
        html = b"\n".join(line[6:] for line in frame.split(b"\n") if line.startswith(b"data: "))
        self.updates += 1
        if os.environ.get("SCALE_DEBUG"):
            self.frames.append(html)
        self.first_update.set()
        if _WHOLE.search(html):
            live = _LIVE.search(html)
            if live:
                self._settled = [int(n) for n, _ in _TOKEN.findall(live.group(1))]
                self._tail = [int(n) for n, _ in _TOKEN.findall(live.group(2))]
            else:
                self._settled, self._tail = [int(n) for n, _ in _TOKEN.findall(html)], []
            self._arrived(_TOKEN.findall(html), received_us)
        else:
            for settled, tail, line in _SWAP.findall(html):
                tokens = _TOKEN.findall(settled or tail or line)
                if settled:
                    self._settled += [int(n) for n, _ in tokens]
                elif tail:
                    self._tail = [int(n) for n, _ in tokens]
                else:
                    self._tail += [int(n) for n, _ in tokens]
                self._arrived(tokens, received_us)
        self.shown = shown = self._settled + self._tail
        # At every moment the page shows the words 0..k once each, in order: any other is counted.
        distinct = len(set(shown))
        self.worst_duplicates = max(self.worst_duplicates, len(shown) - distinct)
        self.worst_gap = max(self.worst_gap, (max(shown) + 1 - distinct) if shown else 0)
        if shown != sorted(shown):
            self.out_of_order += 1

    def _arrived(self, tokens: list[tuple[bytes, bytes]], received_us: int) -> None:
        for n_text, stamp in tokens:
            n = int(n_text)
            if n > self._newest:
                self._newest = n
                if self.recording:
                    self.latencies.append((received_us - int(stamp)) / 1000)

    def lost(self, parts: int) -> int:
        """Words missing from the page at the end, or missing in the middle at any moment."""
        return max(len(set(range(parts)) - set(self.shown)), self.worst_gap)

    def duplicates(self) -> int:
        """Words the page showed twice at any moment (or out of order)."""
        return max(len(self.shown) - len(set(self.shown)), self.worst_duplicates) + self.out_of_order


# --- The deployment: processes started, stopped, killed ---------------------------------------------


def log(message: str) -> None:
    print(f"[scale_out] {message}", file=sys.stderr, flush=True)


def _load_script() -> Any:
    """scripts/load.py's throwaway PostgreSQL cluster (its Postgres class)."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import load

    return load


def redis_binary() -> str | None:
    found = shutil.which("redis-server")
    if found is None and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "redis-server"], env=env, capture_output=True)
        found = shutil.which("redis-server")
    return found


class Deployment:
    def __init__(self, tmp: Path, database_url: str, redis_url: str, leases: dict[str, str]) -> None:
        self.tmp = tmp
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
            "DATABASE_URL": database_url,
            "REDIS_URL": redis_url,
            "AGENTS_UI_RUN_WORKERS": "separate",
            "AGENTS_UI_DEMO_AGENTS": "false",
            "AGENTS_UI_DEMO_AUTOREGISTER": "false",
            "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES": "true",
            "LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
        self.leases = leases
        self.ports = [free_port() for _ in range(WEB_WORKERS)]
        self.web: dict[int, subprocess.Popen] = {}
        self.run_workers: dict[str, subprocess.Popen] = {}
        self._logs: list[Any] = []

    def _log(self, name: str) -> Any:
        handle = (self.tmp / f"{name}.log").open("a")
        self._logs.append(handle)
        return handle

    def start_web(self, port: int) -> None:
        command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port),
                   "--backlog", "4096", "--timeout-graceful-shutdown", "5"]  # fmt: skip
        out = self._log(f"web-{port}")
        self.web[port] = subprocess.Popen(command, cwd=ROOT, env=self.env, stdout=out, stderr=out)

    def start_run_worker(self, name: str, concurrency: int) -> None:
        command = [sys.executable, "manage.py", "run_worker", "--concurrency", str(concurrency),
                   "--name", name]  # fmt: skip
        out = self._log(f"run-{name}")
        env = {**self.env, **self.leases}
        self.run_workers[name] = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=out)

    def wait_web(self) -> None:
        for port in self.ports:
            wait_for_port(port, timeout=180)  # a busy machine starts Django slowly

    def stop(self) -> None:
        processes = [*self.web.values(), *self.run_workers.values()]
        for process in processes:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 15
        for process in processes:
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for handle in self._logs:
            handle.close()

    def logs_tail(self, limit: int = 4000) -> str:
        return "\n".join(f"== {p.name}\n{p.read_text()[-limit:]}" for p in sorted(self.tmp.glob("*.log")))


def setup_fixtures(agent_port: int) -> tuple[str, str, dict[str, str]]:
    """Migrate, then a person and the agents they talk to: (username, password, phase -> slug)."""
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0, interactive=False)
    from django.db import connections

    from agents_ui.models import AgentEndpoint
    from tests.factories import PASSWORD, make_user

    agents = {
        "latency": "paced/100/0.05",  # a word every 50 ms, under the 30 swaps a second
        "held": "paced/0/3",  # a word every 3 s until told to finish
        "restart": "paced/0/0.1",  # 10 words a second until told to finish
        "warm": "paced/10/0.05",
        "drain": "paced/100/0.1",  # 10 s: within the drain time (30 s)
        "kill": "paced/0/0.5",  # until the worker driving it dies
        "fault": "paced/0/0.1",  # 10 words a second until told to finish
    }
    slugs = {}
    for phase, path in agents.items():
        slug = f"scale-{phase}"
        # The agent shares this machine's two cores with everything else here: it may take longer
        # than a real one (on its own machine) to accept a connection.
        AgentEndpoint.objects.create(
            name=slug, slug=slug, protocol="agui", base_url=f"http://127.0.0.1:{agent_port}/{path}/",
            connect_timeout=30,
        )  # fmt: skip
        slugs[phase] = slug
    username = make_user("scale").username
    connections.close_all()
    return username, PASSWORD, slugs


def _runs_by_worker(run_ids: list[str]) -> dict[str, dict[str, Any]]:
    from django.db import connections

    from agents_ui.models import Run

    try:
        rows = Run.objects.filter(pk__in=run_ids).values("pk", "status", "error", "worker", "attempt")
        return {str(row["pk"]): row for row in rows}
    finally:
        connections.close_all()


# --- The measurements ------------------------------------------------------------------------------


class Browsers:
    """The people: one session, sends round-robin over the web workers, streams on another one."""

    def __init__(self, ports: list[int], cookie: str, token: str) -> None:
        self.ports = ports
        self.cookie, self.token = cookie, token
        self.sent = 0

    async def send(self, client: Any, slug: str, port: int) -> str | None:
        import httpx

        base = f"http://127.0.0.1:{port}"
        headers = {"HX-Request": "true", "X-CSRFToken": self.token, "Referer": base, "Cookie": self.cookie}
        try:
            response = await client.post(
                f"{base}/agents/{slug}/send/", data={"content": f"Go on #{self.sent}", "conversation": ""},
                headers=headers,
            )  # fmt: skip
        except httpx.HTTPError:
            return None
        self.sent += 1
        match = re.search(r'sse-connect="/runs/([0-9a-f-]+)/events/"', response.text)
        return match.group(1) if response.status_code == 200 and match else None

    async def start(self, slug: str, count: int, *, send_to: list[int], follow_on: list[int] | None,
                    recording: bool = True) -> tuple[list[Follower], int]:  # fmt: skip
        """`count` conversations, sent in turn to `send_to`; each followed at once on the next worker
        of `follow_on` (by default the next web worker after the one that took the send)."""
        import httpx

        followers: list[Follower] = []
        errors = 0
        gate = asyncio.Semaphore(SEND_CONCURRENCY)
        limits = httpx.Limits(max_connections=SEND_CONCURRENCY * 2)
        async with httpx.AsyncClient(timeout=120, limits=limits) as client:

            async def one(i: int) -> None:
                nonlocal errors
                port = send_to[i % len(send_to)]
                async with gate:
                    run_id = await self.send(client, slug, port)
                if run_id is None:
                    errors += 1
                    return
                if follow_on is None:
                    at = self.ports.index(port) + 1
                    order = self.ports[at:] + self.ports[:at]
                else:
                    order = follow_on[i % len(follow_on) :] + follow_on[: i % len(follow_on)]
                    order += [p for p in self.ports if p not in order]
                follower = Follower(order, run_id, self.cookie)
                follower.recording = recording
                followers.append(follower)
                follower.start()

            await asyncio.gather(*(one(i) for i in range(count)))
        return followers, errors


async def bare_latencies(agent_port: int, path: str) -> list[float]:
    """The baseline: the same agent's words read straight from it (no product between), in the same
    pass, so what the busy machine itself adds is known."""
    reader, writer = await asyncio.open_connection("127.0.0.1", agent_port)
    body = b'{"runId": "bare", "threadId": "bare"}'
    writer.write(
        f"POST /{path}/ HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: {len(body)}\r\n\r\n".encode() + body
    )
    latencies = []
    while line := await reader.readline():
        received_us = time.time_ns() // 1000
        for _, stamp in _TOKEN.findall(line):
            latencies.append((received_us - int(stamp)) / 1000)
    writer.close()
    return latencies[1:]


async def agent_get(agent_port: int, path: str) -> dict[str, int]:
    import httpx

    async with httpx.AsyncClient(timeout=30) as client:
        return (await client.get(f"http://127.0.0.1:{agent_port}{path}")).json()


async def until_ended(followers: list[Follower], within: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(f.ended.wait() for f in followers)), within)


async def until(condition: Any, within: float, step: float = 0.2) -> bool:
    """Whether `condition()` came true within `within` seconds (looked at every `step`)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if condition():
            return True
        await asyncio.sleep(step)
    return bool(condition())


async def words_shown(followers: list[Follower], words: int, within: float = 120) -> None:
    """Until every follower shows at least `words` words (the runs are under way)."""
    await until(lambda: all(len(f.shown) >= words for f in followers), within)


def went_on(followers: list[Follower], before: dict[int, int], more: int = 10) -> Any:
    """A condition: every follower shows `more` words beyond what it showed `before` (or ended)."""
    return lambda: all(len(f.shown) >= before[id(f)] + more or f.ended.is_set() for f in followers)


def tally(followers: list[Follower], parts: int) -> tuple[int, int, int]:
    """(words lost, words shown twice, streams that never finished) over the followers."""
    unfinished = sum(1 for f in followers if not f.done)
    return sum(f.lost(parts) for f in followers), sum(f.duplicates() for f in followers), unfinished


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(len(ordered) * q))], 2)


async def measure(args: argparse.Namespace, deployment: Deployment, agent_port: int, cookie: str,
                  token: str, slugs: dict[str, str], pg: Any, redis: Any) -> dict[str, Any]:  # fmt: skip
    ports = deployment.ports
    people = Browsers(ports, cookie, token)
    out: dict[str, Any] = {}
    phases = set(args.only or PHASES)

    # Warm-up: every web worker renders a page and a stream once.
    warm, _ = await people.start(slugs["warm"], WEB_WORKERS, send_to=ports, follow_on=None)
    await until_ended(warm, 120)

    if "latency" in phases:
        log("follow latency: a follower on another web worker than the send's")
        bare = asyncio.create_task(bare_latencies(agent_port, "paced/100/0.05"))
        followers, errors = await people.start(
            slugs["latency"], args.latency_streams, send_to=ports, follow_on=None
        )
        await until_ended(followers, 120)
        baseline = await bare
        latencies = [lat for f in followers for lat in f.latencies[1:]]  # the first: the run's start
        lost, dup, unfinished = tally(followers, 100)
        out["scale_out_follow_streams"] = len(followers)
        out["scale_out_follow_latency_p50_ms"] = percentile(latencies, 0.5)
        out["scale_out_follow_latency_p99_ms"] = percentile(latencies, 0.99)
        out["scale_out_bare_latency_p50_ms"] = percentile(baseline, 0.5)
        out["scale_out_bare_latency_p99_ms"] = percentile(baseline, 0.99)
        out["scale_out_follow_lost_events"] = lost + dup
        out["scale_out_follow_errors"] = errors + unfinished

    log(f"figures so far: {json.dumps(out)}")
    if "held" in phases:
        log(f"held: {args.streams} streams across {WEB_WORKERS} web workers")
        started = time.perf_counter()
        followers, errors = await people.start(
            slugs["held"], args.streams, send_to=ports, follow_on=None, recording=False
        )
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(f.first_update.wait() for f in followers)), 120)
        # Every stream has shown its run; a word comes every 3 s: wait for two of them on each.
        await words_shown(followers, 2, 60)
        out["scale_out_start_seconds"] = round(time.perf_counter() - started, 1)
        out["scale_out_streams_held"] = sum(
            1 for f in followers if len(f.shown) >= 2 and not f.done and not f.error
        )
        out["scale_out_held_reconnects"] = sum(f.reconnects for f in followers)
        out["scale_out_load_average_1m"] = round(os.getloadavg()[0], 1)
        await agent_get(agent_port, "/finish")
        await until_ended(followers, 180)
        lost = sum(
            f.duplicates() + (1 if sorted(f.shown) != list(range(len(f.shown))) else 0) for f in followers
        )
        out["scale_out_held_errors"] = errors + sum(1 for f in followers if not f.done) + lost

    log(f"figures so far: {json.dumps(out)}")
    if "web_restart" in phases:
        count = args.restart_streams
        victim = ports[0]
        log(f"web worker killed: {count} streams followed through port {victim}, then SIGKILL")
        followers, errors = await people.start(
            slugs["restart"], count, send_to=ports[1:], follow_on=[victim], recording=False
        )
        await words_shown(followers, 5, 240)
        deployment.web[victim].kill()
        deployment.web[victim].wait(timeout=10)
        at_kill = {id(f): len(f.shown) for f in followers}
        # Every browser back on another worker, and the answer going on there; then the answers end.
        await until(went_on(followers, at_kill), 240)
        await agent_get(agent_port, "/finish")
        await until_ended(followers, 240)
        lost = sum(f.lost(max(f.shown, default=-1) + 1) for f in followers)
        dup = sum(f.duplicates() for f in followers)
        unfinished = sum(1 for f in followers if not f.done)
        if os.environ.get("SCALE_DEBUG"):
            for f in followers:
                if f.lost(max(f.shown, default=-1) + 1):
                    log(f"DEBUG gap={f.worst_gap} shown={f.shown}")
                    for h in f.frames[:14]:
                        log(h.decode()[-700:])
                    break
        out["scale_out_restart_streams"] = len(followers)
        out["scale_out_restart_reconnected"] = sum(1 for f in followers if f.reconnects)
        out["scale_out_restart_lost_events"] = lost
        out["scale_out_restart_duplicate_events"] = dup
        out["scale_out_restart_errors"] = errors + unfinished
        deployment.start_web(victim)
        wait_for_port(victim, timeout=180)

    log(f"figures so far: {json.dumps(out)}")
    if "drain" in phases:
        log("run worker stopped (SIGTERM) mid-run")
        followers, errors = await people.start(slugs["drain"], 20, send_to=ports, follow_on=None)
        await words_shown(followers, 3, 120)
        held = await asyncio.to_thread(_runs_by_worker, [f.run_id for f in followers])
        name = "run-a"
        mine = [r for r, row in held.items() if row["worker"] == name and row["status"] == "running"]
        stopping = time.monotonic()
        deployment.run_workers[name].send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(deployment.run_workers[name].wait, 120)
        out["scale_out_run_worker_drain_exit_s"] = round(time.monotonic() - stopping, 1)
        out["scale_out_run_worker_drain_exit_code"] = code
        await until_ended(followers, 120)
        rows = await asyncio.to_thread(_runs_by_worker, [f.run_id for f in followers])
        out["scale_out_run_worker_drain_runs"] = len(mine)
        out["scale_out_run_worker_drain_lost_runs"] = (
            errors
            + sum(1 for row in rows.values() if row["status"] != "completed")
            + sum(1 for f in followers if f.lost(100) or f.duplicates() or not f.done)
        )
        deployment.start_run_worker("run-a2", args.concurrency)

    log(f"figures so far: {json.dumps(out)}")
    if "kill" in phases:
        log("run worker killed (SIGKILL) mid-run; waiting for the sweeper")
        name = "run-b"
        victims: list[Follower] = []
        others: list[Follower] = []
        for _ in range(10):  # until the worker about to die holds a run
            followers, _ = await people.start(slugs["kill"], 2, send_to=ports, follow_on=None)
            await words_shown(followers, 2, 60)
            rows = await asyncio.to_thread(_runs_by_worker, [f.run_id for f in followers])
            for f in followers:
                (victims if rows[f.run_id]["worker"] == name else others).append(f)
            if victims:
                break
        killed = time.monotonic()
        deployment.run_workers[name].kill()
        deployment.run_workers[name].wait(timeout=10)
        words = {f.run_id: len(f.shown) for f in victims}
        limit = 40 if args.quick else 300
        detected = None
        while time.monotonic() - killed < limit:
            rows = await asyncio.to_thread(_runs_by_worker, [f.run_id for f in victims])
            if rows and all(
                r["status"] == "failed" and r["error"].startswith(INTERRUPTED_PREFIX) for r in rows.values()
            ):
                detected = round(time.monotonic() - killed, 1)
                break
            await asyncio.sleep(0.5)
        out["scale_out_run_worker_kill_detected_s"] = detected
        await until_ended(victims, 60)
        # What the agent said until then stays on the page, and the stream ends (never an error).
        out["scale_out_run_worker_kill_kept_words"] = sum(min(words[f.run_id], len(f.shown)) for f in victims)
        out["scale_out_run_worker_kill_errors"] = sum(
            1 for f in victims if not f.done or f.duplicates() or f.lost(len(f.shown))
        )
        await agent_get(agent_port, "/finish")  # the runs on the other worker end
        await until_ended(others, 60)
        deployment.start_run_worker("run-b2", args.concurrency)

    log(f"figures so far: {json.dumps(out)}")
    for phase, name, fault in (
        ("redis_restart", "redis", redis.restart),
        ("postgres_restart", "postgres", pg.restart),
    ):
        if phase not in phases:
            continue
        log(f"{name} restarted while streams are open")
        followers, errors = await people.start(
            slugs["fault"], args.fault_streams, send_to=ports, follow_on=None
        )
        await words_shown(followers, 5, 120)
        at_fault = {id(f): len(f.shown) for f in followers}
        await asyncio.to_thread(fault)
        # The answers go on after it (from the database, through a reconnect), then end.
        await until(went_on(followers, at_fault), 240)
        await agent_get(agent_port, "/finish")
        await until_ended(followers, 240)
        rows = await asyncio.to_thread(_runs_by_worker, [f.run_id for f in followers])
        out[f"scale_out_{name}_restart_lost_events"] = sum(
            f.lost(max(f.shown, default=-1) + 1) + f.duplicates() for f in followers
        )
        out[f"scale_out_{name}_restart_reconnects"] = sum(f.reconnects for f in followers)
        out[f"scale_out_{name}_restart_errors"] = (
            errors
            + sum(1 for f in followers if not f.done)
            + sum(1 for row in rows.values() if row["status"] != "completed")
        )
    return out


def sign_in(port: int, username: str, password: str) -> tuple[str, str]:
    from benchmarks.stream import signed_in_client

    client = signed_in_client(f"http://127.0.0.1:{port}", username, password)
    cookies = {cookie.name: cookie.value for cookie in client.cookies.jar}
    client.close()
    return "; ".join(f"{k}={v}" for k, v in cookies.items()), cookies["csrftoken"]


def run(args: argparse.Namespace) -> dict[str, Any]:
    load = _load_script()
    if load.Postgres._bindir() is None and (os.geteuid() != 0 or not shutil.which("apt-get")):
        return {"scale_out_skipped": "PostgreSQL is not installed (apt-get install postgresql)"}
    server = redis_binary()
    if server is None:
        return {"scale_out_skipped": "redis-server is not installed (apt-get install redis-server)"}
    from tests.support.redis_server import RedisServer

    tmp = Path(tempfile.mkdtemp(prefix="agents-ui-scale-"))
    pg = load.Postgres(tmp)
    redis = RedisServer(free_port())
    processes: list[subprocess.Popen] = []
    deployment = None
    try:
        database_url = pg.start()
        redis.start()
        agent_port = free_port()
        leases = QUICK_LEASES if args.quick else {}
        deployment = Deployment(tmp, database_url, redis.url, leases)
        os.environ.update({k: v for k, v in deployment.env.items() if k != "PYTHONPATH"})
        username, password, slugs = setup_fixtures(agent_port)
        me = [sys.executable, str(Path(__file__).resolve())]
        processes.append(subprocess.Popen([*me, "--serve-agent", str(agent_port)], env=deployment.env))
        for port in deployment.ports:
            deployment.start_web(port)
        for name in ("run-a", "run-b"):
            deployment.start_run_worker(name, args.concurrency)
        wait_for_port(agent_port)
        deployment.wait_web()
        cookie, token = sign_in(deployment.ports[0], username, password)
        results = asyncio.run(measure(args, deployment, agent_port, cookie, token, slugs, pg, redis))
        results["scale_out_web_workers"] = WEB_WORKERS
        results["scale_out_run_workers"] = RUN_WORKERS
        results["scale_out_leases"] = "quick (4 s)" if args.quick else "defaults"
        return results
    except BaseException:
        if deployment is not None:
            print(deployment.logs_tail(), file=sys.stderr)
        raise
    finally:
        if deployment is not None:
            deployment.stop()
        for process in processes:
            process.send_signal(signal.SIGINT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=10)
            if process.poll() is None:
                process.kill()
        redis.stop()
        pg.stop()
        shutil.rmtree(tmp, ignore_errors=True)


UNITS = {
    "scale_out_follow_latency_p50_ms": "ms",
    "scale_out_follow_latency_p99_ms": "ms (target < 50)",
    "scale_out_follow_streams": "streams",
    "scale_out_bare_latency_p50_ms": "ms (the agent read directly, same pass)",
    "scale_out_bare_latency_p99_ms": "ms (the agent read directly, same pass)",
    "scale_out_follow_lost_events": "events",
    "scale_out_follow_errors": "errors",
    "scale_out_streams_held": "streams (target >= 1000)",
    "scale_out_start_seconds": "s",
    "scale_out_held_reconnects": "reconnects",
    "scale_out_held_errors": "errors",
    "scale_out_load_average_1m": "",
    "scale_out_restart_streams": "streams",
    "scale_out_restart_reconnected": "streams",
    "scale_out_restart_lost_events": "events (target 0)",
    "scale_out_restart_duplicate_events": "events (target 0)",
    "scale_out_restart_errors": "errors",
    "scale_out_run_worker_drain_exit_s": "s",
    "scale_out_run_worker_drain_exit_code": "",
    "scale_out_run_worker_drain_runs": "runs",
    "scale_out_run_worker_drain_lost_runs": "runs (target 0)",
    "scale_out_run_worker_kill_detected_s": "s (target < 150)",
    "scale_out_run_worker_kill_kept_words": "words",
    "scale_out_run_worker_kill_errors": "errors",
    "scale_out_redis_restart_lost_events": "events (target 0)",
    "scale_out_redis_restart_errors": "errors",
    "scale_out_redis_restart_reconnects": "reconnects",
    "scale_out_postgres_restart_reconnects": "reconnects",
    "scale_out_postgres_restart_lost_events": "events (target 0)",
    "scale_out_postgres_restart_errors": "errors",
    "scale_out_web_workers": "processes",
    "scale_out_run_workers": "processes",
}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="few streams, leases of seconds")
    parser.add_argument("--streams", type=int, default=1000, help="streams held open at once")
    parser.add_argument("--restart-streams", type=int, default=200, help="streams on the killed web worker")
    parser.add_argument("--latency-streams", type=int, default=8, help="streams timed for latency")
    parser.add_argument("--fault-streams", type=int, default=40, help="streams open at each fault")
    parser.add_argument("--concurrency", type=int, default=600, help="runs each run worker drives at once")
    parser.add_argument("--only", nargs="*", choices=PHASES, help="only these phases")
    parser.add_argument("--serve-agent", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_agent:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(agent_main(args.serve_agent))
        return
    if args.quick:
        args.streams, args.restart_streams, args.fault_streams = 40, 20, 10
        args.latency_streams = 4
    results = run(args)
    if args.json:
        print(json.dumps(results))
        return
    for name, value in results.items():
        print(f"{name}: {value} {UNITS.get(name, '')}".rstrip())


if __name__ == "__main__":
    main()

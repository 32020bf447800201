"""Many slow streams on one product worker: the latency it adds, and the memory each stream costs.

Three kinds of process on loopback:
- a fake AG-UI agent (a raw asyncio HTTP server, its own process) that answers each run with one
  message and then a TEXT_MESSAGE_CONTENT every INTERVAL seconds, each delta holding the wall-clock
  microsecond it was sent, until told to finish (GET /finish);
- the product: one worker of `manage.py serve` (uvicorn), as deployed (DEBUG off,
  benchmarks/settings.py), with a temp SQLite database;
- this process, the browsers: it signs in once, starts N conversations through
  POST /agents/<slug>/send/ (as the htmx composer does, so every run goes through the product's own
  code path), then follows each run's /runs/<id>/events/ with a raw asyncio SSE client.

Once every stream has had its first swap, latencies are recorded for --seconds: for each stamp in a
text-append fragment, the time it reached this process minus the time the agent sent it (the
product adds that, plus two loopback hops). Memory per stream is the product's resident memory
while all N streams are open, minus its resident memory after the warm-up (as many runs at once as
the composers send, so the threads kept for requests are counted once, not per stream), over N. The event
log's progress is sampled too: the events the product has written to SQLite against those the
agent has sent, which shows whether one database keeps up with N runs writing at once. The time
each POST takes while the streams pile up (send p50/p99) shows what a person starting a conversation
waits on a busy worker, and the CPU of the agent and of this process shows how much of the machine
the harness itself took.

With `--burn N`, N busy processes (pure-Python loops) run beside it for the whole measurement, and
every figure is printed as `many_streams_burn_...`: the product on a machine that is doing more.

Usage: python benchmarks/many_streams.py [--json] [--streams N] [--seconds S] [--interval S] [--burn N]
Targets: many_streams_added_latency_p99_ms < 100; many_streams_memory_per_stream_kb < 200.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.stream import (  # noqa: E402
    free_port,
    serve_arguments,
    setup_django,
    signed_in_client,
    wait_for_port,
)

TARGET_P99_MS = 100.0
TARGET_KB_PER_STREAM = 200.0
SEND_CONCURRENCY = 16
# A live answer's text: its tail, rendered again at each swap, and what settled since the last one;
# or the new characters of a tail that is one plain line.
_TEXT_SWAP = re.compile(
    rb'<div (?:hx-swap-oob="beforeend:#msg-[0-9a-f]+-done"'
    rb'|class="md-tail" id="msg-[0-9a-f]+-tail" hx-swap-oob="true")>(.*?)</div>'
    rb'|<span hx-swap-oob="beforeend:#msg-[0-9a-f]+-line">(.*?)</span>',
    re.S,
)
_STAMP = re.compile(rb"\[(\d{16})\]")
_RUN_ID = re.compile(r'sse-connect="/runs/([0-9a-f-]+)/events/"')

# --- The fake agent (its own process) ----------------------------------------------------------------


_DELTA = b'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"[%d] "}\n\n'


def _frame(event: dict[str, Any]) -> bytes:
    data = f"data: {json.dumps(event, separators=(',', ':'))}\n\n".encode()
    return b"%x\r\n%s\r\n" % (len(data), data)  # one HTTP chunk


async def agent_main(port: int, interval: float) -> None:
    """A minimal HTTP/1.1 AG-UI agent: cheap enough that N streams cost it little CPU."""
    capabilities = json.dumps({"identity": {"name": "Slow agent"}, "transport": {"streaming": True}})
    # /finish ends the runs streaming now; runs started later wait for the next /finish.
    finishing = {"now": asyncio.Event()}
    sent = {"events": 0, "runs": 0}

    async def stream_run(writer: asyncio.StreamWriter, body: bytes) -> None:
        # Each run is a timer callback, not a task: the agent must cost little next to the product.
        finish = finishing["now"]
        loop = asyncio.get_running_loop()
        ended = loop.create_future()
        run = json.loads(body or b"{}")
        thread_id, run_id = run.get("threadId", "t"), run.get("runId", "r")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"
            b"transfer-encoding: chunked\r\nconnection: close\r\n\r\n"
        )
        writer.write(_frame({"type": "RUN_STARTED", "threadId": thread_id, "runId": run_id}))
        writer.write(_frame({"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}))
        sent["runs"] += 1
        sent["events"] += 2
        due = loop.time()

        def tick() -> None:
            nonlocal due
            if finish.is_set() or writer.is_closing():
                if not ended.done():
                    ended.set_result(None)
                return
            data = _DELTA % (time.time_ns() // 1000)
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            sent["events"] += 1
            due += interval
            loop.call_at(due, tick)

        due += interval
        loop.call_at(due, tick)
        await ended
        writer.write(_frame({"type": "TEXT_MESSAGE_END", "messageId": "m1"}))
        writer.write(_frame({"type": "RUN_FINISHED", "threadId": thread_id, "runId": run_id}))
        writer.write(b"0\r\n\r\n")
        sent["events"] += 2
        await writer.drain()

    async def reply(writer: asyncio.StreamWriter, status: str, payload: str) -> None:
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
            if method == "POST":
                await stream_run(writer, body)
            elif path.rstrip("/").endswith("capabilities"):
                await reply(writer, "200 OK", capabilities)
            elif path == "/finish":
                finishing["now"].set()
                finishing["now"] = asyncio.Event()
                await reply(writer, "200 OK", json.dumps(sent))
            elif path == "/sent":
                await reply(writer, "200 OK", json.dumps(sent))
            else:
                await reply(writer, "404 Not Found", "{}")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
    async with server:
        await server.serve_forever()


# --- The browsers (this process) ---------------------------------------------------------------------


class SseFollower(asyncio.Protocol):
    """One browser tab's EventSource on /runs/<id>/events/: an asyncio protocol, HTTP/1.1 chunked.

    Callbacks, not a task reading line by line: with hundreds of tabs in this one process, the
    browsers must cost little next to the product they measure.
    """

    def __init__(self, port: int, run_id: str, cookie: str) -> None:
        self.port, self.run_id, self.cookie = port, run_id, cookie
        self.first_update = asyncio.Event()
        self.done = False
        self.error = ""
        self.updates = 0
        self.recording = False
        self.latencies: list[float] = []
        self.newest = 0  # the newest stamp counted
        self._buffer = b""
        self._events = b""
        self._head = False
        self._transport: asyncio.Transport | None = None
        self._closed: asyncio.Future | None = None

    async def follow(self) -> None:
        loop = asyncio.get_running_loop()
        self._closed = loop.create_future()
        try:
            await loop.create_connection(lambda: self, "127.0.0.1", self.port)
        except OSError as exc:
            self.error = f"connect: {exc}"
            self.first_update.set()
            return
        await self._closed

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = transport  # type: ignore[assignment]
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
                self._end(head.split(b"\r\n", 1)[0].decode())
                return
        while b"\r\n" in self._buffer:  # whole chunks only
            size_line, rest = self._buffer.split(b"\r\n", 1)
            size = int(size_line.strip(), 16)
            if len(rest) < size + 2:
                return
            self._buffer = rest[size + 2 :]
            if size == 0:
                self._end()
                return
            self._events += rest[:size]
            while b"\n\n" in self._events:
                frame, self._events = self._events.split(b"\n\n", 1)
                self._frame(frame, received_us)
            if self.done:
                self._end()
                return

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.done and not self.error:
            self.error = f"connection lost: {exc}" if exc else "connection closed"
        self._end()

    def _end(self, error: str = "") -> None:
        if error and not self.error:
            self.error = error
        self.first_update.set()
        if self._transport is not None:
            self._transport.close()
        if self._closed is not None and not self._closed.done():
            self._closed.set_result(None)

    def _frame(self, frame: bytes, received_us: int) -> None:
        while frame.startswith((b"id: ", b"retry: ")):  # a frame's cursor, and when to ask again
            frame = frame.partition(b"\n")[2]
        if frame.startswith(b"event: done"):
            self.done = True
            return
        if not frame.startswith(b"event: update"):
            return
        self.updates += 1
        self.first_update.set()
        if not self.recording:
            return
        for swapped, grown in _TEXT_SWAP.findall(frame):
            for stamp in map(int, _STAMP.findall(swapped or grown)):
                if stamp > self.newest:  # the tail is sent again at each swap: count each stamp once
                    self.newest = stamp
                    self.latencies.append((received_us - stamp) / 1000)


def proc_status(pid: int, field: str) -> int:
    """A number from /proc/<pid>/status: VmRSS (KB), Threads."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} for process {pid}")


def rss_kb(pid: int) -> int:
    return proc_status(pid, "VmRSS")


def cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def database_query(sql: str) -> list[tuple]:
    """Read the product's database beside it (SQLite in WAL mode: readers never block its writers)."""
    import sqlite3

    from django.conf import settings

    with sqlite3.connect(settings.DATABASES["default"]["NAME"], timeout=20) as db:
        return db.execute(sql).fetchall()


def written_events() -> int:
    return database_query("SELECT COALESCE(SUM(event_count), 0) FROM agents_ui_run")[0][0]


async def start_conversations(
    client: Any, base: str, token: str, slug: str, count: int, *, deadline: float = 3600.0,
    started: Any = None, timings: list[float] | None = None,
) -> tuple[list[str], int]:  # fmt: skip
    """POST N messages, SEND_CONCURRENCY at a time, as N composers would; give up at the deadline.

    `started(run_id)` is called as each run starts: its browser tab follows it at once.
    """
    headers = {"HX-Request": "true", "X-CSRFToken": token, "Referer": base}
    run_ids: list[str] = []
    errors = 0
    timings = [] if timings is None else timings
    gate = asyncio.Semaphore(SEND_CONCURRENCY)

    async def send(i: int) -> None:
        nonlocal errors
        async with gate:
            sent = time.perf_counter()
            try:
                response = await client.post(
                    f"/agents/{slug}/send/", data={"content": f"Talk slowly #{i}", "conversation": ""},
                    headers=headers,
                )  # fmt: skip
                match = _RUN_ID.search(response.text) if response.status_code == 200 else None
            except Exception:
                match = None
            timings.append(time.perf_counter() - sent)
            if match:
                run_ids.append(match.group(1))
                if started:
                    started(match.group(1))
            else:
                errors += 1

    tasks = [asyncio.create_task(send(i)) for i in range(count)]
    _, late = await asyncio.wait(tasks, timeout=deadline)
    for task in late:
        task.cancel()
    return run_ids, errors + len(late)


async def agent_get(agent_port: int, path: str) -> dict[str, int]:
    import httpx

    async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{agent_port}", timeout=30) as client:
        return (await client.get(path)).json()


async def drive(args: argparse.Namespace, base: str, product_port: int, agent_port: int, pid: int,
                agent_pid: int, username: str, password: str) -> dict[str, Any]:  # fmt: skip
    import httpx

    sync_client = signed_in_client(base, username, password)
    cookies = {cookie.name: cookie.value for cookie in sync_client.cookies.jar}
    token = cookies["csrftoken"]
    sync_client.close()
    cookie = "; ".join(f"{name}={value}" for name, value in cookies.items())
    limits = httpx.Limits(max_connections=SEND_CONCURRENCY, max_keepalive_connections=SEND_CONCURRENCY)
    headers = {"Cookie": cookie}  # not a cookie jar: the session stays the one signed in
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120, limits=limits) as client:
        await client.get("/agents/bench-slow/")  # discovery, as a person opening the workspace
        # Warm-up runs, as many at once as the composers send, followed to their end: imports,
        # templates, and the threads and connections that many requests at once use are paid.
        warm_ids, _ = await start_conversations(client, base, token, "bench-slow", SEND_CONCURRENCY)
        warm = [SseFollower(product_port, warm_id, cookie) for warm_id in warm_ids]
        warm_tasks = [asyncio.create_task(follower.follow()) for follower in warm]
        await asyncio.wait_for(asyncio.gather(*(follower.first_update.wait() for follower in warm)), 60)
        await asyncio.sleep(0.5)
        await agent_get(agent_port, "/finish")
        await asyncio.wait_for(asyncio.gather(*warm_tasks), 60)
        await asyncio.sleep(1.0)
        idle_kb = rss_kb(pid)

        started, cpu_at_start = time.perf_counter(), cpu_seconds(pid)
        followers: list[SseFollower] = []
        tasks: list[asyncio.Task] = []

        def follow(run_id: str) -> None:
            followers.append(SseFollower(product_port, run_id, cookie))
            tasks.append(asyncio.create_task(followers[-1].follow()))

        send_seconds: list[float] = []
        run_ids, send_errors = await start_conversations(
            client, base, token, "bench-slow", args.streams, deadline=args.ramp_seconds, started=follow,
            timings=send_seconds,
        )  # fmt: skip
        send_seconds.sort()
        start_seconds = time.perf_counter() - started
        start_cpu = cpu_seconds(pid) - cpu_at_start
    try:
        await asyncio.wait_for(asyncio.gather(*(f.first_update.wait() for f in followers)), 30)
    except TimeoutError:
        pass
    held_at_start = sum(1 for f in followers if f.updates and not f.error)
    await asyncio.sleep(1.0)  # let the arrivals settle into their steady pace

    for follower in followers:
        follower.recording = True
    cpu_before, written_before = cpu_seconds(pid), written_events()
    agent_cpu_before, own_cpu_before = cpu_seconds(agent_pid), time.process_time()
    sent_before = (await agent_get(agent_port, "/sent"))["events"]
    window_start = time.perf_counter()
    samples, threads = [], 0
    while time.perf_counter() - window_start < args.seconds:
        await asyncio.sleep(min(1.0, args.seconds))
        samples.append(rss_kb(pid))
        threads = max(threads, proc_status(pid, "Threads"))
    window = time.perf_counter() - window_start
    load_average = os.getloadavg()[0]
    sent_after = (await agent_get(agent_port, "/sent"))["events"]
    written_after = written_events()
    cpu_window = cpu_seconds(pid) - cpu_before
    agent_cpu_window = cpu_seconds(agent_pid) - agent_cpu_before
    own_cpu_window = time.process_time() - own_cpu_before
    for follower in followers:
        follower.recording = False
    held = sum(1 for f in followers if not f.error and not f.done)

    await agent_get(agent_port, "/finish")
    finish_started = time.perf_counter()
    await asyncio.wait(tasks, timeout=30)
    finish_seconds = time.perf_counter() - finish_started
    for task in tasks:
        task.cancel()

    from agents_ui.models import Run

    completed = {
        str(pk) for (pk,) in database_query("SELECT id FROM agents_ui_run WHERE status = 'completed'")
    }
    statuses = {Run.Status.COMPLETED: sum(1 for run_id in run_ids if run_id.replace("-", "") in completed)}
    latencies = sorted(lat for f in followers for lat in f.latencies)
    stream_errors = sum(1 for f in followers if f.error or not f.done)
    not_completed = len(run_ids) - statuses[Run.Status.COMPLETED]
    peak_kb = max(samples)
    return {
        "many_streams_streams": args.streams,
        "many_streams_held": held,
        "many_streams_held_at_start": held_at_start,
        "many_streams_errors": send_errors + stream_errors + not_completed,
        "many_streams_started": len(run_ids),
        "many_streams_start_seconds": round(start_seconds, 2),
        "many_streams_start_per_s": round(len(run_ids) / start_seconds, 1),
        # The product's CPU while the conversations started (their sends, runs and streams, and the
        # streams already open), per conversation: what each start costs a busy worker.
        "many_streams_start_cpu_ms": round(1000 * start_cpu / len(run_ids), 2) if run_ids else None,
        "many_streams_send_p50_ms": round(1000 * statistics.median(send_seconds)) if send_seconds else None,
        "many_streams_send_p99_ms": round(1000 * send_seconds[int(len(send_seconds) * 0.99)])
        if send_seconds
        else None,
        "many_streams_window_seconds": round(window, 2),
        "many_streams_fragments": len(latencies),
        "many_streams_added_latency_p50_ms": round(statistics.median(latencies), 2) if latencies else None,
        "many_streams_added_latency_p99_ms": round(latencies[int(len(latencies) * 0.99)], 2)
        if latencies
        else None,
        "many_streams_added_latency_max_ms": round(latencies[-1], 2) if latencies else None,
        "many_streams_rss_idle_mb": round(idle_kb / 1024, 1),
        "many_streams_rss_peak_mb": round(peak_kb / 1024, 1),
        "many_streams_memory_per_stream_kb": round((peak_kb - idle_kb) / max(1, len(run_ids)), 1),
        "many_streams_product_cpu_percent": round(100 * cpu_window / window, 1),
        "many_streams_product_threads": threads,
        "many_streams_agent_cpu_percent": round(100 * agent_cpu_window / window, 1),
        "many_streams_browsers_cpu_percent": round(100 * own_cpu_window / window, 1),
        "many_streams_agent_events_per_s": round((sent_after - sent_before) / window),
        "many_streams_db_events_per_s": round((written_after - written_before) / window),
        "many_streams_db_lag_events": max(0, sent_after - written_after),
        "many_streams_finish_seconds": round(finish_seconds, 2),
        "many_streams_load_average_1m": round(load_average, 1),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="agents-ui-many-")
    setup_django(os.path.join(tmp, "bench.sqlite3"))
    from agents_ui.models import AgentEndpoint
    from tests.factories import PASSWORD, make_user

    agent_port, product_port = free_port(), free_port()
    AgentEndpoint.objects.create(
        name="bench-slow", slug="bench-slow", protocol="agui", base_url=f"http://127.0.0.1:{agent_port}/"
    )
    username = make_user("bench").username
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    if args.settings:  # the product under other settings (another database, other SQLite pragmas)
        env["DJANGO_SETTINGS_MODULE"] = args.settings
    product = serve_arguments(product_port, "--backlog", "4096")
    profile_path = os.path.join(tmp, "product.prof")
    if args.profile:
        product = ["-m", "cProfile", "-o", profile_path, *product]
    me = [sys.executable, str(Path(__file__).resolve())]
    # --burn N: N busy processes beside the product (pure-Python loops), as on a machine doing more.
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burn)]
    processes = [
        subprocess.Popen([*me, "--serve-agent", str(agent_port), str(args.interval)], env=env),
        subprocess.Popen([sys.executable, *product], env=env, cwd=ROOT),
    ]
    try:
        for port in (agent_port, product_port):
            wait_for_port(port, timeout=180)  # a busy machine starts Django slowly
        base = f"http://127.0.0.1:{product_port}"
        return asyncio.run(
            drive(
                args, base, product_port, agent_port, processes[1].pid, processes[0].pid, username, PASSWORD
            )
        )
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
        for process in processes:
            process.send_signal(2)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        if args.profile:
            import pstats

            pstats.Stats(profile_path, stream=sys.stderr).sort_stats("tottime").print_stats(30)
            pstats.Stats(profile_path, stream=sys.stderr).sort_stats("cumtime").print_stats(40)
        shutil.rmtree(tmp, ignore_errors=True)  # the event log of N runs can take hundreds of MB


UNITS = {
    "many_streams_streams": "streams",
    "many_streams_held": "streams",
    "many_streams_held_at_start": "streams",
    "many_streams_errors": "errors",
    "many_streams_started": "runs",
    "many_streams_start_seconds": "s",
    "many_streams_start_per_s": "runs/s",
    "many_streams_start_cpu_ms": "ms of CPU per conversation",
    "many_streams_send_p50_ms": "ms",
    "many_streams_send_p99_ms": "ms",
    "many_streams_window_seconds": "s",
    "many_streams_fragments": "fragments",
    "many_streams_added_latency_p50_ms": "ms",
    "many_streams_added_latency_p99_ms": "ms (target < 100)",
    "many_streams_added_latency_max_ms": "ms",
    "many_streams_rss_idle_mb": "MB",
    "many_streams_rss_peak_mb": "MB",
    "many_streams_memory_per_stream_kb": "KB (target < 200)",
    "many_streams_product_cpu_percent": "% of one core",
    "many_streams_product_threads": "threads (max)",
    "many_streams_agent_cpu_percent": "% of one core",
    "many_streams_browsers_cpu_percent": "% of one core",
    "many_streams_agent_events_per_s": "events/s",
    "many_streams_db_events_per_s": "events/s",
    "many_streams_db_lag_events": "events",
    "many_streams_finish_seconds": "s",
    "many_streams_load_average_1m": "(1-minute load average at the window's end)",
    "many_streams_burn_processes": "busy processes beside it",
}


def burn_noted(results: dict[str, Any], burn: int) -> dict[str, Any]:
    """With --burn N, every figure's name says so (`many_streams_burn_...`), and N is printed."""
    if not burn:
        return results
    noted = {key.replace("many_streams_", "many_streams_burn_", 1): v for key, v in results.items()}
    return {"many_streams_burn_processes": burn, **noted}


def unit(name: str) -> str:
    return UNITS.get(name.replace("many_streams_burn_", "many_streams_", 1), "")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--streams", type=int, default=500, help="concurrent conversations")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window, all streams open")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between an agent's deltas")
    parser.add_argument(
        "--ramp-seconds", type=float, default=90.0, help="give up starting conversations after this"
    )
    parser.add_argument("--burn", type=int, default=0, metavar="N", help="N busy processes beside it")
    parser.add_argument("--settings", help="the product's DJANGO_SETTINGS_MODULE (on PYTHONPATH)")
    parser.add_argument("--profile", action="store_true", help="run the product under cProfile")
    parser.add_argument("--serve-agent", nargs=2, metavar=("PORT", "INTERVAL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_agent:
        try:
            asyncio.run(agent_main(int(args.serve_agent[0]), float(args.serve_agent[1])))
        except KeyboardInterrupt:
            pass
        return
    measured = run(args)
    results = burn_noted(measured, args.burn)
    if args.json:
        print(json.dumps(results))
        return
    for name, value in results.items():
        print(f"{name}: {value} {unit(name)}".rstrip())
    noted = "_burn" if args.burn else ""
    p99 = measured["many_streams_added_latency_p99_ms"]
    print(f"target_many_streams{noted}_p99_met: {p99 is not None and p99 < TARGET_P99_MS}")
    memory = measured["many_streams_memory_per_stream_kb"]
    print(f"target_many_streams{noted}_memory_met: {memory < TARGET_KB_PER_STREAM}")


if __name__ == "__main__":
    main()

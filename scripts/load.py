"""Load: many concurrent conversations with the demo agents, then count what was lost.

    .venv/bin/python scripts/load.py                      # 200 conversations, 120 s, 1 worker, SQLite
    .venv/bin/python scripts/load.py --workers 2 --postgres
    .venv/bin/python scripts/load.py --conversations 10 --seconds 5   # a quick smoke

It starts the product (`manage.py serve`) on a free port with a fresh database, registers the demo agents,
creates users, and runs each conversation as a person would: sign in, open the workspace, send a
message through the composer, follow the run's live stream until "done", think, send the next.
Every few turns the person starts a new conversation. When the time is up, no new message is sent,
the runs in flight finish, the server stops, and the database is checked: every message a person
sent, and every assistant message a browser saw complete, must be there. Exit status 1 when
anything was lost or any request failed.

With `--workers N` (N > 1) the demo agents run in a server process of their own, as real agents
would: the demo external agent keeps its conversations in process memory, which one product worker
could not see from another. `--postgres` starts a throwaway PostgreSQL cluster (installing
PostgreSQL with apt-get first when it is missing and this runs as root).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import glob
import json
import os
import random
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "load-test-password-1"
CONVERSATIONS_PER_USER = 10

# Demo agents that answer a plain question without asking for approval, and what to ask them.
QUESTIONS = {
    "research-assistant": "What is known about {topic}?",
    "orchestrator": "Draft a short plan for {topic}.",
    "planner": "Plan the launch of {topic}.",
    "cipher": "Think about {topic} and tell me.",
    "legacy": "How do I reset my password for {topic}?",
    "support-desk": "Where is my order 1234 for {topic}?",
}
TOPICS = ["solar panels", "tidal power", "heat pumps", "wind farms", "battery storage", "geothermal"]
# The demo support desk allows 600 messages an hour and 20 a minute per conversation.
SUPPORT_DESK_HOURLY = 600
SUPPORT_DESK_MIN_INTERVAL = 3.5
# The demo research assistant declares 10 messages a minute (custom.rateLimit), counted per person
# over all their conversations with it.
RESEARCH_PER_MINUTE = 10

COMPLETE_MESSAGE = re.compile(r'<article class="msg msg-assistant" id="[^"]*" data-message="([^"]*)"')
RUN_STATUS = re.compile(r'data-run-status="(\w+)"')
RUN_ID = re.compile(r'sse-connect="/runs/([0-9a-f-]{36})/events/"')
CONVERSATION_ID = re.compile(r'id="conversation-id"\s+value="([0-9a-f-]{36})"')


# --- Processes ------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def log(message: str) -> None:
    print(f"[load] {message}", file=sys.stderr, flush=True)


class Postgres:
    """A throwaway cluster in a temporary folder, run by the postgres user when this is root."""

    def __init__(self, workdir: Path) -> None:
        self.root = workdir / "pg"  # made in start(); its parent is opened to the postgres user
        self.data = self.root / "data"
        self.port = free_port()
        self.bindir = self._bindir() or self._install()
        self.as_postgres: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            self.as_postgres = ["runuser", "-u", "postgres", "--"]

    @staticmethod
    def _bindir() -> Path | None:
        found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if found:
            return Path(found[-1]).parent
        initdb = shutil.which("initdb")
        return Path(initdb).resolve().parent if initdb else None

    def _install(self) -> Path:
        if os.geteuid() != 0 or not shutil.which("apt-get"):
            raise SystemExit(
                "PostgreSQL is not installed: install it (apt-get install postgresql) and retry."
            )
        log("installing PostgreSQL with apt-get")
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "update", "-q"], check=True, env=env, stdout=subprocess.DEVNULL)
        subprocess.run(
            ["apt-get", "install", "-y", "-q", "--no-install-recommends", "postgresql"],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
        )
        bindir = self._bindir()
        if bindir is None:
            raise SystemExit("PostgreSQL was installed but initdb is not found.")
        return bindir

    def _run(self, *args: str) -> None:
        result = subprocess.run(
            [*self.as_postgres, *args],
            cwd=self.root,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if result.returncode != 0:
            raise SystemExit(f"{Path(args[0]).name} failed: {result.stderr.strip()}")

    def start(self) -> str:
        self.root.mkdir(parents=True)
        if self.as_postgres:
            self.root.parent.chmod(0o711)  # the postgres user may pass through, not list
            shutil.chown(self.root, "postgres", "postgres")
        self._run(
            str(self.bindir / "initdb"), "-D", str(self.data), "-U", "agents", "--auth=trust", "-E", "UTF8"
        )
        options = f"-p {self.port} -k {self.root} -h 127.0.0.1 -c max_connections=400"
        self._run(
            str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-w", "-o", options, "start",
        )  # fmt: skip
        self._run(
            str(self.bindir / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "agents", "agents"
        )
        log(f"PostgreSQL {self.bindir.parent.name} on port {self.port}")
        return f"postgres://agents@127.0.0.1:{self.port}/agents"

    def restart(self) -> None:
        """Stopped (every connection cut) and started again with the same options."""
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
                  "-m", "fast", "-w", "restart")  # fmt: skip

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")


class Uvicorn:
    def __init__(self, env: dict[str, str], workers: int, logfile: Path, *, port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._log = logfile.open("w")
        command = [
            sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(self.port),
            "--workers", str(workers), "--timeout-graceful-shutdown", "10",
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self._log, stderr=subprocess.STDOUT
        )

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"uvicorn exited with {self.process.returncode}; see {self._log.name}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/accounts/login/", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        raise SystemExit("uvicorn did not start within 60 s")

    def rss_bytes(self) -> int:
        """Resident memory of the server and its workers."""
        total = 0
        pids = [self.process.pid]
        with contextlib.suppress(OSError):
            for task in Path(f"/proc/{self.process.pid}/task").iterdir():
                pids += [int(p) for p in (task / "children").read_text().split()]
        for pid in pids:
            with contextlib.suppress(OSError, ValueError):
                for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        return total

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


# --- The simulated people -------------------------------------------------------------------------


@dataclass
class Stats:
    requests: int = 0
    errors: Counter = field(default_factory=Counter)
    error_samples: list[str] = field(default_factory=list)
    turns: int = 0
    conversations_started: int = 0
    latencies: list[float] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)  # every user message the server accepted
    seen_complete: list[tuple[str, str]] = field(default_factory=list)  # (run id, message id)
    runs: dict[str, str] = field(default_factory=dict)  # run id -> final status seen
    per_agent: Counter = field(default_factory=Counter)

    def error(self, kind: str, detail: str) -> None:
        self.errors[kind] += 1
        if len(self.error_samples) < 20:
            self.error_samples.append(f"{kind}: {detail[:300]}")


class Person:
    """One signed-in user; several conversation slots share their session."""

    def __init__(self, base: str, username: str, stats: Stats) -> None:
        self.base = base
        self.username = username
        self.stats = stats
        self.client = httpx.AsyncClient(
            base_url=base,
            timeout=httpx.Timeout(120, connect=30),
            # Idle connections dropped before the server's keep-alive of 5 s (uvicorn's) ends them: a
            # request never goes out on a connection the server is closing (a ReadError, not a fault).
            limits=httpx.Limits(max_connections=4 * CONVERSATIONS_PER_USER, keepalive_expiry=4.0),
            follow_redirects=False,
        )

    async def request(self, method: str, url: str, **kwargs) -> httpx.Response | None:
        self.stats.requests += 1
        try:
            response = await self.client.request(method, url, **kwargs)
        except httpx.HTTPError as exc:
            self.stats.error("transport", f"{method} {url}: {type(exc).__name__} {exc}")
            return None
        if response.status_code >= 400:
            title = re.search(r"<title>\s*([^<]*?)\s*</title>", response.text)  # Django's error page
            detail = title.group(1) if title else response.text[:200]
            self.stats.error(f"http {response.status_code}", f"{method} {url}: {detail}")
            return None
        return response

    def _csrf(self) -> dict[str, str]:
        return {"X-CSRFToken": self.client.cookies.get("csrftoken", "")}

    async def sign_in(self) -> bool:
        if await self.request("GET", "/accounts/login/") is None:
            return False
        response = await self.request(
            "POST",
            "/accounts/login/",
            data={"username": self.username, "password": PASSWORD},
            headers={**self._csrf(), "Referer": f"{self.base}/accounts/login/"},
        )
        if response is None or response.status_code != 302:
            self.stats.error("login", f"{self.username}: {response and response.status_code}")
            return False
        return True

    async def turn(self, slug: str, text: str, conversation: str) -> tuple[str, bool]:
        """Send one message and follow its run to the end; (conversation id, ok)."""
        stats = self.stats
        started = time.monotonic()
        response = await self.request(
            "POST",
            f"/agents/{slug}/send/",
            data={"content": text, "conversation": conversation},
            headers={**self._csrf(), "HX-Request": "true", "Referer": f"{self.base}/agents/{slug}/"},
        )
        if response is None:
            return conversation, False
        body = response.text
        run_id, conversation_id = RUN_ID.search(body), CONVERSATION_ID.search(body)
        if run_id is None or conversation_id is None:
            stats.error("send", f"{slug}: no run in the answer: {body[:200]}")
            return conversation, False
        stats.sent.append(text)
        run = run_id.group(1)
        stream = await self.follow(run)
        if stream is None:
            return conversation_id.group(1), False
        statuses = RUN_STATUS.findall(stream)
        status = statuses[-1] if statuses else "unknown"
        stats.runs[run] = status
        for message in set(COMPLETE_MESSAGE.findall(stream)):
            stats.seen_complete.append((run, message))
        if status != "completed":
            stats.error(f"run {status}", f"{slug} {run}: {re.findall(r'role=.alert.>([^<]*)', stream)[-1:]}")
            return conversation_id.group(1), False
        stats.turns += 1
        stats.per_agent[slug] += 1
        stats.latencies.append(time.monotonic() - started)
        return conversation_id.group(1), True

    async def follow(self, run: str) -> str | None:
        self.stats.requests += 1
        parts: list[str] = []
        try:
            async with self.client.stream("GET", f"/runs/{run}/events/") as response:
                if response.status_code != 200:
                    self.stats.error(f"http {response.status_code}", f"events of {run}")
                    return None
                async for chunk in response.aiter_text():
                    parts.append(chunk)
        except httpx.HTTPError as exc:
            self.stats.error("transport", f"events of {run}: {type(exc).__name__} {exc}")
            return None
        stream = "".join(parts)
        if not stream.rstrip().endswith("event: done\ndata:"):
            self.stats.error("stream", f"events of {run} did not end with done: {stream[-200:]!r}")
            return None
        return stream


async def conversation_slot(
    person: Person, index: int, slug: str, deadline: float, think: float, interval: float, turns: int
) -> None:
    rng = random.Random(index)
    await asyncio.sleep(rng.uniform(0, min(5.0, think * 4)))  # people do not all arrive at once
    thread, turn, number = "", 0, 0
    person.stats.conversations_started += 1
    while time.monotonic() < deadline:
        if turn == turns:  # a new conversation, as people start one now and then
            thread, turn = "", 0
            person.stats.conversations_started += 1
        number += 1
        text = f"[load {index}-{number}] " + QUESTIONS[slug].format(topic=rng.choice(TOPICS))
        began = time.monotonic()
        thread, ok = await person.turn(slug, text, thread)
        if not ok:
            thread, turn = "", 0
        else:
            turn += 1
        pause = max(rng.uniform(0.5 * think, 1.5 * think), interval - (time.monotonic() - began))
        await asyncio.sleep(pause)


async def drive(base: str, users: list[str], args: argparse.Namespace, stats: Stats) -> float:
    slugs = list(QUESTIONS)
    people = [Person(base, username, stats) for username in users]
    signed = await asyncio.gather(*(p.sign_in() for p in people))
    if not all(signed):
        log(f"{signed.count(False)} of {len(people)} people could not sign in")
    on_desk = sum(1 for i in range(args.conversations) if slugs[i % len(slugs)] == "support-desk")
    # Stay under the demo support desk's declared limits: it would answer 429, rightly.
    desk_interval = max(SUPPORT_DESK_MIN_INTERVAL, on_desk * args.seconds / (SUPPORT_DESK_HOURLY * 0.85))
    # ... and under the research assistant's: the composer refuses past it, rightly, with "send it
    # again in n seconds" (a quick machine's turns had gone over it).
    researching = Counter(
        i // CONVERSATIONS_PER_USER
        for i in range(args.conversations)
        if slugs[i % len(slugs)] == "research-assistant"
    )
    research_interval = max(researching.values(), default=0) * 60 / (RESEARCH_PER_MINUTE * 0.85)
    intervals = {"support-desk": desk_interval, "research-assistant": research_interval}
    started = time.monotonic()
    deadline = started + args.seconds
    tasks = [
        conversation_slot(
            people[i // CONVERSATIONS_PER_USER],
            i,
            slugs[i % len(slugs)],
            deadline,
            args.think,
            intervals.get(slugs[i % len(slugs)], 0.0),
            args.turns,
        )
        for i in range(args.conversations)
    ]
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    await asyncio.gather(*(p.client.aclose() for p in people))
    return elapsed


# --- Setting up and checking ----------------------------------------------------------------------


def setup_database(env: dict[str, str], agents_url: str, users: int) -> list[str]:
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections

    from agents_ui.demo.registry import register_demo_agents

    call_command("migrate", verbosity=0, interactive=False)
    register_demo_agents(agents_url)
    User = get_user_model()
    names = [f"load-user-{n}" for n in range(users)]
    for name in names:
        User.objects.create_user(username=name, password=PASSWORD)
    connections.close_all()
    return names


def check_database(stats: Stats) -> dict[str, int]:
    from django.db import connections

    from agents_ui.models import Message, Run

    found_user = set(
        Message.objects.filter(role=Message.Role.USER, content__startswith="[load ").values_list(
            "content", flat=True
        )
    )
    lost_user = [text for text in stats.sent if text not in found_user]
    saved = set(
        Message.objects.filter(role=Message.Role.ASSISTANT, run_id__isnull=False).values_list(
            "run_id", "remote_id"
        )
    )
    saved = {(str(run), remote) for run, remote in saved}
    lost_assistant = [pair for pair in stats.seen_complete if (pair[0], pair[1][:200]) not in saved]
    unfinished = Run.objects.exclude(status__in=Run.FINISHED).count()
    counts = {
        "user_messages_sent": len(stats.sent),
        "user_messages_lost": len(lost_user),
        "assistant_messages_seen": len(stats.seen_complete),
        "assistant_messages_lost": len(lost_assistant),
        "runs_unfinished": unfinished,
        "runs_in_database": Run.objects.count(),
    }
    for text in lost_user[:5]:
        log(f"lost user message: {text}")
    for pair in lost_assistant[:5]:
        log(f"lost assistant message: {pair}")
    connections.close_all()
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200, help="concurrent conversations (200)")
    parser.add_argument("--seconds", type=float, default=120, help="how long to hold them (120)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn workers (1)")
    parser.add_argument("--postgres", action="store_true", help="a throwaway PostgreSQL instead of SQLite")
    parser.add_argument("--pacing", type=float, default=0.01, help="seconds between two demo deltas (0.01)")
    parser.add_argument(
        "--think", type=float, default=1.0, help="mean seconds a person reads before the next"
    )
    parser.add_argument("--turns", type=int, default=5, help="messages per conversation before a new one (5)")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (logs, database)")
    args = parser.parse_args(argv)

    workdir = Path(tempfile.mkdtemp(prefix="agents-ui-load-"))
    postgres = Postgres(workdir) if args.postgres else None
    servers: list[Uvicorn] = []
    stats = Stats()
    try:
        database = postgres.start() if postgres else f"sqlite:///{workdir / 'db.sqlite3'}"
        env = {
            **os.environ,
            # The product as deployed (DEBUG off), with plain-http cookies for the simulated browsers
            # (benchmarks/settings.py) and agents on loopback allowed (the demo agents are).
            "DJANGO_SETTINGS_MODULE": "benchmarks.settings",
            "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES": "true",
            "DATABASE_URL": database,
            "AGENTS_UI_DEMO_PACING": str(args.pacing),
            "AGENTS_UI_DEMO_AUTOREGISTER": "false",
            "LOG_LEVEL": "WARNING",
        }
        product = Uvicorn(env, args.workers, workdir / "server.log")
        servers.append(product)
        agents = product
        if args.workers > 1:
            agents = Uvicorn(env, 1, workdir / "agents.log")
            servers.append(agents)
        users = max(1, -(-args.conversations // CONVERSATIONS_PER_USER))
        usernames = setup_database(env, agents.url, users)
        for server in servers:
            server.wait_ready()
        workers = f"{args.workers} worker{'s' if args.workers > 1 else ''}"
        label = f"{workers}, {'postgresql' if postgres else 'sqlite'}"
        log(f"{label}: {args.conversations} conversations for {args.seconds:g} s against {product.url}")
        rss_start = product.rss_bytes()
        peak = [rss_start]

        async def sample_memory() -> None:
            while True:
                await asyncio.sleep(2)
                peak[0] = max(peak[0], product.rss_bytes())

        async def run() -> float:
            sampler = asyncio.create_task(sample_memory())
            try:
                return await drive(product.url, usernames, args, stats)
            finally:
                sampler.cancel()

        elapsed = asyncio.run(run())
        rss_end = product.rss_bytes()
        for server in servers:
            server.stop()
        counts = check_database(stats)
    finally:
        for server in servers:
            server.stop()
        if postgres:
            postgres.stop()
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)

    errors = sum(stats.errors.values())
    lost = counts["user_messages_lost"] + counts["assistant_messages_lost"]
    latencies = sorted(stats.latencies) or [0.0]
    result = {
        "label": label,
        "workers": args.workers,
        "database": "postgresql" if postgres else "sqlite",
        "conversations": args.conversations,
        "seconds": args.seconds,  # how long the conversations were held
        "seconds_with_drain": round(elapsed, 1),  # and until the last answer in flight ended
        "requests": stats.requests,
        "turns": stats.turns,
        "conversations_started": stats.conversations_started,
        "errors": errors,
        "errors_by_kind": dict(stats.errors),
        "error_samples": stats.error_samples,
        "lost_messages": lost,
        **counts,
        "turn_seconds_p50": round(statistics.median(latencies), 2),
        "turn_seconds_p95": round(latencies[int(0.95 * (len(latencies) - 1))], 2),
        "server_rss_mb_start": round(rss_start / 2**20),
        "server_rss_mb_peak": round(peak[0] / 2**20),
        "server_rss_mb_end": round(rss_end / 2**20),
        "turns_per_agent": dict(stats.per_agent),
    }
    print(
        f"load ({label}): {args.conversations} conversations, {args.seconds:g} s "
        f"(+{elapsed - args.seconds:.0f} s for the last answers), {stats.requests} requests, "
        f"{errors} errors, {stats.turns} answers, {lost} lost messages "
        f"(turn p50 {result['turn_seconds_p50']} s, p95 {result['turn_seconds_p95']} s; "
        f"server memory {result['server_rss_mb_start']} -> peak {result['server_rss_mb_peak']} MB)"
    )
    for sample in stats.error_samples[:10]:
        print(f"  {sample}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 1 if errors or lost or counts["runs_unfinished"] else 0


if __name__ == "__main__":
    sys.exit(main())

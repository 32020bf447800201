"""How long the catalogue takes with 50 agents whose discovery each takes 200 ms, cold and warm.

A fake AG-UI agent server (a raw ASGI app under uvicorn, in a child process, on loopback) sleeps DELAY
before it answers `GET .../capabilities` with a declaration. 50 endpoints point at it. Measured,
server-side (django.test.AsyncClient through the whole middleware stack, no browser, no socket
between client and Django):

- one discovery: a single GET of one agent's declaration through the product's own HTTP client;
- catalogue cold: the discovery cache cleared, so all 50 are asked again (median of --cold runs,
  after one discarded first render that also pays imports, template compilation and the first
  snapshots);
- catalogue warm: every discovery cached (median of --warm renders).

Each render's CPU time (this process, every thread) is printed too: on a busy machine the wall
times mostly measure waiting for a CPU, the CPU times do not. `catalogue_warm_ratio` is warm / 50 ms.

Usage: python benchmarks/catalogue.py [--json] [--agents N] [--delay-ms MS] [--cold N] [--warm N]
       [--profile cold|warm]
Targets: catalogue_cold_ratio < 2 (cold / one discovery); catalogue_warm_ms < 50 (ratio < 1).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import multiprocessing
import os
import pstats
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COLD_TARGET_RATIO = 2.0  # cold catalogue / one discovery
WARM_TARGET_MS = 50.0
sys.path.insert(0, str(ROOT))

# A declaration shaped like the demo research assistant's: enough to parse, plan and badge.
DECLARATION = {
    "identity": {
        "name": "Benchmark agent",
        "type": "bench",
        "description": "Answers discovery slowly, on purpose.",
        "version": "1.0.0",
        "provider": "benchmarks",
    },
    "transport": {"streaming": True},
    "tools": {
        "supported": True,
        "parallelCalls": True,
        "items": [
            {
                "name": f"tool_{i}",
                "description": "A tool.",
                "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
            }
            for i in range(3)
        ],
    },
    "reasoning": {"supported": True, "streaming": True},
    "multimodal": {"input": {"pdf": True, "image": True}},
    "humanInTheLoop": {"supported": True, "approvals": True, "feedback": True},
    "state": {"snapshots": True, "deltas": True},
    "execution": {"maxIterations": 6, "maxExecutionTime": 60000},
}


def make_agent_app(delay: float):
    body = json.dumps(DECLARATION).encode()

    async def app(scope, receive, send):
        if scope["type"] != "http":
            return
        if scope["method"] == "GET" and scope["path"].endswith("/capabilities"):
            await asyncio.sleep(delay)
            status, payload = 200, body
        else:
            status, payload = 404, b'{"error": "not found"}'
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    return app


def serve_agent(delay: float, ready) -> None:
    """The fake agent, in its own process (like a remote agent: it never competes for our GIL)."""
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    ready.put(sock.getsockname()[1])
    config = uvicorn.Config(
        make_agent_app(delay), log_level="warning", lifespan="off", backlog=1024, access_log=False
    )
    uvicorn.Server(config).run(sockets=[sock])


class AgentServer:
    """Runs `serve_agent` in a child process for the duration of a `with` block."""

    def __init__(self, delay: float) -> None:
        context = multiprocessing.get_context("spawn")
        self._ready = context.Queue()
        self._process = context.Process(target=serve_agent, args=(delay, self._ready), daemon=True)
        self.url = ""

    def __enter__(self) -> AgentServer:
        self._process.start()
        port = self._ready.get(timeout=30)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:  # until uvicorn accepts connections
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                return self
            except OSError:
                if time.monotonic() > deadline:
                    raise RuntimeError("the fake agent server did not start") from None
                time.sleep(0.05)

    def __exit__(self, *exc: object) -> None:
        self._process.terminate()
        self._process.join(timeout=5)


def setup_django(directory: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    os.environ["AGENTS_UI_ALLOW_PRIVATE_ADDRESSES"] = "true"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["CACHE_URL"] = "locmem://benchmark"
    os.environ["AGENTS_UI_DEMO_AUTOREGISTER"] = "false"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # Views are async and the ORM calls below are sync, all on one thread: fine for a benchmark.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def register(count: int, agent_url: str):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from agents_ui.models import AgentEndpoint

    AgentEndpoint.objects.bulk_create(
        AgentEndpoint(
            name=f"Slow agent {i:02d}",
            slug=f"slow-{i:02d}",
            protocol=AgentEndpoint.Protocol.AGUI,
            base_url=f"{agent_url}/agent-{i:02d}/",
        )
        for i in range(count)
    )
    user = get_user_model().objects.create_user(username="bench", password="bench-only-password")
    codenames = ["upload_files", "approve_actions", "view_reasoning"]
    user.user_permissions.set(
        Permission.objects.filter(codename__in=codenames, content_type__app_label="agents_ui")
    )
    return user


async def one_discovery(agent_url: str) -> float:
    """One GET of a declaration through the product's client (a fresh one, as the catalogue makes)."""
    from agents_ui.endpoints.clients import streaming_agent_client

    start = time.perf_counter()
    async with streaming_agent_client() as client:
        response = await client.get(f"{agent_url}/agent-00/capabilities")
    elapsed = time.perf_counter() - start
    assert response.status_code == 200, response.status_code
    return elapsed


async def render(client, count: int) -> tuple[float, float]:
    """One catalogue page: (wall seconds, CPU seconds of this process, every thread)."""
    cpu, start = time.process_time(), time.perf_counter()
    response = await client.get("/")
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    assert response.status_code == 200, response.status_code
    cards = response.content.count(b'data-agent="')
    assert cards == count, f"{cards} cards rendered, {count} expected"
    assert b'data-status="declared"' in response.content
    return elapsed, cpu


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


async def measure(options, agent_url: str, user) -> dict[str, float]:
    from django.core.cache import cache
    from django.test import AsyncClient

    client = AsyncClient()
    await client.aforce_login(user)

    singles = [await one_discovery(agent_url) for _ in range(5)]

    def forget() -> None:
        """Cold: no server process knows any declaration (the shared cache and this process's memo)."""
        from agents_ui.endpoints import discovery

        cache.clear()
        discovery._RECENT.clear()

    forget()
    first, _ = await render(client, options.agents)  # imports, templates, the first snapshots
    colds = []
    for _ in range(options.cold):
        forget()
        colds.append(await render(client, options.agents))
    warms = [await render(client, options.agents) for _ in range(options.warm)]

    if options.profile:
        profiler = cProfile.Profile()
        if options.profile == "cold":
            forget()
        profiler.enable()
        await render(client, options.agents)
        profiler.disable()
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(40)
        print(out.getvalue(), file=sys.stderr)

    one = median_ms(singles)
    cold = median_ms([wall for wall, _ in colds])
    warm = median_ms([wall for wall, _ in warms])
    return {
        "catalogue_agents": options.agents,
        "catalogue_discovery_delay_ms": options.delay_ms,
        "catalogue_one_discovery_ms": one,
        "catalogue_first_render_ms": round(first * 1000, 1),
        "catalogue_cold_ms": cold,
        "catalogue_cold_cpu_ms": median_ms([cpu for _, cpu in colds]),
        "catalogue_cold_ratio": round(cold / one, 2),
        "catalogue_warm_ms": warm,
        "catalogue_warm_cpu_ms": median_ms([cpu for _, cpu in warms]),
        "catalogue_warm_ratio": round(warm / WARM_TARGET_MS, 2),
        # Wall times on a busy machine mostly measure the queue for a CPU: say how busy it was.
        "catalogue_load_1min": round(os.getloadavg()[0], 2),
    }


UNITS = {
    "catalogue_agents": "agents",
    "catalogue_load_1min": "procs",
    "catalogue_cold_ratio": "x",
    "catalogue_warm_ratio": "x",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.add_argument("--agents", type=int, default=50)
    parser.add_argument("--delay-ms", type=float, default=200.0, help="each discovery's server delay")
    parser.add_argument("--cold", type=int, default=5, help="median of N cold renders")
    parser.add_argument("--warm", type=int, default=20, help="median of N warm renders")
    parser.add_argument("--profile", choices=["cold", "warm"], help="cProfile one more render (to stderr)")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agents-ui-bench-") as directory:
        setup_django(directory)
        with AgentServer(options.delay_ms / 1000) as server:
            user = register(options.agents, server.url)
            results = asyncio.run(measure(options, server.url, user))

    if options.json:
        print(json.dumps(results))
    else:
        for name, value in results.items():
            print(f"{name}: {value} {UNITS.get(name, 'ms')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

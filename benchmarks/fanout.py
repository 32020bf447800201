"""How fast a run's words reach a browser that another web process serves, through Redis.

Five processes on loopback: redis-server (its own port, nothing saved; installed with apt-get when
missing and this runs as root, skipped otherwise, saying so), the fake agent of stream.py, and two
product processes (`manage.py serve`, as deployed, REDIS_URL set, one SQLite database). The message is
sent to A, which drives the run; the browser (this process) reads the run's events from B, which
follows it through the run's Redis Stream. The same steady run is also read from A (in memory) in
the same pass, for comparison.

- `fanout_follow_latency_*`: the paced agent of stream.py (a delta every 5 ms, faster than the 30
  swaps a second a message gets), followed on B;
- `fanout_steady_latency_median_ms`: the steady agent (a word every 50 ms) followed on B: the hop
  through Redis and the second process; `fanout_same_process_steady_latency_median_ms`: on A;
- `fanout_events_per_s`: N deltas as fast as the agent sends them, to the done frame on B;
- `fanout_lost_words`: words of the paced and steady runs that never reached the page on B (0).

Usage: python benchmarks/fanout.py [--json] [--events N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks import stream  # noqa: E402  (after the path: run as a script)

UNITS = {
    "fanout_follow_latency_median_ms": "ms",
    "fanout_follow_latency_p95_ms": "ms",
    "fanout_follow_text_swaps_per_s_per_message": "swaps/s (max, target <= 30)",
    "fanout_steady_latency_median_ms": "ms",
    "fanout_steady_latency_p95_ms": "ms",
    "fanout_same_process_steady_latency_median_ms": "ms",
    "fanout_events_per_s": "events/s",
    "fanout_lost_words": "words",
    "fanout_skipped": "",
}


def redis_server() -> str | None:
    found = shutil.which("redis-server")
    if found is None and hasattr(os, "geteuid") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(
            ["apt-get", "install", "-y", "-qq", "redis-server"], env=env, check=False, capture_output=True
        )
        found = shutil.which("redis-server")
    return found


def run(args: argparse.Namespace) -> dict[str, Any]:
    server = redis_server()
    if server is None:
        return {"fanout_skipped": "redis-server is not installed (apt-get install redis-server)"}
    tmp = tempfile.mkdtemp(prefix="agents-ui-bench-fanout-")
    stream.setup_django(os.path.join(tmp, "bench.sqlite3"))
    agent_port, a_port, b_port, redis_port = (stream.free_port() for _ in range(4))
    username, password = stream.make_fixtures(agent_port)
    redis_url = f"redis://127.0.0.1:{redis_port}/0"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "REDIS_URL": redis_url}
    me = [sys.executable, str(HERE / "stream.py")]
    agent_url = f"http://127.0.0.1:{agent_port}/fast/"
    redis_cmd = [server, "--port", str(redis_port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    processes = [
        subprocess.Popen([*redis_cmd, "--dir", tmp], stdout=subprocess.DEVNULL),
        subprocess.Popen([*me, "--serve", "agent", str(agent_port), str(args.events), agent_url], env=env),
        subprocess.Popen([sys.executable, *stream.serve_arguments(a_port)], env=env, cwd=ROOT),
        subprocess.Popen([sys.executable, *stream.serve_arguments(b_port)], env=env, cwd=ROOT),
    ]
    try:
        for port in (redis_port, agent_port, a_port, b_port):
            stream.wait_for_port(port, timeout=120)  # a busy machine starts Django slowly
        a_base, b_base = f"http://127.0.0.1:{a_port}", f"http://127.0.0.1:{b_port}"
        on_a = stream.signed_in_client(a_base, username, password)
        on_b = stream.signed_in_client(b_base, username, password)
        stream.read_run(on_b, stream.send_message(on_a, a_base, "bench-steady", "warm up"))

        paced = stream.read_run(on_b, stream.send_message(on_a, a_base, "bench-paced", "Paced."))
        steady_id = stream.send_message(on_a, a_base, "bench-steady", "Steady.")
        # The same run read from both processes at once: A serves it from memory, B through Redis.
        same: dict[str, Any] = {}
        reader = threading.Thread(target=lambda: same.update(stream.read_run(on_a, steady_id)))
        reader.start()
        steady = stream.read_run(on_b, steady_id)
        reader.join(120)

        started = time.perf_counter()
        fast = stream.read_run(on_b, stream.send_message(on_a, a_base, "bench-fast", "Fast."))
        fast_seconds = time.perf_counter() - started
    finally:
        # Redis last: the products stop while it still answers them.
        for group in (processes[1:], processes[:1]):
            for process in group:
                process.send_signal(2)
            for process in group:
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(tmp, ignore_errors=True)

    assert paced["done"] and steady["done"] and fast["done"], "a run did not end on B"
    lost = (stream.PACED_DELTAS - len(paced["stamps"])) + (stream.STEADY_DELTAS - len(steady["stamps"]))

    def median(values: list[float]) -> float | None:
        return round(statistics.median(values), 2) if values else None

    def p95(values: list[float]) -> float | None:
        return round(statistics.quantiles(values, n=20)[18], 2) if len(values) >= 20 else None

    return {
        "fanout_follow_latency_median_ms": median(paced["latencies"]),
        "fanout_follow_latency_p95_ms": p95(paced["latencies"]),
        "fanout_follow_text_swaps_per_s_per_message": paced["max_swaps_per_s"],
        "fanout_steady_latency_median_ms": median(steady["latencies"]),
        "fanout_steady_latency_p95_ms": p95(steady["latencies"]),
        "fanout_same_process_steady_latency_median_ms": median(same.get("latencies", [])),
        "fanout_events_per_s": round((args.events + 4) / fast_seconds),
        "fanout_lost_words": lost,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--events", type=int, default=20_000, help="text deltas of the fast run")
    args = parser.parse_args()
    results = run(args)
    if args.json:
        print(json.dumps(results))
        return
    for name, value in results.items():
        print(f"{name}: {value} {UNITS.get(name, '')}".rstrip())


if __name__ == "__main__":
    main()

"""The reliability report: faults survived, bad input refused, load held, nothing lost.

    .venv/bin/python scripts/reliability.py            # what `make reliability` runs
    .venv/bin/python scripts/reliability.py --quick    # a short load, for a first look

1. The fault suites (tests/test_faults.py, tests/test_hostile_agents.py): every fault of
   tests/support/fault_agent.py, hostile agents' attacks included, through the product (and
   tests/e2e/test_hostile_agents.py in a real browser: long lines, a double submit); and the live
   fan-out's (tests/runs/test_fanout.py) on a real redis-server, installed with apt-get when missing
   and this runs as root (without it those faults are skipped, and reported as not survived).
2. The bad-input suites (tests/test_bad_input.py, and tests/e2e/test_bad_input.py in a real browser).
3. scripts/load.py twice: one uvicorn worker on SQLite, then two workers on PostgreSQL (a throwaway
   cluster; PostgreSQL is installed with apt-get when missing and this runs as root).
4. The scaled shape's faults (benchmarks/scale_out.py --quick: 4 web workers, 2 run workers,
   PostgreSQL, Redis, as processes), each while streams are open: a web worker killed, a run worker
   stopped (SIGTERM) and killed (SIGKILL), Redis restarted, PostgreSQL restarted; every word the
   browsers should see is counted, lost or shown twice.

Each suite runs as its own pytest process; what each test tried is read from the JUnit XML
properties the tests record (`fault`, `bad_input`). Exit status 0 only when every fault was
survived, every bad input refused, the load had no errors, and no message was lost.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable


def pytest_properties(paths: list[str], name: str, *, browser: bool = False) -> dict[str, bool]:
    """Run pytest on `paths`; {property value: whether every test recording it passed}."""
    env = {**os.environ}
    if browser:
        env.update(AGENTS_UI_E2E="1", DJANGO_ALLOW_ASYNC_UNSAFE="true")
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "junit.xml"
        command = [PYTHON, "-m", "pytest", *paths, "-q", "-o", "junit_family=xunit1", f"--junitxml={report}"]
        result = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True)
        if not report.exists():
            print(result.stdout[-3000:], result.stderr[-3000:], sep="\n", file=sys.stderr)
            raise SystemExit(f"pytest {' '.join(paths)} did not run")
        outcome: dict[str, bool] = defaultdict(lambda: True)
        for case in ET.parse(report).iter("testcase"):
            passed = not any(case.find(tag) is not None for tag in ("failure", "error", "skipped"))
            for prop in case.iter("property"):
                if prop.get("name") == name:
                    outcome[prop.get("value", "")] &= passed
            if not passed:
                print(f"  not passed: {case.get('classname')}::{case.get('name')}", file=sys.stderr)
    return dict(outcome)


def load(arguments: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "load.json"
        command = [PYTHON, str(ROOT / "scripts" / "load.py"), *arguments, "--json", str(out)]
        result = subprocess.run(command, cwd=ROOT, text=True, capture_output=True)
        sys.stderr.write(result.stderr[-2000:] if result.returncode else "")
        if not out.exists():
            print(result.stdout, file=sys.stderr)
            raise SystemExit(f"scripts/load.py {' '.join(arguments)} failed")
        return json.loads(out.read_text())


# benchmarks/scale_out.py's faults: (name, its figures that count what was lost, those that must be 0).
SCALE_OUT_FAULTS = [
    ("web worker killed (SIGKILL), its streams reconnect to another", "web_restart",
     ["scale_out_restart_lost_events", "scale_out_restart_duplicate_events"], ["scale_out_restart_errors"]),
    ("run worker stopped (SIGTERM) mid-run", "drain", ["scale_out_run_worker_drain_lost_runs"], []),
    ("run worker killed (SIGKILL) mid-run", "kill", [], ["scale_out_run_worker_kill_errors"]),
    ("Redis restarted", "redis_restart", ["scale_out_redis_restart_lost_events"],
     ["scale_out_redis_restart_errors"]),
    ("PostgreSQL restarted", "postgres_restart", ["scale_out_postgres_restart_lost_events"],
     ["scale_out_postgres_restart_errors"]),
]  # fmt: skip


def scale_out_faults() -> dict:
    """The scaled shape's faults, once each: {"faults": {name: (survived, lost)}} or {"skipped": why}."""
    phases = [phase for _, phase, _, _ in SCALE_OUT_FAULTS]
    command = [PYTHON, str(ROOT / "benchmarks" / "scale_out.py"), "--quick", "--json", "--only", *phases]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        print(result.stderr[-4000:], file=sys.stderr)
        return {"faults": {name: (False, 0) for name, *_ in SCALE_OUT_FAULTS}}
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    if "scale_out_skipped" in figures:
        return {"skipped": figures["scale_out_skipped"]}
    faults = {}
    for name, _, lost_keys, zero_keys in SCALE_OUT_FAULTS:
        lost = sum(int(figures.get(key) or 0) for key in lost_keys)
        clean = all(figures.get(key) == 0 for key in [*lost_keys, *zero_keys])
        if name.startswith("run worker killed"):
            clean = clean and figures.get("scale_out_run_worker_kill_detected_s") is not None
        faults[name] = (clean, lost)
    return {"faults": faults}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--quick", action="store_true", help="20 conversations for 15 s")
    parser.add_argument("--no-load", action="store_true", help="the suites only")
    parser.add_argument("--no-postgres", action="store_true", help="skip the two-worker PostgreSQL load")
    parser.add_argument("--no-scale-out", action="store_true", help="skip the scaled shape's faults")
    args = parser.parse_args()
    if args.quick:
        args.conversations, args.seconds = 20, 15

    print("Reliability: running the fault suite ...", file=sys.stderr, flush=True)
    if not shutil.which("redis-server") and os.geteuid() == 0 and shutil.which("apt-get"):
        env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
        subprocess.run(["apt-get", "install", "-y", "-qq", "redis-server"], env=env, capture_output=True)
    suites = ["tests/test_faults.py", "tests/test_hostile_agents.py", "tests/runs/test_fanout.py"]
    faults = pytest_properties(suites, "fault")
    for name, ok in pytest_properties(["tests/e2e/test_hostile_agents.py"], "fault", browser=True).items():
        faults[name] = faults.get(name, True) and ok
    print("Reliability: running the bad-input suites ...", file=sys.stderr, flush=True)
    bad = pytest_properties(["tests/test_bad_input.py"], "bad_input")
    bad.update(pytest_properties(["tests/e2e/test_bad_input.py"], "bad_input", browser=True))

    loads = []
    if not args.no_load:
        base = ["--conversations", str(args.conversations), "--seconds", str(args.seconds)]
        print("Reliability: load, 1 worker on SQLite ...", file=sys.stderr, flush=True)
        loads.append(load(base))
        if not args.no_postgres:
            print("Reliability: load, 2 workers on PostgreSQL ...", file=sys.stderr, flush=True)
            loads.append(load([*base, "--workers", "2", "--postgres"]))

    scaled: dict = {"skipped": "--no-scale-out"} if args.no_scale_out else {}
    if not scaled:
        print("Reliability: the scaled shape's faults ...", file=sys.stderr, flush=True)
        scaled = scale_out_faults()
    for name, (ok, _) in scaled.get("faults", {}).items():
        faults[f"scale-out: {name}"] = ok

    survived = sum(faults.values())
    refused = sum(bad.values())
    lost = sum(result["lost_messages"] for result in loads)
    lost += sum(count for _, count in scaled.get("faults", {}).values())
    errors = sum(result["errors"] for result in loads)
    unfinished = sum(result["runs_unfinished"] for result in loads)

    print()
    print("Reliability report")
    print(f"faults: {len(faults)} tried, {survived} survived")
    for name, ok in sorted(faults.items()):
        print(f"  {'survived' if ok else 'FAILED  '}  {name}")
    print(f"bad inputs: {len(bad)} tried, {refused} refused")
    for name, ok in sorted(bad.items()):
        if not ok:
            print(f"  NOT REFUSED  {name}")
    for result in loads:
        print(
            f"load ({result['label']}): {result['conversations']} conversations, {result['seconds']:g} s, "
            f"{result['requests']} requests, {result['errors']} errors "
            f"({result['turns']} answers; last at {result['seconds_with_drain']:.0f} s; "
            f"turn p50 {result['turn_seconds_p50']} s, "
            f"p95 {result['turn_seconds_p95']} s; server memory {result['server_rss_mb_start']} -> "
            f"peak {result['server_rss_mb_peak']} MB)"
        )
        for sample in result["error_samples"][:5]:
            print(f"  {sample}")
        seen = result["user_messages_sent"] + result["assistant_messages_seen"]
        print(
            f"  checked: {result['user_messages_sent']} user messages, "
            f"{result['assistant_messages_seen']} complete assistant messages ({seen} in all), "
            f"{result['runs_unfinished']} runs left unfinished"
        )
    if "skipped" in scaled:
        print(f"scale-out faults: skipped ({scaled['skipped']})")
    else:
        print("scale-out faults (4 web workers, 2 run workers, PostgreSQL, Redis; streams open at each):")
        for name, (ok, count) in scaled["faults"].items():
            print(f"  {'survived' if ok else 'FAILED  '}  {name}: lost messages: {count}")
    if loads or "faults" in scaled:
        print(f"lost messages: {lost}")
    ok = survived == len(faults) and refused == len(bad) and not errors and not lost and not unfinished
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

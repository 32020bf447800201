"""Separate run workers on a real PostgreSQL: `manage.py run_worker` processes claiming queued runs.

Each test has its own database (tests/support/postgres.py), an AG-UI agent answering at a set
pace in a thread of this process (tests/support/paced_agent.py), and worker processes started
and stopped (SIGTERM, SIGKILL) as a deployment's would be. The database is read with psycopg.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from agents_ui.runs.queue import INTERRUPTED
from tests.support.paced_agent import PacedAgent, word
from tests.support.postgres import REPO, pg_database, postgres_cluster, product_env, step  # noqa: F401
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.timeout(240)

# Short leases, so that a stopped worker is noticed within seconds here (the defaults: docs/deploy.md).
FAST = {
    "AGENTS_UI_WORKER_POLL_SECONDS": "0.1",
    "AGENTS_UI_WORKER_HEARTBEAT_SECONDS": "0.5",
    "AGENTS_UI_WORKER_SWEEP_SECONDS": "1",
    "AGENTS_UI_WORKER_LEASE_SECONDS": "4",
}
WAIT = 90.0  # the longest any condition here is waited for (a busy shared machine)


@pytest.fixture
def agent() -> Iterator[PacedAgent]:
    server = PacedAgent().start()
    yield server
    server.stop()


class Product:
    """Product processes on one database: steps (tests/support/queue_scenarios.py) and workers."""

    def __init__(self, database_url: str, tmp_path: Path) -> None:
        self.url = database_url
        self.tmp = tmp_path
        self.workers: list[subprocess.Popen] = []
        self._logs: list = []

    def step(self, name: str, **arguments: object) -> dict:
        return step(self.url, name, **arguments)

    def worker(self, *options: str, name: str = "", **env: str) -> subprocess.Popen:
        log = (self.tmp / f"worker-{len(self.workers)}.log").open("w")
        self._logs.append(log)
        process = subprocess.Popen(
            [sys.executable, "manage.py", "run_worker", *options, *(["--name", name] if name else [])],
            cwd=REPO, env=product_env(self.url, **{**FAST, **env}), stdout=log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        self.workers.append(process)
        return process

    def logs(self) -> str:
        return "\n".join(path.read_text() for path in sorted(self.tmp.glob("worker-*.log")))

    def runs(self, ids: list[str]) -> dict[str, dict]:
        with psycopg.connect(self.url.replace("postgres://", "postgresql://")) as db:
            rows = db.execute(
                "SELECT r.id::text, r.status, r.error, r.attempt, r.worker, "
                "(SELECT count(*) FROM agents_ui_runevent e WHERE e.run_id = r.id), "
                "(SELECT string_agg(m.content, '') FROM agents_ui_message m "
                "  WHERE m.run_id = r.id AND m.role = 'assistant') "
                "FROM agents_ui_run r WHERE r.id::text = ANY(%s)",
                [ids],
            ).fetchall()
        keys = ("status", "error", "attempt", "worker", "events", "answer")
        return {row[0]: dict(zip(keys, row[1:], strict=True)) for row in rows}

    def listening(self) -> bool:
        """A worker listens for notifications (and so has made its first look at the queue)."""
        with psycopg.connect(self.url.replace("postgres://", "postgresql://")) as db:
            found = db.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND query LIKE 'LISTEN %%'"
            ).fetchone()
        return bool(found and found[0])

    def run(self, run_id: str) -> dict:
        return self.runs([run_id])[run_id]

    def until(self, run_id: str, condition, what: str) -> dict:
        return eventually_sync(
            lambda: (lambda row: row if condition(row) else None)(self.run(run_id)),
            timeout=WAIT, interval=0.2, what=lambda: f"{what}: {self.run(run_id)}\n{self.logs()[-3000:]}",
        )  # fmt: skip

    def close(self) -> None:
        for process in self.workers:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=10)
        for log in self._logs:
            log.close()


@pytest.fixture
def product(pg_database: str, tmp_path: Path) -> Iterator[Product]:  # noqa: F811
    running = Product(pg_database, tmp_path)
    yield running
    running.close()


def answer(parts: int) -> str:
    return "".join(word(n) for n in range(parts))


def test_two_workers_racing_claim_each_run_exactly_once(product: Product, agent: PacedAgent):
    runs = product.step("seed", agent_base=agent.base(3, 0.05), count=30)["runs"]
    product.worker("--concurrency", "10", name="a")
    product.worker("--concurrency", "10", name="b")
    eventually_sync(
        lambda: all(row["status"] == "completed" for row in product.runs(runs).values()),
        timeout=WAIT, interval=0.3, what=lambda: f"{product.runs(runs)}\n{product.logs()[-3000:]}",
    )  # fmt: skip
    rows = product.runs(runs)
    assert {row["attempt"] for row in rows.values()} == {1}  # claimed once each
    assert sorted(agent.runs) == sorted(runs)  # and each asked of the agent once
    assert all(row["answer"] == answer(3) for row in rows.values())
    assert {row["worker"] for row in rows.values()} <= {"a", "b"}
    for process in product.workers:
        process.send_signal(signal.SIGTERM)
    assert [process.wait(timeout=60) for process in product.workers] == [0, 0]


def test_a_stale_lease_cannot_write_over_the_next_one(product: Product, agent: PacedAgent):
    (run,) = product.step("seed", agent_base=agent.base(1, 0), count=1)["runs"]
    first = product.step("claim_as", worker="gone", heartbeat_age=60)["leases"][0]
    assert product.step("sweep", lease_seconds=4)["outcomes"] == {run: "requeued"}
    second = product.step("claim_as", worker="next")["leases"][0]
    assert (first["attempt"], second["attempt"]) == (1, 2)

    stale = product.step("fenced_write", run=run, attempt=1, worker="gone", seq=1)
    assert stale == {"lost": [run], "stopped": [], "status_written": 0}
    assert product.run(run)["events"] == 0 and product.run(run)["status"] == "pending"

    fresh = product.step("fenced_write", run=run, attempt=2, worker="next", seq=1)
    assert fresh == {"lost": [], "stopped": [], "status_written": 1}
    assert product.run(run)["events"] == 1 and product.run(run)["status"] == "completed"


def test_a_run_claimed_by_a_worker_that_stopped_before_it_began_is_run_again_once(
    product: Product, agent: PacedAgent
):
    (run,) = product.step("seed", agent_base=agent.base(3, 0.05), count=1)["runs"]
    product.step("claim_as", worker="gone", heartbeat_age=60)  # claimed, then that worker died
    product.worker()
    row = product.until(run, lambda r: r["status"] == "completed", "the run requeued and answered")
    assert row["attempt"] == 2 and row["answer"] == answer(3)
    assert agent.runs == [run]  # the agent was asked once: the first claim never reached it


def test_a_killed_worker_s_run_is_marked_interrupted_keeping_its_events(product: Product, agent: PacedAgent):
    (run,) = product.step("seed", agent_base=agent.base(400, 0.05), count=1)["runs"]
    doomed = product.worker(name="doomed")
    product.until(run, lambda r: r["events"] >= 5, "the first events stored")
    doomed.send_signal(signal.SIGKILL)
    doomed.wait(timeout=10)
    stored = product.run(run)["events"]
    product.worker(name="sweeper")  # the sweeper lives in every worker
    row = product.until(run, lambda r: r["status"] == "failed", "the run ended by the sweeper")
    assert row["error"] == INTERRUPTED
    assert row["events"] == stored  # every stored event kept, nothing written after
    assert row["worker"] == "" and row["attempt"] == 1  # not started again: it had reached the agent
    assert agent.runs == [run]


def test_sigterm_lets_a_running_run_finish_then_the_worker_exits(product: Product, agent: PacedAgent):
    parts = 30
    (run,) = product.step("seed", agent_base=agent.base(parts, 0.1), count=1)["runs"]
    worker = product.worker("--drain-seconds", "60")
    product.until(run, lambda r: r["events"] >= 3, "the run under way")
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=WAIT) == 0
    row = product.run(run)
    assert row["status"] == "completed" and row["answer"] == answer(parts)
    assert row["events"] == parts + 4  # RUN_STARTED, START, every word, END, RUN_FINISHED: none lost
    assert "stopped after 1 run(s)" in product.logs()


def test_sigterm_past_the_drain_hands_the_run_back_as_interrupted(product: Product, agent: PacedAgent):
    (run,) = product.step("seed", agent_base=agent.base(400, 0.05), count=1)["runs"]
    worker = product.worker("--drain-seconds", "0.5")
    product.until(run, lambda r: r["events"] >= 3, "the run under way")
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=WAIT) == 0
    row = product.run(run)
    assert row["status"] == "failed" and row["error"] == INTERRUPTED
    assert row["events"] >= 3 and row["answer"].startswith("w0 w1 ")  # what it said is kept
    eventually_sync(lambda: agent.gone == [run], timeout=WAIT, what="the agent's connection closed")


def test_a_stop_from_a_web_process_reaches_the_worker(product: Product, agent: PacedAgent):
    (run,) = product.step("seed", agent_base=agent.base(400, 0.05), count=1)["runs"]
    product.worker()
    product.until(run, lambda r: r["events"] >= 3, "the run under way")
    assert product.step("stop", run=run) == {"stopped": True}  # another process than the worker
    eventually_sync(lambda: agent.gone == [run], timeout=WAIT, what="the worker closing the agent's stream")
    row = product.until(run, lambda r: r["answer"], "what was said saved")
    assert row["status"] == "cancelled" and row["error"] == "Stopped. The answer so far is kept."
    assert row["answer"].startswith("w0 ")


def test_a_send_wakes_an_idle_worker_at_once_and_so_does_a_stop(product: Product, agent: PacedAgent):
    # Polls ten minutes apart: only the send's and the stop's notifications can make it act before.
    slow = {"AGENTS_UI_WORKER_POLL_SECONDS": "600", "AGENTS_UI_WORKER_HEARTBEAT_SECONDS": "600"}
    product.worker(**slow)
    eventually_sync(product.listening, timeout=WAIT, interval=0.2, what=product.logs)
    (run,) = product.step("seed", agent_base=agent.base(400, 0.05), count=1)["runs"]
    product.until(run, lambda r: r["events"] >= 3, "the run claimed on its notification")
    product.step("stop", run=run)
    eventually_sync(lambda: agent.gone == [run], timeout=WAIT, what="the stop delivered on its notification")

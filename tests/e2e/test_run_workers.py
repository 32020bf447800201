"""A run driven by a separate run worker, seen through the normal page: queued first ("Queued: you
are next"), then streamed from the event log once a `manage.py run_worker` process claims it, and
still whole after a reload mid-answer.

The product runs as deployed in that shape: a web process (`manage.py serve`) and a run worker,
both on a throwaway PostgreSQL (tests/support/postgres.py); the agent answers at a set pace from a
thread of this process (tests/support/paced_agent.py).
"""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.paced_agent import PacedAgent, word
from tests.support.postgres import REPO, pg_database, postgres_cluster, product_env, step  # noqa: F401
from tests.support.waiting import eventually_sync

PARTS = 60
TIMEOUT = 60_000


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def shape(pg_database: str, tmp_path: Path) -> Iterator[dict]:  # noqa: F811
    agent = PacedAgent().start()
    port = _free_port()
    # One queued run fills the queue: a second send is refused while no worker runs.
    env = product_env(pg_database, AGENTS_UI_WORKER_POLL_SECONDS="0.1", AGENTS_UI_QUEUE_MAX="1")
    logs = [(tmp_path / name).open("w") for name in ("web.log", "worker.log")]
    web = subprocess.Popen(
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=REPO, env=env, stdout=logs[0], stderr=subprocess.STDOUT,
    )  # fmt: skip
    processes = [web]

    def worker() -> subprocess.Popen:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "run_worker"],
            cwd=REPO,
            env=env,
            stdout=logs[1],
            stderr=subprocess.STDOUT,
        )
        processes.append(process)
        return process

    def up() -> bool:
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    eventually_sync(up, timeout=60, interval=0.2, what=lambda: (tmp_path / "web.log").read_text())
    seeded = step(pg_database, "seed", agent_base=agent.base(PARTS, 0.1), count=0)
    yield {"url": f"http://127.0.0.1:{port}", "slug": seeded["slug"], "worker": worker, "agent": agent}
    for process in processes:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
    for log in logs:
        log.close()
    agent.stop()


def test_a_run_worker_s_run_streams_in_the_page_and_survives_a_reload(page: Page, shape: dict, screenshot):
    base = shape["url"]
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "queue-person")
    page.fill("#id_password", "queue-person-password")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/")
    page.goto(f"{base}/agents/{shape['slug']}/")
    page.fill("#message", "Count for me, slowly")
    page.locator("[data-composer] button.button-primary").click()

    run = page.locator("#transcript section.run").last
    expect(run.locator("[data-queued]")).to_contain_text("Queued: you are next.", timeout=TIMEOUT)
    page.wait_for_url(re.compile(r"/c/"))
    screenshot("run-worker-queued")
    at_width(page, 390)  # a reload while queued: still queued, in its place
    expect(page.locator("[data-queued]")).to_contain_text("Queued: you are next.", timeout=TIMEOUT)
    screenshot("run-worker-queued-phone")
    at_width(page, 1280)
    conversation = page.url

    # The queue is full: a new conversation's message is refused for now, and stays typed.
    for width, name in ((1280, "run-worker-queue-full"), (390, "run-worker-queue-full-phone")):
        page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
        page.goto(f"{base}/agents/{shape['slug']}/")
        page.fill("#message", "And another question")
        page.locator("[data-composer] button.button-primary").click()
        expect(page.locator("#composer-errors")).to_contain_text("Too many answers are waiting to start")
        expect(page.locator("#message")).to_have_value("And another question")
        screenshot(name)

    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(conversation)
    run = page.locator("#transcript section.run").last
    expect(run.locator("[data-queued]")).to_be_visible()

    shape["worker"]()  # a worker starts: it claims the run, and the page streams it from the log
    text = run.locator(".msg-assistant .msg-text").first
    expect(text).to_contain_text(word(5).strip(), timeout=TIMEOUT)
    expect(run.locator("[data-queued]")).to_have_count(0)
    before = text.inner_text()
    assert not before.strip().endswith(word(PARTS - 1).strip())  # mid-answer

    page.reload()
    again = page.locator("#transcript section.run").last
    expect(again.locator(".msg-assistant .msg-text").first).to_contain_text(before.strip()[:10])
    expect(again.locator(".run-status")).to_have_attribute("data-run-status", "completed", timeout=TIMEOUT)
    shown = again.locator(".msg-assistant .msg-text").first.inner_text().split()
    assert shown == [word(n).strip() for n in range(PARTS)]  # every word, once, in order
    assert len(shape["agent"].runs) == 1
    screenshot("run-worker-answered")
    at_width(page, 390)
    expect(page.locator(".run-status").last).to_have_attribute("data-run-status", "completed")
    screenshot("run-worker-answered-phone")


def at_width(page: Page, width: int) -> None:
    """The page loaded again at that width (a live resize would show the side panel sliding)."""
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
    page.reload()
    expect(page.locator("[data-composer]")).to_be_visible()

"""The scaled shape in the browser, with processes: PostgreSQL as the record and the queue, Redis for
what is live, two web processes (`manage.py serve`) behind a round-robin proxy without sticky
sessions (tests/support/round_robin_proxy.py), and one run worker (`manage.py run_worker`).

- The web process that serves an answer's stream is killed (SIGKILL) mid-answer: the page says it
  is reconnecting (never an error), its stream comes back through the other web process from the
  browser's cursor, and the answer ends with every word exactly once.
- A reload mid-answer: the page comes back, from either web process, and shows the whole answer once.

Skipped, saying why, where PostgreSQL or redis-server is not installed (.ci/run installs both).
"""

from __future__ import annotations

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
from tests.support.round_robin_proxy import RoundRobinProxy
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e

PARTS = 80
DELAY = 0.1  # seconds between two words: eight seconds of answer, a kill and a reconnect fit in it
TIMEOUT = 60_000
# Everything the run's status line shows while it lasts, seen by the page itself (a MutationObserver):
# "Reconnecting…" may be shown for a moment only, between two polls of a test.
WATCH_RECONNECTING = """
window.__reconnecting = [];
new MutationObserver(function () {
  document.querySelectorAll("[data-reconnecting]").forEach(function (e) {
    var text = e.textContent, seen = window.__reconnecting;
    if (text && seen[seen.length - 1] !== text) seen.push(text);
  });
}).observe(document, { subtree: true, childList: true, characterData: true });
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture
def scaled(pg_database: str, redis_server, tmp_path: Path) -> Iterator[dict]:  # noqa: F811
    agent = PacedAgent().start()
    env = product_env(pg_database, REDIS_URL=redis_server.url, AGENTS_UI_WORKER_POLL_SECONDS="0.1")
    processes: dict[str, subprocess.Popen] = {}
    logs = []

    def start(name: str, *command: str) -> subprocess.Popen:
        log = (tmp_path / f"{name}.log").open("w")
        logs.append(log)
        processes[name] = subprocess.Popen(
            [sys.executable, "manage.py", *command], cwd=REPO, env=env, stdout=log, stderr=subprocess.STDOUT
        )
        return processes[name]

    ports = {name: _free_port() for name in ("web-1", "web-2")}
    for name, port in ports.items():
        start(name, "serve", "--port", str(port))
    start("run-worker", "run_worker")
    for name, port in ports.items():
        eventually_sync(
            lambda port=port: _listening(port), timeout=60, interval=0.2,
            what=lambda name=name: (tmp_path / f"{name}.log").read_text(),
        )  # fmt: skip
    proxy = RoundRobinProxy(list(ports.values())).start()
    seeded = step(pg_database, "seed", agent_base=agent.base(PARTS, DELAY), count=0)
    try:
        yield {
            "url": proxy.url, "slug": seeded["slug"], "proxy": proxy, "agent": agent,
            "processes": processes, "ports": ports, "logs": tmp_path,
        }  # fmt: skip
    finally:
        proxy.stop()
        for process in processes.values():
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in processes.values():
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
        for log in logs:
            log.close()
        agent.stop()


def sign_in_and_ask(page: Page, scaled: dict, question: str) -> str:
    """Signed in through the proxy, the question sent: the run's id."""
    base = scaled["url"]
    page.goto(f"{base}/accounts/login/")
    page.fill("#id_username", "queue-person")
    page.fill("#id_password", "queue-person-password")
    page.click("button[type=submit]")
    page.wait_for_url(f"{base}/", timeout=TIMEOUT)
    page.goto(f"{base}/agents/{scaled['slug']}/")
    page.fill("#message", question)
    page.locator("[data-composer] button.button-primary").click()
    run = page.locator("#transcript section.run").last
    expect(run.locator(".msg-assistant .msg-text").first).to_contain_text(word(3).strip(), timeout=TIMEOUT)
    return run.get_attribute("data-run")


def answer_words(page: Page) -> list[str]:
    run = page.locator("#transcript section.run").last
    expect(run.locator(".run-status")).to_have_attribute("data-run-status", "completed", timeout=TIMEOUT)
    return run.locator(".msg-assistant .msg-text").first.inner_text().split()


def the_agents_script() -> list[str]:
    return [word(n).strip() for n in range(PARTS)]


def test_a_web_process_killed_mid_answer_the_answer_goes_on_through_the_other_every_word_once(
    page: Page, scaled: dict, screenshot
):
    page.add_init_script(WATCH_RECONNECTING)
    proxy: RoundRobinProxy = scaled["proxy"]
    run_id = sign_in_and_ask(page, scaled, "Count for me, slowly")
    [first] = proxy.streams(run_id)
    serving = next(name for name, port in scaled["ports"].items() if port == first.backend)
    shown = page.locator("#transcript section.run").last.locator(".msg-assistant .msg-text").first
    before = shown.inner_text().split()
    assert before[-1] != word(PARTS - 1).strip(), "the answer ended before the kill"

    # The run's body as the browser has it: a stream that goes on from the cursor leaves it in place.
    page.evaluate("document.querySelector('#transcript section.run:last-of-type .run-body').__kept = true")

    scaled["processes"][serving].send_signal(signal.SIGKILL)  # what a crash looks like
    scaled["processes"][serving].wait(timeout=10)
    page.wait_for_function("window.__reconnecting.length > 0", timeout=TIMEOUT)
    screenshot("scale-out-reconnecting")

    words = answer_words(page)
    assert words == the_agents_script()  # every word, in order: none missing
    assert len(words) == len(set(words))  # and none twice
    assert len(scaled["agent"].runs) == 1  # the agent was asked once
    # The stream came back through the other web process, from the browser's cursor.
    again = proxy.streams(run_id)[1:]
    assert again and all(p.backend != first.backend for p in again)
    assert again[0].last_event_id and int(again[0].last_event_id) >= len(before)
    assert page.evaluate("document.querySelector('#transcript section.run:last-of-type .run-body').__kept")
    # While it was away, the page said so, and never showed an error.
    [said] = page.evaluate("window.__reconnecting")
    assert said.startswith("Reconnecting…")
    expect(page.locator("[data-reconnecting]")).to_have_text("")
    expect(page.locator("#transcript [data-run-error], #transcript .alert-error")).to_have_count(0)
    screenshot("scale-out-after-kill")


def test_a_reload_mid_answer_under_the_scaled_shape_shows_the_whole_answer_once(
    page: Page, scaled: dict, screenshot
):
    proxy: RoundRobinProxy = scaled["proxy"]
    page.set_viewport_size({"width": 390, "height": 844})
    run_id = sign_in_and_ask(page, scaled, "Count for me again")
    page.reload()
    shown = page.locator("#transcript section.run").last.locator(".msg-assistant .msg-text").first
    expect(shown).to_contain_text(word(10).strip(), timeout=TIMEOUT)
    assert shown.inner_text().split()[-1] != word(PARTS - 1).strip(), "the answer ended before the reload"
    page.reload()
    words = answer_words(page)
    assert words == the_agents_script() and len(words) == len(set(words))
    assert len(scaled["agent"].runs) == 1
    # Each page's stream, whichever web process served it, and none was asked with a cursor: a new
    # page starts from the whole run.
    streams = proxy.streams(run_id)
    assert len(streams) >= 3 and all(p.last_event_id is None for p in streams)
    screenshot("scale-out-after-reload")

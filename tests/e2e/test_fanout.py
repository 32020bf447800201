"""Two web processes and Redis, in the browser: a run sent on A (the live server of the tests, which
drives it) and followed on B (`manage.py serve` in a process of its own, the same database, the same
Redis) streams every word once; a reload on B mid-answer goes on where the run is."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from playwright.sync_api import Page, expect

from agents_ui.models import Conversation
from tests.factories import make_endpoint
from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
WORDS = 60
PACE = 0.08  # seconds between two words: a reload fits in the middle of the answer
TIMEOUT = 30_000


def said() -> str:
    return " ".join(f"word{i}" for i in range(1, WORDS + 1))


async def counting_agent(scope, receive, send) -> None:
    """An AG-UI agent that streams word1 ... word60, a word every PACE seconds."""
    if scope["type"] == "lifespan":
        await serve_lifespan(receive, send)
        return
    while (await receive()).get("more_body"):
        pass
    if scope["path"].rstrip("/").endswith("capabilities"):
        body = json.dumps({"identity": {"name": "Counter"}, "transport": {"streaming": True}}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json")],
            }
        )
        await send({"type": "http.response.body", "body": body})
        return
    await send(
        {"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]}
    )

    async def event(data: dict) -> None:
        await send(
            {
                "type": "http.response.body",
                "body": f"data: {json.dumps(data)}\n\n".encode(),
                "more_body": True,
            }
        )

    await event({"type": "RUN_STARTED", "threadId": "t", "runId": "r"})
    await event({"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"})
    for i in range(1, WORDS + 1):
        await event(
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": f"word{i}" if i == 1 else f" word{i}"}
        )
        await asyncio.sleep(PACE)
    await event({"type": "TEXT_MESSAGE_END", "messageId": "m"})
    await event({"type": "RUN_FINISHED", "threadId": "t", "runId": "r"})
    await send({"type": "http.response.body", "body": b""})


@pytest.fixture
def agent() -> Iterator[str]:
    server = ThreadedUvicorn(counting_agent).start()
    try:
        yield server.url
    finally:
        server.stop()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def server_b(live_url: str, redis_server) -> Iterator[str]:
    """The product in a process of its own, on the tests' database and Redis."""
    port = _free_port()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "project.test_settings",
        "DATABASE_URL": f"sqlite:///{django_settings.DATABASES['default']['NAME']}",
        "AGENTS_UI_TEST_FANOUT_URL": redis_server.url,
        "LOG_LEVEL": "WARNING",
    }
    command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env)

    def listening() -> bool:
        if process.poll() is not None:
            raise RuntimeError(f"server B exited with {process.returncode}")
        with socket.socket() as sock:
            return sock.connect_ex(("127.0.0.1", port)) == 0

    try:
        eventually_sync(listening, timeout=60, what="server B to listen")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def answer(page: Page):
    return page.locator("#transcript section.run").last.locator(".msg-assistant .msg-text")


def followers_reading_the_stream(redis_server) -> int:
    """Redis connections blocked in XREAD right now (B's followers)."""
    with socket.create_connection(("127.0.0.1", redis_server.port), timeout=5) as sock:
        sock.sendall(b"CLIENT LIST\r\n")
        data = b""
        while not data.endswith(b"\r\n") or data.count(b"\r\n") < 2:
            data += sock.recv(65536)
    return data.count(b"cmd=xread")


def test_a_run_sent_on_one_web_process_streams_on_another_every_word_once_and_a_reload_goes_on(
    page: Page, signed_in, live_url, server_b, agent, redis_server
):
    endpoint = make_endpoint(name="Counter", slug="counter", base_url=f"{agent}/agent")
    user = signed_in()
    page.goto(f"{live_url}/agents/{endpoint.slug}/")
    page.fill("#message", "Count for me.")
    page.locator("[data-composer] button.button-primary").click()
    expect(answer(page)).to_contain_text("word1", timeout=TIMEOUT)  # A drives it
    conversation = Conversation.objects.get(user=user)
    # The same person on B (the session is in the shared database), following the same run.
    other = page.context.new_page()
    other.goto(f"{server_b}{conversation.get_absolute_url()}")
    expect(answer(other)).to_contain_text("word", timeout=TIMEOUT)
    eventually_sync(
        lambda: followers_reading_the_stream(redis_server) >= 1, what="B to read the run's Stream"
    )
    expect(answer(other)).to_have_text(said(), timeout=TIMEOUT)
    expect(answer(page)).to_have_text(said(), timeout=TIMEOUT)

    # The next answer: B is reloaded while it streams, and goes on from where the run is.
    page.fill("#message", "Again.")
    page.locator("[data-composer] button.button-primary").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    other.goto(f"{server_b}{conversation.get_absolute_url()}")
    expect(other.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    expect(answer(other)).to_contain_text("word5", timeout=TIMEOUT)
    shown = answer(other).inner_text()
    assert not re.search(rf"word{WORDS}\b", shown), "the answer ended before the reload"
    other.reload()
    expect(answer(other)).to_have_text(said(), timeout=TIMEOUT)
    expect(answer(page)).to_have_text(said(), timeout=TIMEOUT)

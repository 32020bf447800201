"""Shared fixtures: an ASGI live server (uvicorn in a thread of the test process) and test data."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tests.sdk.fakes import FakeServer, Handler
from tests.support.live_server import LiveASGIServer

# Real AG-UI streams captured from servers we did not write.
CAPTURES = Path(__file__).resolve().parent / "fixtures" / "agui-captures"

# Browser tests need their own process (Playwright's sync API breaks asyncio tests that share one):
# `pytest` runs everything else, `AGENTS_UI_E2E=1 pytest tests/e2e` runs them (see the Makefile).
collect_ignore_glob = [] if os.environ.get("AGENTS_UI_E2E") else ["e2e/*"]

# Per-test timeouts (pytest-timeout) beyond the default in pyproject.toml: a browser test drives a
# real browser against the live server, an interop test may first start its peer (up to 90 s).
TIMEOUTS = {"e2e": 300, "interop": 300}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).resolve().parent
    for item in items:
        folder = item.path.relative_to(here).parts[0] if item.path.is_relative_to(here) else ""
        if folder in TIMEOUTS:
            item.add_marker(pytest.mark.timeout(TIMEOUTS[folder]))  # after the test's own, which wins


@pytest.fixture(scope="session")
def asgi_server(django_db_setup, django_db_blocker) -> Iterator[LiveASGIServer]:
    # The server thread opens its own database connections: let it.
    with django_db_blocker.unblock():
        server = LiveASGIServer()
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def live_url(asgi_server: LiveASGIServer, transactional_db, settings) -> str:
    """The live server's base URL; data written by the test is committed, so the server sees it."""
    settings.AGENTS_UI_PUBLIC_URL = asgi_server.url
    return asgi_server.url


@pytest.fixture
async def fake_server() -> AsyncIterator[Callable[[Handler], Awaitable[FakeServer]]]:
    """``server = await fake_server(handler)``: a real HTTP server in this event loop."""
    servers: list[FakeServer] = []

    async def start(handler: Handler) -> FakeServer:
        server = await FakeServer(handler).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        await server.stop()


@pytest.fixture(autouse=True)
def _forget_discoveries():
    """Each test starts with no discovery remembered by this process (tests clear the cache too)."""
    from agents_ui.endpoints import memo

    memo.forget_all()


@pytest.fixture(autouse=True)
def _empty_cache():
    """Each test starts with an empty cache: no discovery, card or failed sign-in of another test."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(scope="session")
def _redis_process():
    from tests.support.redis_server import SKIP_REASON, RedisServer, installed, redis_port

    if not installed():
        pytest.skip(SKIP_REASON)
    server = RedisServer(redis_port())
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_server(_redis_process, settings):
    """A real redis-server of this test process, empty, and the fan-out pointed at it."""
    if not _redis_process.ping():  # a test before killed it
        _redis_process.start()
    _redis_process.flush()
    settings.AGENTS_UI_FANOUT_URL = _redis_process.url
    yield _redis_process
    # The live server's event loop outlives the test: its connections to this Redis are closed.
    from agents_ui.runs.fanout import _FANOUTS, close_in

    for loop in [loop for loop in list(_FANOUTS) if loop.is_running()]:
        close_in(loop)

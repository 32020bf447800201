"""Fixtures for the SDK tests: in-process fake agents and the real AG-UI captures."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from .fakes import FakeServer, Handler

CAPTURES = Path(__file__).resolve().parents[2].parent / "shared" / "fixtures" / "agui-captures"


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


@pytest.fixture
def captures() -> Path:
    assert CAPTURES.is_dir(), f"the AG-UI captures are expected at {CAPTURES}"
    return CAPTURES

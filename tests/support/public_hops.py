"""A test-only seam that makes a loopback test server look like a public host to the address guard.

SSRF tests need the guard on (private addresses refused) and yet a hostile agent to talk to, and
test agents live on loopback. So the hostile agent is given a documentation address (TEST-NET-2,
198.51.100.0/24, never a real host, and not in a range the guard refuses): the product names it,
the guard resolves and checks it as it would any public address, and only then, *inside* the guard,
`Rehome` sends the connection on to the test server's loopback port. Every other address goes to
the real network, so a hop the guard wrongly let through really reaches the internal listener
(tests/support/internal_listener.py).

`fake_names` does the same for DNS: a name answers what the test says, call after call (the last
answer repeated), so a name can answer a public address first and loopback next (rebinding).

Installed only by tests (`installed`, with pytest's monkeypatch) and by the settings module the
attack script gives its server (tests/support/ssrf_settings.py); nothing in agents_ui refers to it,
so production cannot turn it on.
"""

from __future__ import annotations

import asyncio
import json
import os
import socket
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from agents_ui.sdk.guard import GuardedTransport

PUBLIC = "198.51.100.7"
OTHER_PUBLIC = "198.51.100.8"  # another origin, for where a credential must not go

Table = dict[tuple[str, int], int]  # (public address, port) -> the loopback port it is served on


class Rehome(httpx.AsyncBaseTransport):
    """After the guard's check: a request to a public address of the table goes to loopback."""

    def __init__(self, inner: httpx.AsyncBaseTransport, table: Table) -> None:
        self._inner, self._table = inner, table

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        port = self._table.get((request.url.host, request.url.port or 80))
        if port is not None:
            request.url = request.url.copy_with(host="127.0.0.1", port=port)
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


class FakeNames:
    """name -> its answers, one per lookup (the last repeated); `lookups` counts them per name."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}
        self.lookups: dict[str, int] = {}

    def answer(self, name: str, port: int) -> list[tuple[Any, ...]] | None:
        if name not in self.answers:
            return None
        count = self.lookups[name] = self.lookups.get(name, 0) + 1
        answers = self.answers[name]
        address = answers[min(count, len(answers)) - 1]
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sockaddr = (address, port, 0, 0) if ":" in address else (address, port)
        return [(family, socket.SOCK_STREAM, 6, "", sockaddr)]


def patches(table: Table, names: FakeNames) -> list[tuple[Any, str, Callable[..., Any]]]:
    """(object, attribute, replacement) for the guard's inner transport and the event loop's DNS."""
    original_init = GuardedTransport.__init__
    original_lookup = asyncio.BaseEventLoop.getaddrinfo

    def init(self: GuardedTransport, inner: httpx.AsyncBaseTransport, **kwargs: Any) -> None:
        original_init(self, Rehome(inner, table), **kwargs)

    async def getaddrinfo(loop: asyncio.BaseEventLoop, host: Any, port: Any, *args: Any, **kwargs: Any):
        found = names.answer(host, port) if isinstance(host, str) else None
        if found is not None:
            return found
        return await original_lookup(loop, host, port, *args, **kwargs)

    return [(GuardedTransport, "__init__", init), (asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)]


@contextmanager
def installed(monkeypatch: Any, table: Table, names: FakeNames | None = None) -> Iterator[FakeNames]:
    names = names or FakeNames()
    with monkeypatch.context() as patch:
        for target, attribute, replacement in patches(table, names):
            patch.setattr(target, attribute, replacement)
        yield names


def install_from_environment() -> None:
    """For a server process of scripts/attack_load.py (tests/support/ssrf_settings.py):
    AGENTS_UI_PUBLIC_HOPS is "address:port=loopback port,..." and AGENTS_UI_FAKE_NAMES a JSON object
    of name -> answers."""
    table: Table = {}
    for entry in filter(None, os.environ.get("AGENTS_UI_PUBLIC_HOPS", "").split(",")):
        public, _, port = entry.partition("=")
        host, _, public_port = public.rpartition(":")
        table[(host, int(public_port))] = int(port)
    names = FakeNames()
    names.answers.update(json.loads(os.environ.get("AGENTS_UI_FAKE_NAMES") or "{}"))
    for target, attribute, replacement in patches(table, names):
        setattr(target, attribute, replacement)

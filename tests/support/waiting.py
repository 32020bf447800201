"""Waiting in tests for what the product does in the background, never for a fixed time.

- `settle()`: every live run of this process has ended (its task returned), within a timeout;
- `until_live(live, condition)`: wait on a live run's change notifications (no polling) until the
  condition about it holds;
- `eventually(condition)` / `eventually_sync(condition)`: poll a condition (a plain or async callable)
  every few milliseconds until it holds, and fail with what was awaited once the timeout passes
  (`what`, a text or a function giving one; the condition's source without it).
  The timeouts are generous (a slow shared machine); a healthy test never comes near them.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents_ui.runs.live import LiveRun

INTERVAL = 0.01
TIMEOUT = 10.0


async def settle(timeout: float = 20.0) -> None:  # noqa: ASYNC109 (the whole wait's bound)
    """Wait until no run is live in this process: each live run's task has returned."""
    from agents_ui.runs.live import LIVE  # here: live servers import this module before Django is set up

    try:
        async with asyncio.timeout(timeout):
            while LIVE:
                await asyncio.gather(*(live.task for live in list(LIVE.values()) if live.task))
                await asyncio.sleep(0)  # a run without its task yet: let it start or leave
    except TimeoutError:
        raise AssertionError(f"runs still live after {timeout}s: {sorted(LIVE)}") from None


async def until_live(
    live: LiveRun,
    condition: Callable[[], object],
    *,
    timeout: float = TIMEOUT,  # noqa: ASYNC109 (the whole wait's bound)
    what: str | Callable[[], str] | None = None,
) -> None:
    """Wait until `condition()` holds, looking again each time the live run changes."""
    changed = live.subscribe()
    try:
        async with asyncio.timeout(timeout):
            while not condition():
                await changed.wait()
                changed.clear()
    except TimeoutError:
        raise AssertionError(f"waited {timeout}s for: {_describe(condition, what)}") from None
    finally:
        live.unsubscribe(changed)


def _describe(condition: Callable[..., object], what: str | Callable[[], str] | None) -> str:
    if callable(what):
        return what()
    if what:
        return what
    try:
        return inspect.getsource(condition).strip()
    except (OSError, TypeError):
        return getattr(condition, "__qualname__", repr(condition))


async def eventually[T](
    condition: Callable[[], T | Awaitable[T]],
    *,
    timeout: float = TIMEOUT,  # noqa: ASYNC109 (the polling's bound, not one call's)
    interval: float = INTERVAL,
    what: str | Callable[[], str] | None = None,
) -> T:
    """Poll `condition` (plain or async) until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return result  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout}s for: {_describe(condition, what)}")
        await asyncio.sleep(interval)


def eventually_sync[T](
    condition: Callable[[], T],
    *,
    timeout: float = TIMEOUT,
    interval: float = INTERVAL,
    what: str | Callable[[], str] | None = None,
) -> T:
    """`eventually` for code outside an event loop (threads, live servers, subprocesses)."""
    deadline = time.monotonic() + timeout
    while True:
        result = condition()
        if result:
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {timeout}s for: {_describe(condition, what)}")
        time.sleep(interval)

"""Waiting in browser tests for what the page does, never for a fixed time.

`tests/e2e/conftest.py` gives every page `HTMX_ACTIVITY`, run before any page script, so these
helpers can see what htmx is doing: the event streams it opened, the elements it has wired. Each waits
with Playwright's `wait_for_function` on the real condition, up to `TIMEOUT` milliseconds.
"""

from __future__ import annotations

from playwright.sync_api import Page

TIMEOUT = 15_000

HTMX_ACTIVITY = """
window.__htmxStreams = new Set();
window.__htmxWired = new WeakSet();
document.addEventListener("htmx:sseOpen", (event) => __htmxStreams.add(event.detail.source), true);
document.addEventListener("htmx:afterProcessNode", (event) => __htmxWired.add(event.target), true);
"""

# htmx puts these classes on an element while its request is in flight, while it swaps, while it settles.
_BUSY = ".htmx-request, .htmx-swapping, .htmx-settling"


def htmx_idle(page: Page, timeout: float = TIMEOUT) -> None:
    """No htmx request in flight and nothing being swapped or settled."""
    page.wait_for_function(f"() => !document.querySelector({_BUSY!r})", timeout=timeout)


def streams_closed(page: Page, timeout: float = TIMEOUT) -> None:
    """Every event stream htmx opened is closed (a run's stream closes at its `done` event)."""
    page.wait_for_function(
        "() => [...window.__htmxStreams].every(source => source.readyState === EventSource.CLOSED)",
        timeout=timeout,
    )
    htmx_idle(page, timeout)


def htmx_wired(page: Page, selector: str, timeout: float = TIMEOUT) -> None:
    """The element now matching `selector` has been processed by htmx: its triggers listen."""
    page.wait_for_function(
        "selector => { const element = document.querySelector(selector);"
        " return element !== null && window.__htmxWired.has(element); }",
        arg=selector,
        timeout=timeout,
    )


def painted(page: Page) -> None:
    """The browser has laid out and painted what just changed (two animation frames)."""
    page.evaluate("() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")

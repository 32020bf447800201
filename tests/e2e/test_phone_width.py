"""At a 390 px phone width no page of the product scrolls sideways, and the header keeps its controls on
one line: the brand, the navigation, Sign out and the theme switch side by side.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_approvals import ask_for_transfer
from tests.e2e.test_runs import demo, open_agent, send, wait_run
from tests.factories import make_user

pytestmark = pytest.mark.e2e

__all__ = ["demo"]  # the fixture, imported so pytest finds it here

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}


def sideways_overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0 when it does not scroll sideways)."""
    return page.evaluate("document.documentElement.scrollWidth - innerWidth")


def header_rows(page: Page) -> list[float]:
    """The vertical centre of each visible control of the header, one per control."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll(
                 '.topbar .brand, .topbar .nav a, .topbar .user-menu button, .topbar [data-theme-switch]'))
               .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0)
               .map(r => r.top + r.height / 2)"""
    )


def check_page(page: Page, screenshot, name: str) -> None:
    for size, label in ((PHONE, "390"), (DESKTOP, "desktop")):
        page.set_viewport_size(size)
        page.wait_for_timeout(50)  # a frame for the new layout
        screenshot(f"width-{name}-{label}")
        assert sideways_overflow(page) <= 0, (
            f"{name} at {size['width']} px scrolls sideways by {sideways_overflow(page)} px"
        )
        rows = header_rows(page)
        assert rows, "the header shows its controls"
        assert max(rows) - min(rows) < 12, f"{name}: the header's controls wrap onto more lines: {rows}"


def test_no_page_scrolls_sideways_on_a_phone(page: Page, demo: str, signed_in, screenshot):
    page.set_viewport_size(PHONE)
    signed_in(make_user(perms=["upload_files", "approve_actions", "view_reasoning"], staff=True))

    page.goto(f"{demo}/")
    expect(page.locator("article.card").first).to_be_visible()
    check_page(page, screenshot, "catalogue")

    # A conversation that waits for a decision shows its badge in the list of conversations.
    page.set_viewport_size(PHONE)
    ask_for_transfer(page, demo)
    page.goto(f"{demo}/conversations/")
    expect(page.locator(".badge-warn", has_text="Waiting for your decision")).to_be_visible()
    check_page(page, screenshot, "conversations")

    page.set_viewport_size(PHONE)
    open_agent(page, demo, "research-assistant")
    send(page, "Tell me about solar panels efficiency, in detail please.")
    wait_run(page)
    check_page(page, screenshot, "workspace")

    page.goto(f"{demo}/agents/no-such-agent/")
    check_page(page, screenshot, "not-found")

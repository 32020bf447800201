"""Browser tests: Debian's chromium driven by Playwright, against the ASGI live server."""

from __future__ import annotations

import os
import shutil

import pytest

from tests.factories import PASSWORD, make_user
from tests.support.browser import HTMX_ACTIVITY

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium") or "/usr/bin/chromium"
SCREENSHOTS = os.environ.get("AGENTS_UI_SCREENSHOTS")  # a folder: save a screenshot of each page checked


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args: dict) -> dict:
    return {
        **browser_type_launch_args,
        "executable_path": CHROMIUM,
        "args": [
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
        ],
    }


@pytest.fixture
def page(page):
    """Playwright's page, watched for what htmx does (the waits of tests/support/browser.py)."""
    page.add_init_script(HTMX_ACTIVITY)
    return page


@pytest.fixture
def signed_in(page, live_url):
    """A page signed in as an ordinary user with every agents permission."""

    def sign_in(user=None):
        user = user or make_user(perms=["upload_files", "approve_actions", "view_reasoning"])
        page.goto(f"{live_url}/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_url}/")
        return user

    return sign_in


@pytest.fixture
def screenshot(page):
    def take(name: str) -> None:
        if SCREENSHOTS:
            os.makedirs(SCREENSHOTS, exist_ok=True)
            page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}.png"), full_page=True)

    return take

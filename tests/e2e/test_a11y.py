"""An accessibility scan (axe-core, shipped inside axe-playwright-python, so it runs offline) of the pages
people use: no serious or critical violation, in the light and the dark theme, on a desktop and a
phone.
"""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import demo, open_agent, send, wait_run
from tests.factories import PASSWORD, make_user

pytestmark = pytest.mark.e2e

__all__ = ["demo"]  # the fixture, imported so pytest finds it here

AXE = Axe()
SIZES = {"desktop": {"width": 1400, "height": 900}, "phone": {"width": 390, "height": 844}}


def serious_violations(page: Page) -> list[str]:
    results = AXE.run(page).response
    return [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:5]}"
        for v in results["violations"]
        if v["impact"] in ("serious", "critical")
    ]


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("size", SIZES)
def test_the_product_pages_have_no_serious_accessibility_violation(
    page: Page, demo: str, signed_in, size: str, theme: str
):
    page.set_viewport_size(SIZES[size])
    page.emulate_media(color_scheme=theme)
    found: dict[str, list[str]] = {}

    page.goto(f"{demo}/accounts/login/")
    found["login"] = serious_violations(page)
    signed_in()
    found["catalogue"] = serious_violations(page)
    open_agent(page, demo, "research-assistant")
    found["empty workspace"] = serious_violations(page)
    send(page, "Tell me about solar panels efficiency.")
    wait_run(page)
    found["workspace with a conversation"] = serious_violations(page)
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain")).to_be_visible()
    found["why these controls"] = serious_violations(page)
    page.keyboard.press("Escape")
    if size == "phone":
        page.locator("[data-drawer-toggle]").click()
        expect(page.locator("#workspace-side")).to_be_visible()
        found["details drawer"] = serious_violations(page)
    open_agent(page, demo, "support-desk")
    found["support desk workspace"] = serious_violations(page)
    page.goto(f"{demo}/conversations/")
    found["conversations"] = serious_violations(page)
    bad = [f"{name}: {problem}" for name, problems in found.items() for problem in problems]
    assert not bad, "\n".join(bad)


def test_the_admin_pages_have_no_serious_accessibility_violation(page: Page, demo: str):
    admin = make_user(username="root", staff=True, superuser=True)
    page.goto(f"{demo}/admin/login/")
    page.fill("#id_username", admin.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(f"{demo}/admin/")
    found = {"admin index": serious_violations(page)}
    page.goto(f"{demo}/admin/agents_ui/agentendpoint/")
    found["admin endpoints"] = serious_violations(page)
    bad = [f"{name}: {problem}" for name, problems in found.items() for problem in problems]
    assert not bad, "\n".join(bad)

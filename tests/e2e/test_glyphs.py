"""What the page shows is drawn or written, never a character its fonts may lack (an empty box): the
A2UI gallery's icons and media links, and the workspace around them, read only the allowed characters.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import demo, open_agent, send, wait_run
from tests.test_glyphs import ALLOWED

pytestmark = pytest.mark.e2e

__all__ = ["demo"]  # the fixture, imported so pytest finds it here


def stray_characters(page: Page) -> list[str]:
    text = page.evaluate("document.body.innerText")
    return sorted({ch for ch in text if ord(ch) > 127 and ch not in ALLOWED})


@pytest.mark.parametrize("width", [1400, 390])
def test_icons_and_media_links_are_drawn_not_glyphs(page: Page, demo: str, signed_in, screenshot, width):
    page.set_viewport_size({"width": width, "height": 900})
    signed_in()
    open_agent(page, demo, "booking-desk")
    send(page, "show me every component")
    wait_run(page)
    form = page.locator("form.a2ui-surface").last
    expect(form.locator('svg[data-a2ui="Icon"][aria-label="star"]')).to_be_visible()
    expect(form.locator('svg[data-a2ui="Icon"][aria-label="mail"]')).to_be_visible()
    expect(form.locator('[data-a2ui="Video"] a svg')).to_be_visible()
    expect(form.locator('[data-a2ui="AudioPlayer"] a svg')).to_be_visible()
    assert stray_characters(page) == []
    form.locator('[data-a2ui="Video"]').scroll_into_view_if_needed()
    screenshot(f"glyphs-a2ui-gallery-{width}")

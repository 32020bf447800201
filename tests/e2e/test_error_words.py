"""An error is a sentence for people; its technical detail (the socket error, the SDK's code) is folded
away behind "Technical detail", and only staff get it: on the catalogue and on the workspace's banners.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.e2e

TECHNICAL = ("Errno", "refused", "(unreachable)", "capability discovery")
PHONE = {"width": 390, "height": 844}


def down_agent() -> None:
    cache.clear()
    make_endpoint(name="Down agent", slug="down", base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)


def shown_text(page: Page, selector: str) -> str:
    """What a person reads there: a closed <details> shows its summary only."""
    return page.locator(selector).inner_text()


@pytest.mark.parametrize("staff", [False, True], ids=["person", "staff"])
def test_an_unreachable_agent_is_said_in_words_with_the_detail_folded_for_staff(
    page: Page, live_url: str, signed_in, screenshot, staff: bool
):
    down_agent()
    signed_in(make_user(staff=staff))
    for where, selector in (("/agents/down/", "[data-banner=unreachable]"), ("/", "#agent-down")):
        page.goto(f"{live_url}{where}")
        expect(page.locator(selector)).to_be_visible()
        text = shown_text(page, selector)
        for word in TECHNICAL:
            assert word not in text, f"{where}: {word!r} inline in {text!r}"
        detail = page.locator(f"{selector} details[data-technical]")
        if not staff:
            expect(detail).to_have_count(0)
            continue
        expect(detail.locator("summary")).to_have_text("Technical detail")
        detail.locator("summary").click()
        expect(detail.locator("pre")).to_contain_text("could not be reached")
        page.set_viewport_size(PHONE)
        screenshot(f"error-words{where.replace('/', '-')}staff-390")
        page.set_viewport_size({"width": 1400, "height": 900})
        screenshot(f"error-words{where.replace('/', '-')}staff-desktop")
    if staff:  # the declaration panel (under “Why these controls”) says the same, in words first
        page.goto(f"{live_url}/agents/down/")
        text = page.locator("details.raw").first.locator("p").text_content()
        assert "Nothing declared." in text and "Errno" not in text

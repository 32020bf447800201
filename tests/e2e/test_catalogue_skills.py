"""An A2A agent's catalogue card names its skills, as the workspace's skill chooser does, and the
names wrap inside the card on a phone."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import demo, open_agent

pytestmark = pytest.mark.e2e

__all__ = ["demo"]  # the fixture, imported so pytest finds it here


@pytest.mark.parametrize("width", [1400, 390])
def test_the_catalogue_card_names_the_skills_the_workspace_offers(
    page: Page, demo: str, signed_in, screenshot, width: int
):
    page.set_viewport_size({"width": width, "height": 900})
    signed_in()
    open_agent(page, demo, "trip-planner")
    offered = page.locator("[data-control=skills] select option:not([value=''])").all_inner_texts()
    assert offered == ["Plan a trip", "Packing list from a file", "Book a hotel"]

    page.goto(f"{demo}/")
    badge = page.locator("[data-agent=trip-planner] .badge-skills")
    expect(badge).to_have_text(f"3 skills: {', '.join(offered)}")
    card = page.locator("[data-agent=trip-planner]").bounding_box()
    box = badge.bounding_box()
    assert box["x"] + box["width"] <= card["x"] + card["width"], "the names wrap inside the card"
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    badge.scroll_into_view_if_needed()
    screenshot(f"catalogue-skills-{width}")

"""An agent that declares A2UI under the name A2UI's own specification gives the object
(`custom.a2uiServerCapabilities`) is read as speaking A2UI: its very first run is offered the catalogue.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support.shaped_agent import A2UI_CATALOG, ShapedAgentServer

pytestmark = pytest.mark.e2e


@pytest.fixture
def shaped() -> Iterator[ShapedAgentServer]:
    server = ShapedAgentServer().start()
    yield server
    server.stop()


def test_a2ui_declared_by_its_spec_name_is_offered_the_catalogue_on_the_first_run(
    page: Page, live_url: str, shaped: ShapedAgentServer, signed_in, screenshot
):
    cache.clear()
    make_endpoint(slug="spec-a2ui", name="Spec A2UI", base_url=shaped.url_for("a2ui-spec"))
    signed_in()
    open_agent(page, live_url, "spec-a2ui")
    send(page, "Show me a form")
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        f"I was offered the A2UI catalogue {A2UI_CATALOG}", timeout=TIMEOUT
    )
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain")).to_contain_text("custom.a2uiServerCapabilities declares A2UI v0.9")

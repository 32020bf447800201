"""An A2A agent's tool use (sent as Google ADK's A2A exposure sends it) shown as the product's tool
cards: the call while it runs, then its result, and the same after a reload."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support.a2a_agent import A2ATestAgent

pytestmark = pytest.mark.e2e


@pytest.fixture
def a2a_agent() -> Iterator[A2ATestAgent]:
    server = A2ATestAgent().start()
    yield server
    server.stop()


@pytest.mark.parametrize("width", [1440, 390])
def test_an_a2a_agents_tool_call_shows_as_a_step_live_and_after_a_reload(
    page: Page, live_url: str, a2a_agent: A2ATestAgent, signed_in, screenshot, width: int
):
    cache.clear()
    page.set_viewport_size({"width": width, "height": 900})
    make_endpoint(slug="weather", name="Weather", protocol=AgentEndpoint.Protocol.A2A, base_url=a2a_agent.url)
    signed_in()
    open_agent(page, live_url, "weather")
    send(page, "weather")
    call = last_run(page).locator("[data-tool-call=get_weather]")
    expect(call).to_be_visible(timeout=TIMEOUT)  # live, before the run ends
    wait_run(page)
    expect(last_run(page)).to_contain_text("It is 21 degrees in Paris.")

    def check() -> None:
        call = last_run(page).locator("[data-tool-call=get_weather]")
        expect(call).to_have_count(1)
        expect(call).to_contain_text("done")
        call.locator("summary").first.click()
        io = call.locator(".tool-io")
        expect(io).to_contain_text("<Paris>")  # escaped: shown as text
        expect(io).to_contain_text('"temperature": 21')

    check()
    screenshot(f"a2a-tool-step-{width}")
    page.reload()
    check()
    screenshot(f"a2a-tool-step-reloaded-{width}")

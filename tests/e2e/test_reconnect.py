"""A stream cut while the answer goes on (the network away, in the embedded shape: the browser talks
to the live server through a proxy that cuts every connection and refuses new ones): the page says
"Reconnecting…" for as long as it lasts, never an error, and once the network is back the answer is
whole, every word once. tests/e2e/test_scale_out.py does it with a web process killed instead."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.factories import make_endpoint
from tests.support.paced_agent import PacedAgent, word
from tests.support.round_robin_proxy import RoundRobinProxy

pytestmark = pytest.mark.e2e

PARTS = 60
TIMEOUT = 30_000


@pytest.fixture
def agent() -> Iterator[PacedAgent]:
    server = PacedAgent().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def network(live_url: str) -> Iterator[RoundRobinProxy]:
    proxy = RoundRobinProxy([int(live_url.rsplit(":", 1)[1])]).start()
    try:
        yield proxy
    finally:
        proxy.stop()


@pytest.mark.parametrize("width", [1280, 390])
def test_while_the_stream_is_cut_the_page_says_reconnecting_and_the_answer_ends_whole(
    page: Page, signed_in, network, agent, screenshot, width
):
    page.set_viewport_size({"width": width, "height": 844 if width < 600 else 900})
    endpoint = make_endpoint(name="Paced agent", slug="paced", base_url=agent.base(PARTS, 0.1))
    signed_in()
    page.goto(f"{network.url}/agents/{endpoint.slug}/")  # the sign-in's cookie holds for any port
    page.fill("#message", "Count for me, slowly")
    page.locator("[data-composer] button.button-primary").click()
    run = page.locator("#transcript section.run").last
    text = run.locator(".msg-assistant .msg-text").first
    expect(text).to_contain_text(word(3).strip(), timeout=TIMEOUT)

    network.refuse()
    note = run.locator("[data-reconnecting]")
    expect(note).to_have_text(
        "Reconnecting… The answer goes on meanwhile, and shows here once the connection is back.",
        timeout=TIMEOUT,
    )
    expect(note).to_have_attribute("role", "status")
    expect(run.locator("[data-run-error], .alert-error")).to_have_count(0)
    screenshot(f"reconnecting-{width}")

    network.accept()
    expect(run.locator(".run-status")).to_have_attribute("data-run-status", "completed", timeout=TIMEOUT)
    expect(note).to_have_text("")
    words = text.inner_text().split()
    assert words == [word(n).strip() for n in range(PARTS)]
    assert len(agent.runs) == 1

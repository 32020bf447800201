import pytest as _p
pytestmark = _p.mark.filterwarnings("ignore:Using None as the right-hand side of an exact lookup on JSONField")
import pytest
from django.core.cache import cache
from playwright.sync_api import expect
from agents_ui.demo import agui_agents, external_agents
from agents_ui.demo.registry import register_demo_agents


@pytest.fixture
def demo(live_url):
    cache.clear()
    agui_agents.reset_state(); external_agents.reset_state()
    register_demo_agents(live_url)
    yield live_url


def test_explore(page, demo, signed_in, settings):
    signed_in()
    page.goto(f"{demo}/agents/research-assistant/")
    page.fill("#message", "What about solar panels efficiency?")
    page.click("button[type=submit].button-primary")
    expect(page.locator(".msg-assistant")).to_contain_text("Here is what I found", timeout=10000)
    expect(page.locator(".run-status[data-run-status=completed]")).to_be_attached(timeout=10000)
    print(page.locator("#transcript").inner_html())

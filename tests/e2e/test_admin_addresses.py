"""The admin in a browser refuses an agent address inside, in any spelling, with the reason by the field."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint
from tests.e2e.test_admin import admin_page, message  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e


@pytest.fixture
def production_addresses(settings):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False


def fill(page: Page, live_url: str, base_url: str, signing_keys_url: str = "") -> None:
    page.goto(f"{live_url}/admin/agents_ui/agentendpoint/add/")
    page.locator("#id_name").press_sequentially("Internal probe")
    page.select_option("#id_protocol", "a2a")
    page.fill("#id_base_url", base_url)
    if signing_keys_url:
        page.fill("#id_signing_keys_url", signing_keys_url)
    page.select_option("#id_auth_kind", "none")
    page.click("input[name=_save]")


def test_an_address_inside_is_refused_by_its_field(
    admin_page,  # noqa: F811 (the fixture)
    live_url,
    production_addresses,
    screenshot,
):
    page = admin_page
    fill(page, live_url, "http://2130706433/agent", signing_keys_url="http://[::ffff:169.254.169.254]/keys")
    base = page.locator(".field-base_url .errorlist")
    expect(base).to_have_text(
        "2130706433 names 127.0.0.1, a loopback address: this server never sends requests there. "
        "Use the agent's public address (loopback and private networks are allowed only with "
        "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES on)."
    )
    expect(page.locator(".field-signing_keys_url .errorlist")).to_have_text(
        "::ffff:169.254.169.254 is a cloud metadata address: this server never sends requests there. "
        "Use the agent's public address."
    )
    base.scroll_into_view_if_needed()
    screenshot("admin-refused-address")
    page.set_viewport_size({"width": 390, "height": 844})
    base.scroll_into_view_if_needed()
    screenshot("phone-admin-refused-address")
    assert not AgentEndpoint.objects.filter(name="Internal probe").exists()

    page.set_viewport_size({"width": 1280, "height": 900})
    fill(page, live_url, "https://agent.example.com/a2a")
    message(page, "was added successfully")

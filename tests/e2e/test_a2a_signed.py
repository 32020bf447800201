"""Signed Agent Cards in a browser: a card signed by the admin's key shows "Signed" on its catalogue card
and, in "Why these controls", the key and algorithm; its extended card, asked with the credential,
adds a skill to the chooser. A card changed after signing, where the admin requires a signature, makes
the agent unusable: the catalogue says why, the workspace refuses with its composer off, after a
reload too (tests/a2a/test_card_signatures.py checks the rules one by one)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint
from tests.factories import make_endpoint
from tests.support.a2a_agent import A2ATestAgent
from tests.support.card_signing import SigningKey, retitled, with_extra_skill

pytestmark = pytest.mark.e2e

KEY = SigningKey("release-2026")


@pytest.fixture
def agents() -> Iterator[tuple[A2ATestAgent, A2ATestAgent]]:
    # The extended card is signed too, its extra skill part of what is signed.
    signed = A2ATestAgent(card_edit=KEY.sign, extended_edit=_signed_with_ledger).start()
    tampered = A2ATestAgent(card_edit=KEY.sign_then(retitled)).start()
    yield signed, tampered
    signed.stop()
    tampered.stop()


def _signed_with_ledger(card) -> None:
    with_extra_skill(card)
    KEY.sign(card)


def register(signed: A2ATestAgent, tampered: A2ATestAgent) -> None:
    cache.clear()
    make_endpoint(
        slug="ledger",
        name="Ledger",
        protocol=AgentEndpoint.Protocol.A2A,
        base_url=signed.url,
        auth_kind=AgentEndpoint.AuthKind.HEADER,
        auth_header_name="X-Api-Key",
        credential="extended-secret",
        signing_keys=KEY.key_set,
        signer_name="Ledger Ltd",
        signature_policy=AgentEndpoint.SignaturePolicy.REQUIRE,
    )
    make_endpoint(
        slug="tampered",
        name="Tampered",
        protocol=AgentEndpoint.Protocol.A2A,
        base_url=tampered.url,
        signing_keys=KEY.key_set,
        signature_policy=AgentEndpoint.SignaturePolicy.REQUIRE,
    )


@pytest.mark.parametrize("width", [1440, 390])
def test_a_signed_card_is_shown_signed_and_a_tampered_one_refused(
    page: Page, live_url: str, agents, signed_in, screenshot, width: int
):
    register(*agents)
    page.set_viewport_size({"width": width, "height": 900})
    signed_in()

    page.goto(f"{live_url}/")
    ledger = page.locator("[data-agent=ledger]")
    expect(ledger.locator(".badges")).to_contain_text("Signed")
    expect(ledger.locator(".badges")).to_contain_text("Ledger lookup")
    tampered = page.locator("[data-agent=tampered]")
    expect(tampered).to_have_attribute("data-status", "untrusted")
    expect(tampered.locator(".badges")).to_contain_text("Signature does not verify")
    expect(tampered.locator(".status")).to_contain_text(
        "Signature required: its card's signature does not verify"
    )
    screenshot(f"a2a-signed-catalogue-{width}")

    # The signed agent: usable, its extended card's skill in the chooser, the key in explain.
    page.goto(f"{live_url}/agents/ledger/")
    expect(page.locator("[data-skill-select] option[value=ledger]")).to_have_count(1)
    expect(page.locator("#message")).to_be_enabled()
    page.locator("[data-open-explain]").click()
    trust = page.locator("#explain [data-signature=signed]")
    expect(trust).to_be_visible()
    expect(trust).to_contain_text("Signed by key release-2026 (Ledger Ltd)")
    expect(trust).to_contain_text("ES256")
    expect(trust.locator("[data-extended-card=read]")).to_contain_text("Signed")
    trust.scroll_into_view_if_needed()
    screenshot(f"a2a-signed-explain-{width}")

    # The tampered one: refused, with a sentence; the composer is off; the same after a reload.
    for _ in range(2):
        page.goto(f"{live_url}/agents/tampered/")
        expect(page.locator("[data-banner=untrusted]")).to_contain_text("This agent cannot be used.")
        expect(page.locator("[data-banner=untrusted]")).to_contain_text("its signature does not verify")
        expect(page.locator("#message")).to_be_disabled()
        expect(page.locator("[data-composer] [data-send]")).to_be_disabled()
        page.reload()
    screenshot(f"a2a-signed-refused-{width}")
    page.locator("[data-open-explain]").click()
    expect(page.locator("#explain [data-signature=invalid]")).to_contain_text("does not match the card")
    screenshot(f"a2a-signed-refused-explain-{width}")

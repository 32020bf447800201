from playwright.sync_api import expect

from tests.factories import make_endpoint


def test_catalogue_lists_agents_and_refreshes_a_card_with_htmx(page, live_url, signed_in, screenshot):
    make_endpoint(name="Research assistant", slug="research", base_url="https://research.example.test/agent")
    csp_violations: list[str] = []
    page.on(
        "console",
        lambda msg: csp_violations.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    signed_in()

    card = page.locator("[data-agent=research]")
    expect(card).to_contain_text("Research assistant")
    expect(card).to_contain_text("research.example.test")
    before = card.locator("[data-checked]").get_attribute("data-checked")
    screenshot("catalogue")

    with page.expect_response(lambda r: "/card/" in r.url and r.status == 200):
        card.get_by_role("button", name="Refresh").click()
    # The card was swapped in place by htmx: a new element with a newer check time.
    expect(page.locator("[data-agent=research] [data-checked]")).not_to_have_attribute(
        "data-checked", before or ""
    )
    assert page.evaluate("typeof htmx") == "object"
    assert csp_violations == []

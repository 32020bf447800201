from playwright.sync_api import expect

from agents_ui.demo.registry import DEMO_AGENTS, register_demo_agents
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
    before = card.get_attribute("data-checked")
    screenshot("catalogue")

    with page.expect_response(lambda r: "/card/" in r.url and r.status == 200):
        card.get_by_role("button", name="Refresh").click()
    # The card was swapped in place by htmx: a new element with a newer check time.
    expect(page.locator("[data-agent=research]")).not_to_have_attribute("data-checked", before or "")
    assert page.evaluate("typeof htmx") == "object"
    assert csp_violations == []


# What each demo agent's card offers to the catalogue filters, derived from its declaration
# (see tests/e2e/test_workspace.py for the controls): PDFs = an upload control accepting
# application/pdf; approvals = the approval workflow; sub-agents = a non-empty multiAgent.subagents.
DEMO_STATUS = {"legacy": "none", "future-agent": "newer-client"}
ACCEPTS_PDFS = {"document-reviewer", "support-desk"}
ASKS_BEFORE_ACTING = {"operations", "support-desk"}
HAS_SUBAGENTS = {"orchestrator"}


def visible_agents(page) -> set[str]:
    return set(
        page.eval_on_selector_all(
            "#agent-cards [data-agent]", "cards => cards.filter(c => !c.hidden).map(c => c.dataset.agent)"
        )
    )


def test_catalogue_shows_every_demo_agent_with_its_status_and_filters_by_capability(
    page, live_url, signed_in, screenshot
):
    slugs = {endpoint.slug for endpoint in register_demo_agents(live_url)}
    signed_in()

    assert visible_agents(page) == slugs == {agent.slug for agent in DEMO_AGENTS}
    for slug in slugs:
        expect(page.locator(f"[data-agent={slug}]")).to_have_attribute(
            "data-status", DEMO_STATUS.get(slug, "declared")
        )
    expect(page.locator("[data-agent=future-agent]")).to_contain_text("Needs a newer client")
    expect(page.locator("[data-agent=support-desk] .badges")).to_contain_text("Accepts PDF, PNG up to 5 MB")
    expect(page.locator("[data-agent=orchestrator] .badges")).to_contain_text("4 sub-agents")
    expect(page.locator("[data-agent=legacy] .badges")).to_have_count(0)
    screenshot("catalogue-demo-agents")

    chips = page.locator("[data-filter-bar]")
    chips.get_by_role("button", name="Accepts PDFs").click()
    assert visible_agents(page) == ACCEPTS_PDFS
    chips.get_by_role("button", name="Asks before acting").click()
    assert visible_agents(page) == ACCEPTS_PDFS & ASKS_BEFORE_ACTING
    expect(page.locator("[data-filter-empty]")).to_be_hidden()

    chips.get_by_role("button", name="Accepts PDFs").click()  # off again
    assert visible_agents(page) == ASKS_BEFORE_ACTING
    chips.get_by_role("button", name="Has sub-agents").click()
    assert visible_agents(page) == set()
    expect(page.locator("[data-filter-empty]")).to_be_visible()

    chips.get_by_role("button", name="Asks before acting").click()
    assert visible_agents(page) == HAS_SUBAGENTS
    expect(chips.get_by_role("button", name="Has sub-agents")).to_have_attribute("aria-pressed", "true")

"""Compare in the browser: from the catalogue, one message to an AG-UI, an external and an A2A demo
agent, their answers side by side at desktop and phone width, through a reload while they stream;
an approval decided in its pane; "Continue with this one"; a rating, shown in the admin per pair; and
two real framework agents (tests/interop) beside the demo A2A agent."""

from __future__ import annotations

import os

import pytest
from playwright.sync_api import Page, expect

from agents_ui.comparisons import ComparePane, CompareRating, CompareSession
from agents_ui.models import Run
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_runs import TIMEOUT, demo
from tests.factories import PASSWORD, make_endpoint, make_user
from tests.interop.fixtures import peer_server

pytestmark = pytest.mark.e2e
__all__ = ["demo", "peer_server"]  # the fixtures, imported so pytest finds them here

ACROSS = ["research-assistant", "support-desk", "trip-planner"]


def both_widths(page: Page, screenshot, name: str) -> None:
    for width, suffix in ((1280, ""), (390, "-phone")):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(f"{name}{suffix}")
    page.set_viewport_size({"width": 1280, "height": 900})


def start_comparison(page: Page, base: str, agents: list[str], text: str) -> None:
    """From the catalogue's "Compare": the agents ticked, the message written, sent to all."""
    page.goto(f"{base}/")
    page.locator("[data-compare-link]").click()
    expect(page.locator("[data-compare-form]")).to_be_visible()
    for slug in agents:
        page.locator(f"input[name=agents][value={slug}]").check()
    page.fill("#compare-content", text)
    page.locator("[data-compare-send]").click()
    expect(page.locator("#compare-panes")).to_be_visible()


def pane(page: Page, slug: str):
    return page.locator(f"[data-pane={slug}]")


def wait_pane(page: Page, slug: str, status: str = "completed") -> None:
    expect(pane(page, slug).locator(".run-status").last).to_have_attribute(
        "data-run-status", status, timeout=TIMEOUT
    )
    expect(pane(page, slug).locator("[data-figures]")).to_have_attribute(
        "data-figures", "done", timeout=TIMEOUT
    )


def test_three_protocols_side_by_side_through_a_reload_then_continue_and_rate(
    page: Page, demo: str, signed_in, screenshot
):
    user = signed_in()
    page.set_viewport_size({"width": 1280, "height": 900})
    start_comparison(page, demo, ACROSS, "Lisbon")
    expect(page.locator(".compare-pane")).to_have_count(3)
    # A reload while they answer: the same page, every answer still coming.
    url = page.url
    page.reload()
    assert page.url == url
    for slug in ACROSS:
        wait_pane(page, slug)
        expect(pane(page, slug).locator(".msg-assistant").first).to_be_visible()
        expect(pane(page, slug).locator("[data-figure=first-word]")).not_to_have_text("no words")
        expect(pane(page, slug).locator("[data-figure=total]")).to_contain_text(" s")
    # The diff: declared and shown, each decision with its reasons.
    diff = page.locator("[data-compare-diff]")
    expect(diff.locator("tr[data-differs]").first).to_be_visible()
    row = diff.locator("tr[data-diff=reasoning]")
    expect(row).to_be_visible()
    row.locator("td").first.locator("summary").click()
    expect(row.locator("td").first.locator(".reasons li").first).to_be_visible()
    # The research assistant reasons and calls its tools: in its own pane, with its own controls.
    research = pane(page, "research-assistant")
    expect(research.locator(".reasoning")).to_have_count(1)
    expect(research.locator("[data-figure=tool-calls]")).not_to_have_text("0")
    expect(research.locator("[data-figure=tokens]")).to_be_visible()
    both_widths(page, screenshot, "compare")
    # On a phone the panes are swiped through inside the page: the page itself never scrolls sideways.
    page.set_viewport_size({"width": 390, "height": 844})
    expect(page.locator("[data-swipe-hint]")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    page.locator("[data-swipe-hint]").scroll_into_view_if_needed()
    if SCREENSHOTS:  # what a phone shows of the answers, as the README's phone screenshots are taken
        page.screenshot(path=os.path.join(SCREENSHOTS, "compare-phone-panes.png"))
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(page.locator("[data-swipe-hint]")).to_be_hidden()

    # The same page in a second tab shows everything that happened.
    other = page.context.new_page()
    other.goto(url)
    expect(other.locator(".compare-pane")).to_have_count(3)
    expect(other.locator("[data-pane=support-desk] .msg-assistant").first).to_be_visible()
    other.close()

    # "This one is better": recorded, with the others.
    pane(page, "support-desk").locator("[data-rate]").click()
    expect(pane(page, "support-desk").locator("[data-rated=winner]")).to_be_visible()
    rating = CompareRating.objects.select_related("winner").get()
    assert rating.user == user and rating.winner.slug == "support-desk"
    assert sorted(rating.others.values_list("slug", flat=True)) == ["research-assistant", "trip-planner"]
    page.reload()
    expect(pane(page, "support-desk").locator("[data-rated=winner]")).to_be_visible()
    expect(pane(page, "research-assistant").locator("[data-rate]")).to_be_visible()

    # Continue with this one: the pane's conversation, with what it saw, goes on as any other.
    session = CompareSession.objects.get(user=user)
    pane(page, "research-assistant").get_by_role("button", name="Continue with this one").click()
    expect(page.locator("[data-composer]")).to_be_visible()
    expect(page.locator("#transcript .msg-user").first).to_contain_text("Lisbon")
    expect(page.locator("#transcript section.run")).to_have_count(1)
    page.fill("#message", "And in winter?")
    page.locator("[data-composer] button.button-primary").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    expect(page.locator("#transcript section.run .run-status").last).to_have_attribute(
        "data-run-status", "completed", timeout=TIMEOUT
    )
    continued = ComparePane.objects.get(session=session, conversation__endpoint__slug="research-assistant")
    assert continued.continued_at is not None
    assert Run.objects.filter(conversation=continued.conversation).count() == 2
    page.goto(f"{demo}/conversations/")
    expect(page.locator(f"[data-conversation='{continued.conversation_id}']")).to_be_visible()
    for other_pane in ComparePane.objects.filter(session=session).exclude(pk=continued.pk):
        expect(page.locator(f"[data-conversation='{other_pane.conversation_id}']")).to_have_count(0)

    # The admin shows, per pair of agents, how often each was preferred.
    admin = make_user(superuser=True)
    page.context.clear_cookies()
    page.goto(f"{demo}/admin/login/")
    page.fill("#id_username", admin.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.goto(f"{demo}/admin/agents_ui/comparerating/")
    pairs = page.locator("[data-preference-pairs]")
    expect(
        pairs.locator("[data-pair='research-assistant|support-desk'] [data-wins=support-desk]")
    ).to_have_text("1")
    expect(
        pairs.locator("[data-pair='research-assistant|support-desk'] [data-wins=research-assistant]")
    ).to_have_text("0")
    expect(pairs.locator("tr[data-pair]")).to_have_count(2)
    screenshot("compare-admin")


def test_an_approval_is_decided_in_its_pane_and_files_are_offered_only_where_all_take_them(
    page: Page, demo: str, signed_in, screenshot
):
    signed_in()
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{demo}/compare/")
    # Files: the picker follows the choice (htmx redraws the files' row).
    page.locator("input[name=agents][value=document-reviewer]").check()
    page.locator("input[name=agents][value=operations]").check()
    expect(page.locator("#compare-files")).to_have_attribute("data-upload", "off")
    expect(page.locator("[data-upload-off]")).to_contain_text("Operations Agent takes none")
    screenshot("compare-picker")
    page.locator("input[name=agents][value=document-reviewer]").uncheck()
    page.locator("input[name=agents][value=planner]").check()
    page.fill("#compare-content", "Pay the vendor 120 euros for the chairs")
    page.locator("[data-compare-send]").click()
    operations = pane(page, "operations")
    expect(operations.locator(".run-status").first).to_have_attribute(
        "data-run-status", "interrupted", timeout=TIMEOUT
    )
    card = operations.locator("form[data-approval-form]")
    expect(card).to_be_visible()
    wait_pane(page, "planner")
    both_widths(page, screenshot, "compare-approval")
    card.get_by_role("button", name="Send decision").click()
    expect(operations.locator("section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_pane(page, "operations")
    # After a reload, the decision and the resumed answer are there.
    page.reload()
    expect(pane(page, "operations").locator("section.run")).to_have_count(2)
    expect(pane(page, "operations").locator("[data-decided]").first).to_be_visible()


def test_a_person_cannot_compare_an_agent_they_may_not_use(page: Page, demo: str, signed_in):
    signed_in()
    make_endpoint(name="Hidden", slug="hidden-agent", enabled=False)
    page.goto(f"{demo}/compare/?agents=hidden-agent&agents=planner")
    expect(page.locator("input[name=agents][value=hidden-agent]")).to_have_count(0)
    expect(page.locator("input[name=agents][value=planner]")).to_be_checked()


@pytest.mark.skipif(os.environ.get("AGENTS_UI_INTEROP") != "1", reason="interop peers: AGENTS_UI_INTEROP=1")
def test_two_real_framework_agents_beside_an_a2a_agent(
    page: Page, demo: str, signed_in, peer_server, screenshot
):
    for peer in ("pydantic-ai", "langgraph"):
        make_endpoint(
            name=f"Interop {peer}", slug=f"interop-{peer}", base_url=peer_server(peer).url("default")
        )
    signed_in()
    page.set_viewport_size({"width": 1280, "height": 900})
    agents = ["interop-pydantic-ai", "interop-langgraph", "trip-planner"]
    start_comparison(page, demo, agents, "Lisbon")
    expect(page.locator(".compare-pane")).to_have_count(3)
    page.reload()
    for slug in agents:
        wait_pane(page, slug)
        expect(pane(page, slug).locator(".msg-assistant").first).to_be_visible()
        expect(pane(page, slug).locator("[data-figure=first-word]")).not_to_have_text("no words")
    expect(page.locator("[data-compare-diff] tr[data-differs]").first).to_be_visible()
    both_widths(page, screenshot, "compare-interop")


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_compare_pages_fit_a_phone_and_have_no_serious_accessibility_violation(
    page: Page, demo: str, signed_in, screenshot, theme: str
):
    from tests.e2e.test_a11y import SIZES, serious_violations
    from tests.e2e.test_phone_width import check_page

    page.emulate_media(color_scheme=theme)
    signed_in()
    found: dict[str, list[str]] = {}
    page.goto(f"{demo}/compare/?agents=research-assistant&agents=operations")
    check_page(page, screenshot, f"compare-picker-{theme}")
    for size in SIZES:
        page.set_viewport_size(SIZES[size])
        found[f"picker, {size}"] = serious_violations(page)
    page.fill("#compare-content", "Pay the vendor 120 euros for the chairs")
    page.locator("[data-compare-send]").click()
    wait_pane(page, "research-assistant")
    expect(pane(page, "operations").locator("form[data-approval-form]")).to_be_visible(timeout=TIMEOUT)
    check_page(page, screenshot, f"compare-session-{theme}")
    for size in SIZES:
        page.set_viewport_size(SIZES[size])
        found[f"comparison, {size}"] = serious_violations(page)
    bad = [f"{name}: {problem}" for name, problems in found.items() for problem in problems]
    assert not bad, "\n".join(bad)


def test_a_reload_mid_answer_goes_on_streaming_and_one_pane_can_be_stopped(
    page: Page, demo: str, signed_in, settings
):
    settings.AGENTS_UI_DEMO_PACING = 0.05
    signed_in()
    page.set_viewport_size({"width": 1280, "height": 900})
    start_comparison(page, demo, ["research-assistant", "planner"], "Tell me about solar panels efficiency.")
    research = pane(page, "research-assistant")
    expect(research.locator(".run-status").first).to_have_attribute(
        "data-run-status", "running", timeout=TIMEOUT
    )
    page.reload()
    # Still answering after the reload: the pane's stream picks up where the run is.
    expect(research.locator("[data-figures]")).to_have_attribute("data-figures", "live")
    wait_pane(page, "research-assistant")
    wait_pane(page, "planner")
    expect(research.locator(".msg-assistant").first).to_contain_text("rooftop panels")

    start_comparison(page, demo, ["research-assistant", "planner"], "And wind turbines?")
    research = pane(page, "research-assistant")
    stop = research.locator("[data-pane-stop] button")
    expect(stop).to_be_visible(timeout=TIMEOUT)
    stop.click()
    wait_pane(page, "research-assistant", "cancelled")
    wait_pane(page, "planner")
    expect(research.locator("[data-pane-stop]")).to_have_count(0)

"""The everyday chat actions and truthful records, in the browser, on a desktop and on a phone."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Conversation, Message, Run
from tests.e2e.test_runs import TIMEOUT, demo, last_run, open_agent, send, wait_run  # noqa: F401
from tests.factories import make_user

pytestmark = pytest.mark.e2e

SCREENS = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


@pytest.fixture(params=list(SCREENS))
def screen(request, page: Page) -> str:
    page.set_viewport_size(SCREENS[request.param])
    return request.param


def test_regenerate_replaces_the_last_answer(page: Page, demo: str, signed_in, screen, screenshot):  # noqa: F811
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    first = Run.objects.get()
    button = last_run(page).get_by_role("button", name="Regenerate")
    expect(button).to_be_visible()
    expect(last_run(page)).to_contain_text("replaces this answer")
    screenshot(f"chat-actions-regenerate-{screen}")
    button.click()
    expect(last_run(page)).not_to_have_attribute("data-run", str(first.pk), timeout=TIMEOUT)
    wait_run(page)
    expect(page.locator("#transcript section.run")).to_have_count(1)
    expect(page.locator("#transcript .msg-user")).to_have_count(1)
    first.refresh_from_db()
    assert first.superseded_at is not None
    assert Run.objects.filter(superseded_at__isnull=True).count() == 1


def test_editing_a_message_continues_the_thread_from_there(page: Page, demo: str, signed_in, screen):  # noqa: F811
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    send(page, "And solar panels?")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    first_message = page.locator("#transcript .msg-user").first
    first_message.locator(".msg-edit > summary").click()
    first_message.locator("textarea").fill("What is a wind turbine?")
    first_message.get_by_role("button", name="Send again").click()
    expect(page.locator("#transcript .msg-user")).to_have_count(1, timeout=TIMEOUT)
    wait_run(page)
    users = page.locator("#transcript .msg-user")
    expect(users).to_have_count(1)
    expect(users.first).to_contain_text("What is a wind turbine?")
    expect(users.first).to_contain_text("edited")
    expect(page.locator("#transcript")).not_to_contain_text("And solar panels?")
    kept = Message.objects.filter(superseded_at__isnull=True, role="user")
    assert [m.content for m in kept] == ["What is a wind turbine?"]


def test_feedback_shows_after_a_reload_and_changes(page: Page, demo: str, signed_in, screen):  # noqa: F811
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    last_run(page).locator("form.feedback").get_by_role("button", name="Helpful", exact=True).click()
    expect(last_run(page).locator(".feedback-done")).to_have_text("Thanks: marked helpful.")
    page.reload()
    form = last_run(page).locator("form.feedback")
    expect(form.get_by_role("button", name="Helpful", exact=True)).to_have_attribute("aria-pressed", "true")
    form.get_by_role("button", name="Not helpful").click()
    expect(last_run(page).locator("form.feedback")).to_have_attribute("data-feedback", "down")
    page.reload()
    expect(last_run(page).locator("form.feedback")).to_have_attribute("data-feedback", "down")


def test_reasoning_folds_with_the_time_thought_and_opens_on_a_click(
    page: Page,
    demo: str,  # noqa: F811
    signed_in,
    screen,
    screenshot,
):
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    reasoning = last_run(page).locator("details.reasoning")
    expect(reasoning).not_to_have_attribute("open", "")
    expect(reasoning.locator("summary")).to_have_text(re.compile(r"Thought for \d+ s"))
    page.reload()
    reasoning = last_run(page).locator("details.reasoning")
    expect(reasoning.locator("summary")).to_have_text(re.compile(r"Thought for \d+ s"))
    reasoning.locator("summary").click()
    expect(reasoning.locator(".reasoning-text").first).to_be_visible()
    # The research assistant's sources are cards with links, not a JSON dump.
    cards = last_run(page).locator("[data-source]")
    expect(cards.first).to_be_visible()
    expect(cards.first.locator("a")).to_have_attribute("href", re.compile(r"^https?://"))
    screenshot(f"chat-reasoning-sources-{screen}")


def test_the_archives_summary_downloads(page: Page, demo: str, signed_in, screen):  # noqa: F811
    signed_in()
    open_agent(page, demo, "archive")
    send(page, "Find the records about invoices from Lisbon")
    wait_run(page)
    link = last_run(page).locator("[data-artifact] a")
    expect(link).to_have_text(re.compile(r"summary-1\.md"))
    with page.expect_download() as info:
        link.click()
    download = info.value
    assert download.suggested_filename == "summary-1.md"
    with open(download.path(), encoding="utf-8") as handle:
        assert handle.read().startswith("# ")


def test_the_plan_reads_as_a_checklist_with_the_raw_json_at_hand(
    page: Page,
    demo: str,  # noqa: F811
    signed_in,
    screen,
    screenshot,
):
    signed_in()
    open_agent(page, demo, "planner")
    send(page, "Plan the product launch in Berlin")
    wait_run(page)
    if screen == "phone":  # on a phone the panels live in the drawer
        page.locator("[data-drawer-toggle]").click()
    state = page.locator("#state-document")
    expect(state.locator("[data-checklist] li").first).to_be_visible(timeout=TIMEOUT)
    expect(state.locator("[data-step-done=true]").first).to_be_visible()
    raw = state.locator(".state-raw")
    expect(raw.locator("pre")).not_to_be_visible()
    raw.locator("summary").click()
    expect(raw.locator("pre")).to_contain_text('"status": "ready"')
    screenshot(f"chat-state-tree-{screen}")


def test_conversations_are_searched_renamed_and_deleted_after_a_question(
    page: Page,
    demo: str,  # noqa: F811
    signed_in,
    screen,
    screenshot,
):
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    page.goto(f"{demo}/conversations/")
    page.fill("#conversation-q", "heat pump")
    page.get_by_role("button", name="Search").click()
    row = page.locator("[data-conversation]")
    expect(row).to_have_count(1)
    expect(row.locator("time")).to_have_attribute("title", re.compile(r"\d{4}"))
    screenshot(f"conversations-search-{screen}")
    row.locator(".conversation-rename > summary").click()
    row.locator("input[name=title]").fill("Heating at home")
    row.get_by_role("button", name="Save").click()
    expect(page.locator(".flash")).to_contain_text("Renamed to “Heating at home”.")
    page.locator("[data-conversation] .conversation-delete").click()
    expect(page.locator("[data-confirm-delete]")).to_contain_text("cannot be undone")
    screenshot(f"conversation-delete-{screen}")
    page.get_by_role("button", name="Delete the conversation").click()
    expect(page.locator(".flash")).to_contain_text("Deleted “Heating at home”.")
    assert not Conversation.objects.exists()


def test_a_missing_page_is_in_the_products_style(page: Page, demo: str, signed_in, screen, screenshot):  # noqa: F811
    signed_in()
    page.goto(f"{demo}/agents/no-such-agent/")
    expect(page.locator("[data-error-page='404']")).to_contain_text("This page is not here")
    screenshot(f"error-404-{screen}")


def test_a_person_without_the_right_is_told_who_can_decide(page: Page, demo: str, signed_in, screen):  # noqa: F811
    signed_in(make_user(perms=["upload_files"]))
    open_agent(page, demo, "support-desk")
    send(page, "I want a refund of 30 euros for the broken lamp")
    card = last_run(page).locator("form[data-approval]")
    expect(card.locator("[data-cannot-approve]")).to_contain_text("Ask an admin.", timeout=TIMEOUT)
    page.locator("[data-control=stop]").click()
    wait_run(page, "cancelled")
    record = last_run(page).locator("[data-decided]")
    expect(record).to_contain_text("the run ended before anyone decided")
    expect(last_run(page).locator("[data-expires-at]")).to_have_count(0)

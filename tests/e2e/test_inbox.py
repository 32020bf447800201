"""The inbox in the browser: an approval the operations agent asks appears in the header's count and
the inbox, is decided there with the conversation's own form, shows decided in the conversation, and
a second tab showing the same item is told it was already decided (never a second decision)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import ApprovalRecord, Run
from tests.e2e.test_approvals import ask_for_transfer
from tests.e2e.test_runs import TIMEOUT, demo, open_agent, send, wait_run
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e
__all__ = ["demo"]  # the fixture, imported so pytest finds it here

BADGE = "#inbox-link [data-inbox-badge]"


def both_widths(page: Page, screenshot, name: str) -> None:
    for width, suffix in ((1280, ""), (390, "-phone")):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(f"{name}{suffix}")
    page.set_viewport_size({"width": 1280, "height": 900})


def test_an_approval_is_counted_decided_from_the_inbox_and_a_second_tab_is_told(
    page: Page, demo: str, signed_in, screenshot
):
    user = signed_in()
    expect(page.locator("#inbox-link")).to_be_visible()
    expect(page.locator(BADGE)).to_have_count(0)
    ask_for_transfer(page, demo)
    # The run's stream ends with the header's count: no wait for its next poll.
    expect(page.locator(BADGE)).to_contain_text("1", timeout=TIMEOUT)
    page.goto(f"{demo}/")  # the count is in the header of every page
    expect(page.locator(BADGE)).to_contain_text("1")
    both_widths(page, screenshot, "inbox-header")

    other = page.context.new_page()
    other.goto(f"{demo}/inbox/")
    expect(other.locator("[data-inbox-run]")).to_have_count(1)

    page.goto(f"{demo}/inbox/")
    group = page.locator("[data-inbox-run]")
    expect(group).to_contain_text("Operations Agent")
    expect(group).to_contain_text("transfer_funds")
    expect(group.locator("form[data-approval-form]")).to_be_visible()
    both_widths(page, screenshot, "inbox")

    group.get_by_role("button", name="Send decision").click()
    expect(group.locator("[data-resolution]")).to_contain_text(
        f"Approved by {user.username}", timeout=TIMEOUT
    )
    expect(page.locator(BADGE)).to_have_count(0)
    assert ApprovalRecord.objects.filter(decided_by=user, decision="approved").count() == 1

    # The other tab learns it at its next look, and can no longer decide it.
    expect(other.locator("[data-resolution]")).to_contain_text(
        f"Already decided by {user.username} at", timeout=30_000
    )
    expect(other.locator("form[data-approval-form]")).to_have_count(0)
    expect(other.locator(BADGE)).to_have_count(0)
    assert ApprovalRecord.objects.count() == 1

    # The conversation shows it decided, and the agent went on with it.
    group.locator("[data-resolution] a").click()
    expect(page.locator("[data-decided]").first).to_contain_text("Approved", timeout=TIMEOUT)
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    assert Run.objects.filter(request__kind="resume").count() == 1


def test_several_approvals_of_one_agent_are_decided_together_after_a_confirmation(
    page: Page, demo: str, signed_in, screenshot
):
    signed_in()
    for amount in (120, 80):
        ask_for_transfer(page, demo, f"Pay the vendor {amount} euros for the chairs")
    open_agent(page, demo, "trip-planner")
    send(page, "Plan a trip")
    wait_run(page)
    page.goto(f"{demo}/inbox/")
    expect(page.locator(BADGE)).to_contain_text("3")
    expect(page.locator("[data-inbox-run]")).to_have_count(3)
    expect(page.locator("[data-kind=input]")).to_contain_text("Asks a question")
    both_widths(page, screenshot, "inbox-several")

    for tick in page.locator("[data-kind=approval] input[type=checkbox]").all():
        tick.check()
    page.locator("form[data-bulk=operations]").get_by_role("button", name="Approve ticked…").click()
    confirm = page.locator("form[data-bulk-confirm]")
    expect(confirm.locator("[data-confirm-item]")).to_have_count(2)
    assert ApprovalRecord.objects.count() == 0  # nothing decided before the confirmation
    both_widths(page, screenshot, "inbox-bulk-confirm")
    confirm.get_by_role("button", name="Approve these 2").click()
    expect(page.locator(".flash")).to_contain_text("Approved 2")
    expect(page.locator(BADGE)).to_contain_text("1")
    expect(page.locator("[data-inbox-run]")).to_have_count(1)
    assert sorted(ApprovalRecord.objects.values_list("decision", flat=True)) == ["approved", "approved"]

    # The task's question is answered right there: the task goes on and ends (nothing left waiting).
    question = page.locator("[data-kind=input]")
    question.get_by_label("Your answer").fill("Lisbon")
    question.get_by_role("button", name="Send answer").click()
    expect(page.locator("[data-kind=input] [data-resolution]")).to_contain_text(
        "Answered at", timeout=TIMEOUT
    )
    expect(page.locator(BADGE)).to_have_count(0)
    answer = Run.objects.order_by("-created_at").first()
    eventually_sync(
        lambda: Run.objects.get(pk=answer.pk).status == Run.Status.COMPLETED, what="the task ends"
    )


# A stand-in for the browser's Notification (headless Chromium shows none) that records each one, and
# a document.hidden the test sets: the tab "hidden" while a new item arrives.
FAKE_NOTIFICATIONS = """
window.__notices = [];
window.__hidden = false;
window.Notification = function (title, options) { window.__notices.push([title, options && options.body]); };
// What the person answered is kept for the site, as a browser keeps it.
window.Notification.permission = localStorage.getItem("fake-permission") || "default";
window.Notification.requestPermission = function () {
  localStorage.setItem("fake-permission", "granted");
  window.Notification.permission = "granted";
  return Promise.resolve("granted");
};
Object.defineProperty(document, "hidden", { get: function () { return window.__hidden === true; } });
"""


def test_a_new_item_while_the_tab_is_hidden_is_notified_once_allowed(
    page: Page, demo: str, signed_in, settings
):
    settings.AGENTS_UI_INBOX_POLL_SECONDS = 1
    page.add_init_script(FAKE_NOTIFICATIONS)
    signed_in()
    expect(page.locator("script[src*='inbox.js']")).to_have_count(0)  # not loaded until turned on
    page.goto(f"{demo}/inbox/")
    page.get_by_role("button", name="Notify me when something new waits").click()
    expect(page.locator("[data-notify-state]")).to_contain_text("Notifications are on")
    assert any(c["name"] == "inbox_notify" and c["value"] == "1" for c in page.context.cookies())

    page.goto(f"{demo}/")
    expect(page.locator("script[src*='inbox.js']")).to_have_count(1)
    page.wait_for_function("() => sessionStorage.getItem('inbox-newest-seen') !== null")
    page.evaluate("() => { window.__hidden = true; }")
    other = page.context.new_page()
    ask_for_transfer(other, demo)
    expect(page.locator(BADGE)).to_contain_text("1", timeout=TIMEOUT)
    page.wait_for_function("() => window.__notices.length === 1", timeout=TIMEOUT)
    title, body = page.evaluate("() => window.__notices[0]")
    assert title == "Agents UI: something waits on you" and body == "1 request waits in your inbox."
    expect(page.locator(BADGE)).to_contain_text("1")

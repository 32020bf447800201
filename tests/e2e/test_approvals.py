"""Approvals in the browser: AG-UI interrupts (operations) and external approvals that pause a stream.

Each decision must have its effect on what the agent then does, and be recorded with who made it.
"""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import ApprovalRecord, Run
from tests.e2e.test_runs import TIMEOUT, demo, last_run, open_agent, send, wait_run
from tests.factories import make_user
from tests.support.browser import htmx_idle

pytestmark = pytest.mark.e2e
__all__ = ["demo"]  # the fixture, imported so pytest finds it here


def ask_for_transfer(page: Page, base: str, text: str = "Pay the vendor 120 euros for the chairs"):
    open_agent(page, base, "operations")
    send(page, text)
    wait_run(page, "interrupted")
    card = last_run(page).locator("form[data-approval-form]")
    expect(card).to_be_visible()
    return card


# --- AG-UI interrupts: the operations agent -----------------------------------------------------------


def test_operations_approve_runs_the_proposed_transfer(page: Page, demo: str, signed_in, screenshot):
    user = signed_in()
    card = ask_for_transfer(page, demo)
    expect(card.locator("legend")).to_contain_text("transfer_funds")
    expect(card.locator("legend .badge-warn")).to_have_text("financial")
    expect(card).to_contain_text("Transfer 120 EUR from OPS-001 to VENDOR-042?")
    expect(card.locator("[data-expires-at]")).to_contain_text(re.compile(r"in \d+ min"))
    screenshot("approval-card-operations")

    card.get_by_role("button", name="Send decision").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "transfer_funds ran with the proposed arguments (120 EUR to VENDOR-042)"
    )
    # The first run's card became a note of the decision.
    first = page.locator("#transcript section.run").first
    expect(first.locator("[data-decided]")).to_contain_text("Approved")
    expect(first.locator("[data-decided]")).to_contain_text(user.username)
    expect(first.locator("form[data-approval-form]")).to_have_count(0)

    record = ApprovalRecord.objects.get()
    assert (record.decision, record.decided_by, record.edited_arguments) == ("approved", user, None)
    assert record.tool_name == "transfer_funds" and record.arguments["amount"] == 120
    assert Run.objects.filter(request__kind="resume").count() == 1
    page.reload()  # the decision is still there after a reload, and the card does not come back
    expect(page.locator("[data-decided]")).to_contain_text("Approved")
    expect(page.locator("form[data-approval-form]")).to_have_count(0)


def test_operations_reject_changes_nothing(page: Page, demo: str, signed_in):
    user = signed_in()
    card = ask_for_transfer(page, demo, "Please delete old invoices from the ledger")
    expect(card.locator("legend")).to_contain_text("delete_records")
    expect(card.locator("legend .badge-warn")).to_have_text("destructive")
    card.get_by_label("Reject").check()
    card.get_by_role("button", name="Send decision").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "you rejected delete_records, so nothing was changed"
    )
    expect(page.locator("[data-decided]")).to_contain_text("Rejected")
    record = ApprovalRecord.objects.get()
    assert (record.decision, record.decided_by, record.tool_name) == ("rejected", user, "delete_records")


def test_operations_approve_with_edits_runs_the_edited_arguments(page: Page, demo: str, signed_in):
    user = signed_in()
    card = ask_for_transfer(page, demo)
    card.get_by_label("Approve with these arguments:").check()
    box = card.locator("textarea")
    args = json.loads(box.input_value())
    assert args["amount"] == 120
    args.update(amount=99.5, toAccount="VENDOR-777")
    box.fill(json.dumps(args))
    card.get_by_role("button", name="Send decision").click()
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "transfer_funds ran with your edited arguments (99.5 EUR to VENDOR-777)"
    )
    expect(page.locator("[data-decided]")).to_contain_text("Approved with edits")
    record = ApprovalRecord.objects.get()
    assert record.decision == "approved_with_edits" and record.decided_by == user
    assert record.edited_arguments == args
    assert record.arguments["amount"] == 120  # what the agent proposed is kept too


@pytest.mark.parametrize(
    ("edited", "error"),
    [
        ('{"amount": 10,', "not valid JSON"),
        (
            '{"fromAccount": "OPS-001", "toAccount": "V", "amount": -5, "currency": "EUR"}',
            "do not fit: amount",
        ),
    ],
)
def test_operations_invalid_edits_show_an_error_and_send_nothing(
    page: Page, demo: str, signed_in, edited: str, error: str
):
    signed_in()
    card = ask_for_transfer(page, demo)
    card.get_by_label("Approve with these arguments:").check()
    card.locator("textarea").fill(edited)
    card.get_by_role("button", name="Send decision").click()
    expect(card.locator(".approval-errors")).to_contain_text(error)
    htmx_idle(page)
    expect(page.locator("#transcript section.run")).to_have_count(1)
    assert not ApprovalRecord.objects.exists()
    assert Run.objects.count() == 1
    # The person can correct it: the card is still there, with what they typed.
    expect(card.locator("textarea")).to_have_value(edited)


def test_operations_without_approve_permission_sees_but_cannot_decide(page: Page, demo: str, signed_in):
    signed_in(make_user(perms=["upload_files", "view_reasoning"]))
    card = ask_for_transfer(page, demo)
    expect(card).to_contain_text("Transfer 120 EUR from OPS-001 to VENDOR-042?")
    expect(card.locator("[data-cannot-approve]")).to_contain_text("do not have permission to decide")
    expect(card.get_by_role("button", name="Send decision")).to_have_count(0)
    for radio in card.locator("input[type=radio]").all():
        expect(radio).to_be_disabled()
    # Posting the decision anyway is refused by the server.
    run_id = last_run(page).get_attribute("data-run")
    answer = page.evaluate(
        """async (url) => {
            const token = document.querySelector("[name=csrfmiddlewaretoken]").value;
            const body = new URLSearchParams({csrfmiddlewaretoken: token});
            const response = await fetch(url, {method: "POST", body});
            return response.text();
        }""",
        f"/runs/{run_id}/decide/",
    )
    assert "do not have permission" in answer
    assert not ApprovalRecord.objects.exists()
    assert Run.objects.count() == 1


# --- External approvals: the support desk's refund pauses its stream ----------------------------------


def ask_for_refund(page: Page, base: str, text: str = "I want a refund of 30 euros for the broken lamp"):
    open_agent(page, base, "support-desk")
    send(page, text)
    card = last_run(page).locator("form[data-approval]")
    expect(card).to_be_visible(timeout=TIMEOUT)
    expect(card).to_contain_text("issue_refund")
    # The stream waits, open, for the decision.
    expect(last_run(page).locator(".run-status")).to_have_attribute("data-run-status", "running")
    return card


def test_support_desk_approve_continues_the_same_stream(page: Page, demo: str, signed_in, screenshot):
    user = signed_in()
    card = ask_for_refund(page, demo)
    expect(card.locator(".badge-warn")).to_have_text("financial")
    expect(card).to_contain_text('"amount": 30')
    screenshot("approval-card-support-desk")
    card.get_by_role("button", name="Approve").click()
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("Refund of 30 EUR issued.")
    record = last_run(page).locator("[data-decided]")
    expect(record).to_contain_text("Approved")
    expect(record).to_contain_text(f"by {user.username}")
    expect(last_run(page).locator("form[data-approval]")).to_have_count(0)
    expect(page.locator("#transcript section.run")).to_have_count(1)
    assert Run.objects.count() == 1  # the same run went on: no resume run
    record = ApprovalRecord.objects.get()
    assert (record.decision, record.decided_by, record.tool_name) == ("approved", user, "issue_refund")
    assert record.edited_arguments is None


def test_support_desk_reject_denies_the_refund(page: Page, demo: str, signed_in):
    user = signed_in()
    card = ask_for_refund(page, demo)
    card.get_by_role("button", name="Reject").click()
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("No refund was issued: it was denied.")
    expect(last_run(page).locator("[data-decided]")).to_contain_text("Rejected")
    expect(last_run(page).locator("[data-decided]")).not_to_contain_text("Deny")
    record = ApprovalRecord.objects.get()
    assert (record.decision, record.decided_by) == ("rejected", user)


def test_support_desk_approve_with_edited_input(page: Page, demo: str, signed_in):
    user = signed_in()
    card = ask_for_refund(page, demo)
    card.get_by_text("Edit the input before approving").click()
    box = card.locator("textarea")
    edited = {**json.loads(box.input_value()), "amount": 25}
    box.fill(json.dumps(edited))
    card.get_by_role("button", name="Approve").click()
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "Refund of 25 EUR issued (with your edits)."
    )
    # The record shows what was issued, not what was first asked for; and again after a reload.
    for _ in range(2):
        expect(last_run(page).locator("[data-decided]")).to_contain_text("Approved with edits")
        expect(last_run(page).locator("[data-sent]")).to_contain_text('"amount": 25')
        page.reload()
    record = ApprovalRecord.objects.get()
    assert (record.decision, record.decided_by) == ("approved_with_edits", user)
    assert record.edited_arguments == edited


def test_support_desk_without_approve_permission_sees_but_cannot_decide(page: Page, demo: str, signed_in):
    signed_in(make_user(perms=["upload_files"]))
    card = ask_for_refund(page, demo)
    expect(card.locator("[data-cannot-approve]")).to_contain_text("do not have permission to decide")
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    assert not ApprovalRecord.objects.exists()
    page.locator("[data-control=stop]").click()  # do not leave the stream waiting for the next test
    wait_run(page, "cancelled")

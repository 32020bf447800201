"""Sharing a conversation in a real browser: the owner makes a link, another person opens it and sees
the conversation as it was (not what was said after), the owner revokes it; hostile payloads stay
inert on the shared page; the exports download."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Browser, Page, expect

from agents_ui.models import AgentEndpoint, SharedLink
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_a11y import serious_violations
from tests.e2e.test_bad_input import WATCH, assert_nothing_ran
from tests.e2e.test_runs import demo, open_agent, send, wait_run  # noqa: F401 (demo: a fixture)
from tests.factories import PASSWORD, make_endpoint, make_user
from tests.support.browser import HTMX_ACTIVITY
from tests.support.fault_agent import PAYLOADS, FaultAgentServer

pytestmark = pytest.mark.e2e

FIRST = "Tell me about solar panels efficiency."
LATER = "And what about wind turbines, said after sharing?"


@pytest.fixture
def other_person(browser: Browser, live_url: str):
    """``page = other_person(user)``: a second browser, signed in as someone else."""
    contexts = []

    def open_as(user) -> Page:
        context = browser.new_context()
        contexts.append(context)
        page = context.new_page()
        page.add_init_script(HTMX_ACTIVITY)
        page.add_init_script(WATCH)
        page.goto(f"{live_url}/accounts/login/")
        page.fill("#id_username", user.username)
        page.fill("#id_password", PASSWORD)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_url}/")
        return page

    yield open_as
    for context in contexts:
        context.close()


def make_link(page: Page, *, people: str = "") -> str:
    """From the conversation's workspace: Share, choose the audience, make the link; its address."""
    page.locator("[data-conversation-menu] summary").click()
    page.locator("[data-share-action]").click()
    expect(page.locator("[data-share-form]")).to_be_visible()
    if people:
        page.get_by_label("Only the people I name").check()
        page.fill("#id_people", people)
    page.get_by_role("button", name="Make the link").click()
    expect(page.locator(".share-new")).to_be_visible()
    return page.locator(".share-new [data-share-link]").input_value()


def test_a_shared_link_shows_the_snapshot_to_the_people_named_until_revoked(
    page: Page,
    demo,  # noqa: F811
    signed_in,
    other_person,
    live_url,
    screenshot,
):
    bob, carol = make_user("bob", everyday=True), make_user("carol", everyday=True)
    found: dict[str, list[str]] = {}  # serious accessibility violations, page by page
    signed_in(make_user("ada", everyday=True))
    open_agent(page, demo, "research-assistant")
    send(page, FIRST)
    wait_run(page)
    conversation_url = page.url
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(conversation_url)  # laid out at this width from the start (the drawer slides otherwise)
        page.locator("[data-conversation-menu] summary").click()
        expect(page.locator("[data-export=json]")).to_be_visible()
        screenshot(f"workspace-share-{width}")
        found[f"workspace, its menu open, {width}"] = serious_violations(page)
        page.wait_for_load_state("networkidle")  # the menu's script comes with its first press
        page.keyboard.press("Escape")  # the menu closes
        expect(page.locator("[data-export=json]")).to_be_hidden()
    page.set_viewport_size({"width": 1280, "height": 900})

    # An unknown name is a form error, and what was typed is still there.
    page.locator("[data-conversation-menu] summary").click()
    page.locator("[data-share-action]").click()
    page.get_by_label("Only the people I name").check()
    page.fill("#id_people", "bob, nobody-by-that-name")
    page.get_by_role("button", name="Make the link").click()
    expect(page.locator("[data-people-errors]")).to_contain_text("Nobody here is called nobody-by-that-name")
    expect(page.locator("#id_people")).to_have_value("bob, nobody-by-that-name")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(f"share-form-{width}")
        found[f"share form with an error, {width}"] = serious_violations(page)
    page.set_viewport_size({"width": 1280, "height": 900})

    page.goto(conversation_url)
    link = make_link(page, people="bob")
    assert link.startswith(f"{live_url}/s/") and str(SharedLink.objects.get().conversation_id) not in link
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(f"shared-links-{width}")
        found[f"shared links, {width}"] = serious_violations(page)
    page.set_viewport_size({"width": 1280, "height": 900})

    # The owner goes on talking: that is not in the link.
    page.goto(conversation_url)
    send(page, LATER)
    wait_run(page)

    reader = other_person(bob)
    reader.goto(link)
    shared = reader.locator("[data-shared]")
    expect(shared).to_contain_text(FIRST)
    expect(shared).to_contain_text("Most rooftop panels sold today")
    expect(shared).not_to_contain_text(LATER)
    assert reader.locator("[data-composer], .approval-card, form.feedback, [data-run-actions]").count() == 0
    assert reader.locator("#transcript form[method=post] button:enabled").count() == 0
    assert_nothing_ran(reader, "shared page")
    for width in (1280, 390):
        reader.set_viewport_size({"width": width, "height": 900})
        screenshot_of(reader, f"shared-page-{width}")
        found[f"shared page, {width}"] = serious_violations(reader)
    reader.emulate_media(color_scheme="dark")
    reader.reload()  # drawn dark from the start, not caught mid-transition
    screenshot_of(reader, "shared-page-dark-390")
    found["shared page, dark, 390"] = serious_violations(reader)
    reader.emulate_media(color_scheme="light")

    stranger = other_person(carol)
    response = stranger.goto(link)
    assert response.status == 404
    expect(stranger.locator("body")).not_to_contain_text(FIRST)

    page.goto(f"{live_url}/conversations/")
    expect(page.locator("[data-conversation] [data-share-action]")).to_be_visible()
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(f"conversations-share-{width}")
        found[f"conversations, {width}"] = serious_violations(page)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{live_url}/shared/")
    page.locator("[data-revoke]").click()
    expect(page.locator("[data-revoked]")).to_contain_text("Revoked")
    response = reader.goto(link)
    assert response.status == 410
    expect(reader.locator("[data-shared-revoked]")).to_contain_text("This link was revoked")
    screenshot_of(reader, "shared-revoked")
    found["revoked link"] = serious_violations(reader)
    bad = [f"{name}: {problem}" for name, problems in found.items() for problem in problems]
    assert not bad, "\n".join(bad)
    expect(reader.locator("body")).not_to_contain_text(FIRST)


def screenshot_of(page: Page, name: str) -> None:
    """The `screenshot` fixture's file, for a page of another browser context."""
    if SCREENSHOTS:
        os.makedirs(SCREENSHOTS, exist_ok=True)
        page.screenshot(path=os.path.join(SCREENSHOTS, f"{name}.png"), full_page=True)


def test_the_conversation_downloads_as_markdown_and_json(page: Page, demo, signed_in):  # noqa: F811
    signed_in(make_user(everyday=True))
    open_agent(page, demo, "research-assistant")
    send(page, FIRST)
    wait_run(page)
    page.locator("[data-conversation-menu] summary").click()
    with page.expect_download() as markdown:
        page.locator("[data-export=md]").click()
    assert markdown.value.suggested_filename.endswith(".md")
    text = Path(markdown.value.path()).read_text(encoding="utf-8")
    assert FIRST in text and "Most rooftop panels sold today" in text
    with page.expect_download() as exported:
        page.locator("[data-export=json]").click()
    assert exported.value.suggested_filename.endswith(".json")
    document = json.loads(Path(exported.value.path()).read_text(encoding="utf-8"))
    assert document["version"] == 1 and document["runs"][0]["message"]["content"] == FIRST


@pytest.fixture(scope="module")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


def test_hostile_payloads_stay_inert_in_the_shared_view(
    page: Page, live_url, signed_in, other_person, fault_agent
):
    cache.clear()
    make_endpoint(slug="evil", name="Evil agent", base_url=fault_agent.url_for("script-payloads"))
    assert AgentEndpoint.objects.filter(slug="evil").exists()
    signed_in(make_user(everyday=True))
    open_agent(page, live_url, "evil")
    page.wait_for_function("() => window.htmx !== undefined")
    send(page, " ".join(PAYLOADS))
    wait_run(page)
    link = make_link(page)

    reader = other_person(make_user(everyday=True))
    dialogs: list[str] = []
    reader.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    reader.goto(link)
    transcript = reader.locator("#transcript")
    expect(transcript).to_contain_text("Title <script>window.__pwned='script'</script>")
    expect(transcript.locator(".msg-user")).to_contain_text(PAYLOADS[1])
    assert reader.locator("#transcript a[href^='javascript' i]").count() == 0
    for details in reader.locator("#transcript details").all():
        details.evaluate("d => d.open = true")
    for element in reader.locator("#transcript b, #transcript strong, #transcript img").all()[:8]:
        element.hover()
    assert_nothing_ran(reader, "shared page")
    assert dialogs == []
    # The control: markup put into the page would have been seen and blocked.
    reader.evaluate("document.body.insertAdjacentHTML('beforeend', `" + PAYLOADS[1] + "`)")
    reader.wait_for_function("() => window.__violations.length > 0")
    assert reader.evaluate("typeof window.__pwned") == "undefined"

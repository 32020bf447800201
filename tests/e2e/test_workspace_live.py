"""The workspace while it is used, in the browser: no console error and no htmx error while sending to
and streaming from every demo agent, the side column's conversations kept up to date without a
reload, an open code block shown as code while it streams, and the audio recorder's script loaded
only when the person first records."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import Conversation
from tests.e2e.test_runs import (
    ANSWERS,
    FINAL_STATUS,
    GREETING,
    TIMEOUT,
    demo,
    last_run,
    open_agent,
    send,
    wait_run,
)
from tests.factories import make_endpoint
from tests.support.browser import htmx_wired, streams_closed
from tests.support.shaped_agent import ShapedAgentServer

pytestmark = pytest.mark.e2e
__all__ = ["demo"]  # the fixture, imported so pytest finds it here

DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}

# Runs before any page script: every htmx error event, as the page sees it.
WATCH_HTMX = """
window.__htmxErrors = [];
["htmx:oobErrorNoTarget", "htmx:targetError", "htmx:swapError", "htmx:responseError", "htmx:sendError",
 "htmx:sseError", "htmx:onLoadError", "htmx:historyCacheError", "htmx:evalDisallowedError",
 "htmx:invalidPath", "htmx:syntax:error"].forEach(function (name) {
  document.addEventListener(name, function (event) {
    var target = event.detail && (event.detail.target || event.detail.content || event.detail.elt);
    window.__htmxErrors.push(name + " " + (target && target.id ? "#" + target.id : ""));
  }, true);
});
"""


@pytest.fixture
def watched(page: Page) -> Iterator[list[str]]:
    """Every console error, page error and htmx error event of the page, as it happens."""
    seen: list[str] = []
    page.add_init_script(WATCH_HTMX)
    page.on(
        "console",
        lambda message: seen.append(f"console: {message.text}") if message.type == "error" else None,
    )
    page.on("pageerror", lambda error: seen.append(f"page error: {error}"))
    yield seen


def errors_of(page: Page, seen: list[str]) -> list[str]:
    return seen + [f"htmx: {e}" for e in page.evaluate("window.__htmxErrors || []")]


@pytest.mark.parametrize("slug", [*ANSWERS, "archive"])
def test_sending_and_streaming_raise_no_console_or_htmx_error(
    page: Page, demo: str, signed_in, settings, watched, slug: str
):
    settings.AGENTS_UI_DEMO_PACING = 0.01
    signed_in()
    open_agent(page, demo, slug)
    send(page, GREETING)
    wait_run(page, FINAL_STATUS.get(slug, "completed"))
    # The second message: the page has no empty state any more, nothing may look for it.
    send(page, "And what about wind turbines?")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page, FINAL_STATUS.get(slug, "completed"))
    streams_closed(page)  # the streams' last swaps and closes
    assert errors_of(page, watched) == []


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_side_list_follows_new_conversations_renames_and_deletes_without_a_reload(
    page: Page, demo: str, signed_in, settings, watched, size
):
    settings.AGENTS_UI_DEMO_PACING = 0.0
    page.set_viewport_size(size)
    user = signed_in()
    open_agent(page, demo, "research-assistant")
    side = page.locator("#conversation-list")
    page.evaluate("window.__samePage = true")  # gone if the page reloads

    # A new conversation shows in the list as soon as it is sent, as the current one.
    send(page, "What is a heat pump?")
    current = side.locator("a[aria-current=page]")
    expect(current).to_have_text("What is a heat pump?", timeout=TIMEOUT)
    wait_run(page)
    thread = Conversation.objects.get(user=user)

    # Renamed from the side column: the list says the new name at once.
    if size is PHONE:
        page.locator("[data-drawer-toggle]").click()
    side.locator(".conversation-rename > summary").click()
    side.locator("input[name=title]").fill("Heating the house")
    side.get_by_role("button", name="Save").click()
    expect(current).to_have_text("Heating the house")
    thread.refresh_from_db()
    assert thread.title == "Heating the house"

    # Renamed, then another deleted, elsewhere (another tab): the list follows when the page is seen again.
    other = Conversation.objects.create(user=user, endpoint=thread.endpoint, title="An older question")
    document_shown = "document.dispatchEvent(new Event('visibilitychange'))"
    htmx_wired(page, "#conversation-list")  # htmx wires the swapped-in list once it settles
    page.evaluate(document_shown)
    expect(side.locator(f"[data-conversation='{other.pk}'] a")).to_have_text("An older question")
    Conversation.objects.filter(pk=thread.pk).update(title="Heat pumps, renamed in another tab")
    other.delete()
    htmx_wired(page, "#conversation-list")
    page.evaluate(document_shown)
    expect(current).to_have_text("Heat pumps, renamed in another tab")
    expect(side.locator(f"[data-conversation='{other.pk}']")).to_have_count(0)
    assert page.evaluate("window.__samePage") is True
    assert errors_of(page, watched) == []


@pytest.fixture(scope="module")
def shaped() -> Iterator[ShapedAgentServer]:
    server = ShapedAgentServer().start()
    yield server
    server.stop()


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_an_open_code_block_is_shown_as_code_while_it_streams(
    page: Page, live_url: str, shaped: ShapedAgentServer, signed_in, watched, size
):
    cache.clear()
    make_endpoint(slug="coder", name="Coder", base_url=shaped.url_for("code"))
    page.set_viewport_size(size)
    signed_in()
    open_agent(page, live_url, "coder")
    send(page, "Write add()")
    streaming = last_run(page).locator(".msg-streaming")
    code = streaming.locator("pre code")
    # While the block is open (its closing fence half sent), it is already a code block...
    expect(code.last).to_contain_text("return a + b", timeout=TIMEOUT)
    text = streaming.inner_text()
    assert "`" not in text and "def add(a, b):" in text and "step 99" in text
    assert streaming.locator("p", has_text="total = a + b").count() == 0
    assert streaming.locator("p", has_text="def add").count() == 0
    # ...and once closed, still one, with the words after it.
    wait_run(page)
    answer = last_run(page).locator(".msg-assistant .md")
    expect(answer.locator("pre.code code")).to_contain_text("def add(a, b):")
    expect(answer.locator("pre")).to_have_count(1)
    expect(answer).to_contain_text("Done.")
    assert "`" not in answer.locator("pre code").inner_text()
    assert errors_of(page, watched) == []


def test_the_recorder_script_loads_only_when_the_person_first_records(
    page: Page, demo: str, signed_in, watched
):
    signed_in()
    loaded: list[str] = []
    page.on("request", lambda request: loaded.append(request.url) if request.url.endswith(".js") else None)
    open_agent(page, demo, "research-assistant")
    expect(page.locator("[data-control=audio-recorder]")).to_be_visible()
    assert not any("recorder" in url for url in loaded)
    open_agent(page, demo, "planner")  # no recorder: nothing to load either
    assert not any("recorder" in url for url in loaded)
    open_agent(page, demo, "research-assistant")
    page.locator("[data-record]").click()
    page.wait_for_function("() => !!document.querySelector('[data-recorder][data-ready]')")
    assert sum("recorder" in url for url in loaded) == 1
    # No microphone in this browser: the press is still answered, in words.
    expect(page.locator("[data-record-status]")).not_to_have_text("a voice note")
    assert errors_of(page, watched) == []


def test_the_skill_chooser_script_loads_at_its_first_use_and_does_what_was_asked(
    page: Page, demo: str, signed_in, watched
):
    signed_in()
    loaded: list[str] = []
    page.on("request", lambda request: loaded.append(request.url) if request.url.endswith(".js") else None)
    open_agent(page, demo, "trip-planner")
    expect(page.locator("[data-control=skills] select")).to_be_visible()
    assert not any("skills" in url for url in loaded)
    # The first choice loads the script, which then follows that very choice.
    general = page.locator("#attachment").get_attribute("accept")
    assert general and general != "text/plain"
    page.select_option("[data-control=skills] select", "plan-trip")
    # The skill takes text only: text files, nothing else (an A2A input mode is a media type).
    expect(page.locator("#attachment")).to_have_attribute("accept", "text/plain")
    expect(page.locator("[data-upload-limits]")).to_have_text("text/plain")
    page.locator("[data-skill-prompt='Plan a trip']").click()
    expect(page.locator("#message")).to_have_value("Plan a trip")
    assert sum("skills" in url for url in loaded) == 1
    assert errors_of(page, watched) == []


def test_going_back_with_an_external_agent_says_what_it_remembers(page: Page, demo: str, signed_in, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.0
    signed_in()
    open_agent(page, demo, "support-desk")
    send(page, "Where is my order 1042?")
    wait_run(page)
    first = Conversation.objects.get().remote_id
    last_run(page).get_by_role("button", name="Regenerate").click()
    expect(
        page.locator(".flash, [role=status], .alert").filter(has_text="starts a new conversation of its own")
    ).to_be_visible(timeout=TIMEOUT)
    wait_run(page)
    assert Conversation.objects.get().remote_id not in ("", first)  # the agent's history starts again
    send(page, "And order 1043?")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    user_messages = page.locator("#transcript .msg-user")
    user_messages.last.locator(".msg-edit > summary").click()
    expect(user_messages.last.locator("[data-agent-history=kept]")).to_contain_text("still remembers")
    user_messages.last.locator("textarea").fill("And order 1044?")
    user_messages.last.get_by_role("button", name="Send again").click()
    expect(page.get_by_text("still remembers what was replaced here")).to_be_visible(timeout=TIMEOUT)
    wait_run(page)


def test_going_back_with_an_a2a_agent_says_it_remembers_too(page: Page, demo: str, signed_in, settings):
    # An A2A agent keeps the conversation under its context id: it cannot be rewound either.
    settings.AGENTS_UI_DEMO_PACING = 0.0
    signed_in()
    open_agent(page, demo, "trip-planner")
    send(page, "Plan a trip")
    wait_run(page)
    send(page, "Lisbon")  # the task's answer: it completes, nothing is left waiting at the agent
    expect(last_run(page).locator("[data-artifact=itinerary] h1")).to_be_visible(timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator("[data-run-actions]")).to_contain_text("cannot be rewound")
    user_messages = page.locator("#transcript .msg-user")
    user_messages.last.locator(".msg-edit > summary").click()
    expect(user_messages.last.locator("[data-agent-history=kept]")).to_contain_text("still remembers")

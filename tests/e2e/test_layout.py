"""The workspace as an application, on a desktop and on a 390x844 phone: the conversation scrolls on its
own and follows new words, the composer stays at the bottom with Stop where Send was, the details
live in a side column or a drawer, answers render as Markdown while they stream, and the theme the
person chose is kept.
"""

from __future__ import annotations

import base64
import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import TIMEOUT, demo, last_run, open_agent, send, wait_run
from tests.e2e.test_uploads import PNG_1PX, pdf_bytes
from tests.support.browser import htmx_idle, painted

pytestmark = pytest.mark.e2e

__all__ = ["demo"]  # the fixture, imported so pytest finds it here

DESKTOP = {"width": 1400, "height": 900}
PHONE = {"width": 390, "height": 844}
LONG_QUESTION = "Tell me about solar panels efficiency, in detail please."


def in_window(page: Page, selector: str) -> bool:
    """The element is entirely inside the window, without scrolling the page."""
    return page.eval_on_selector(
        selector,
        """e => { const r = e.getBoundingClientRect();
                  return r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth
                         && r.width > 0 && r.height > 0; }""",
    )


def page_scrolls(page: Page) -> bool:
    return page.evaluate("document.scrollingElement.scrollHeight > innerHeight + 1")


def at_bottom(page: Page) -> bool:
    htmx_idle(page)
    painted(page)  # the scroll follows what was just laid out
    return page.eval_on_selector("#conversation", "c => c.scrollHeight - c.scrollTop - c.clientHeight < 48")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_composer_is_pinned_and_the_conversation_scrolls_on_its_own(
    page: Page, demo: str, signed_in, screenshot, size
):
    page.set_viewport_size(size)
    signed_in()
    open_agent(page, demo, "research-assistant")
    assert in_window(page, "#message") and in_window(page, "[data-composer] [data-send]")
    assert not page_scrolls(page)
    for _ in range(3):
        send(page, LONG_QUESTION)
        wait_run(page)
    # Three long answers are taller than the window: the conversation scrolls, never the page.
    assert page.eval_on_selector("#conversation", "c => c.scrollHeight > c.clientHeight")
    assert not page_scrolls(page)
    assert in_window(page, "#message")
    assert at_bottom(page), "the conversation follows the newest answer"
    expect(last_run(page).locator(".msg-assistant")).to_be_in_viewport()
    screenshot(f"layout-{size['width']}")


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_stop_takes_the_place_of_send_while_a_run_streams(page: Page, demo: str, signed_in, settings, size):
    settings.AGENTS_UI_DEMO_PACING = 0.05
    page.set_viewport_size(size)
    signed_in()
    open_agent(page, demo, "research-assistant")
    send_button, stop = page.locator("[data-send]"), page.locator("[data-control=stop]")
    expect(stop).to_be_hidden()
    before = send_button.bounding_box()
    send(page, LONG_QUESTION)
    expect(stop).to_be_visible()
    expect(stop).to_be_enabled()
    expect(send_button).to_be_hidden()
    assert stop.bounding_box() == before, (
        "Stop stands exactly where Send was: nothing moves under the pointer"
    )
    # The message just sent is in view, at the bottom of the conversation.
    expect(page.locator(".msg-user").last).to_be_in_viewport()
    wait_run(page)
    expect(send_button).to_be_visible()
    expect(stop).to_be_hidden()
    assert send_button.bounding_box() == before


def test_the_conversation_follows_new_words_unless_the_person_scrolled_up(
    page: Page, demo: str, signed_in, settings
):
    page.set_viewport_size(PHONE)
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, LONG_QUESTION)
    wait_run(page)
    settings.AGENTS_UI_DEMO_PACING = 0.08
    send(page, LONG_QUESTION)
    expect(page.locator(".msg-streaming")).to_have_count(1, timeout=TIMEOUT)
    jump = page.locator("[data-jump-latest]")
    expect(jump).to_be_hidden()
    page.eval_on_selector("#conversation", "c => { c.scrollTop = 0; }")
    expect(jump).to_be_visible(timeout=TIMEOUT)  # new words arrived below, out of sight
    assert page.eval_on_selector("#conversation", "c => c.scrollTop") < 50, "left where the person is reading"
    jump.click()
    expect(jump).to_be_hidden()
    page.wait_for_function(
        "() => { const c = document.getElementById('conversation');"
        " return c.scrollHeight - c.scrollTop - c.clientHeight < 48; }"
    )
    wait_run(page)
    assert at_bottom(page), "following again after the jump"


def test_markdown_is_rendered_while_the_answer_streams(page: Page, demo: str, signed_in, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.05
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "Which sources do you trust, and why?")
    # A list while the answer is still streaming, never its raw "- " markers.
    streaming_list = page.locator(".msg-streaming .msg-text.md li")
    expect(streaming_list.first).to_be_attached(timeout=TIMEOUT)
    assert "\n- " not in page.locator(".msg-streaming .msg-text").inner_text()
    assert "**" not in page.locator(".msg-streaming .msg-text").inner_text()
    wait_run(page)
    expect(last_run(page).locator(".msg-text.md li").first).to_be_visible()


def test_enter_sends_and_shift_enter_makes_a_new_line(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "research-assistant")
    box = page.locator("#message")
    expect(box).to_have_attribute(
        "placeholder", "Message Research Assistant… (Enter sends, Shift+Enter starts a new line)"
    )
    box.click()
    page.keyboard.type("First line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("second line")
    expect(page.locator(".msg-user")).to_have_count(0)
    expect(box).to_have_value("First line\nsecond line")
    page.keyboard.press("Enter")
    expect(page.locator(".msg-user")).to_have_count(1)
    expect(page.locator(".msg-user .msg-text").first).to_have_text("First line\nsecond line")
    expect(box).to_have_value("")
    wait_run(page)


def test_enter_while_an_input_method_composes_does_not_send(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "research-assistant")
    page.fill("#message", "にほん")
    page.eval_on_selector(
        "#message",
        """box => box.dispatchEvent(new KeyboardEvent("keydown",
                 {key: "Enter", keyCode: 229, isComposing: true, bubbles: true, cancelable: true}))""",
    )
    htmx_idle(page)  # a send would be in flight now
    painted(page)
    expect(page.locator(".msg-user")).to_have_count(0)
    expect(page.locator("#message")).to_have_value("にほん")


def test_on_a_phone_the_details_open_in_a_drawer_and_why_these_controls_in_a_dialog(
    page: Page, demo: str, signed_in, screenshot
):
    page.set_viewport_size(PHONE)
    signed_in()
    open_agent(page, demo, "support-desk")
    side = page.locator("#workspace-side")
    expect(side).to_be_hidden()
    assert in_window(page, "#message") and not page_scrolls(page)
    toggle = page.locator("[data-drawer-toggle]")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(side).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    expect(side.locator("[data-control=approvals]")).to_be_visible()
    expect(side.get_by_role("link", name="All conversations")).to_be_visible()
    screenshot("layout-phone-drawer")
    page.keyboard.press("Escape")
    expect(side).to_be_hidden()
    expect(toggle).to_be_focused()

    explain = page.locator("#explain")
    expect(explain).to_be_hidden()
    page.locator("[data-open-explain]").click()
    expect(explain).to_be_visible()
    expect(explain.locator("[data-explain=approvals]")).to_be_visible()
    page.keyboard.press("Escape")
    expect(explain).to_be_hidden()


def test_on_a_desktop_the_details_and_the_conversations_sit_in_a_side_column(
    page: Page, demo: str, signed_in
):
    page.set_viewport_size(DESKTOP)
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, LONG_QUESTION)
    wait_run(page)
    page.reload()
    side = page.locator("#workspace-side")
    expect(side).to_be_visible()
    expect(page.locator("[data-drawer-toggle]")).to_be_hidden()
    expect(side.locator("[data-control=tools]")).to_be_visible()
    # The conversation just had is one click away, beside it.
    current = side.locator(".conversation-list a[aria-current=page]")
    expect(current).to_contain_text("Tell me about solar panels")
    box, main = side.bounding_box(), page.locator("#conversation").bounding_box()
    assert box["x"] >= main["x"] + main["width"] - 1, "beside the conversation, not under it"


def test_code_blocks_and_answers_have_copy_buttons_that_work_by_keyboard(
    page: Page, demo: str, signed_in, context
):
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, LONG_QUESTION)
    wait_run(page)
    copy = last_run(page).locator(".msg-assistant button.copy").first
    expect(copy).to_have_text("Copy")
    copy.focus()
    page.keyboard.press("Enter")
    expect(copy).to_have_text("Copied")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert "Most rooftop panels sold today" in copied and "Copied" not in copied


def test_the_theme_follows_the_system_and_the_switch_is_remembered(page: Page, demo: str, signed_in):
    page.emulate_media(color_scheme="dark")
    signed_in()
    open_agent(page, demo, "research-assistant")
    background = "getComputedStyle(document.body).backgroundColor"
    dark = page.evaluate(background)
    switch = page.locator("[data-theme-switch]")
    expect(switch).to_have_attribute("aria-pressed", "true")
    switch.click()
    expect(switch).to_have_attribute("aria-pressed", "false")
    light = page.evaluate(background)
    assert light != dark
    # The choice is kept, and applied before the first paint (the first style read already has it).
    page.goto(f"{demo}/")
    assert page.evaluate(background) == light
    assert page.evaluate("document.documentElement.dataset.theme") == "light"
    expect(page.locator("[data-theme-switch]")).to_have_attribute("aria-pressed", "false")


# --- Attachments: dropped, pasted, shown, removed one by one ------------------------------------------

PUT_FILES = """([kind, files]) => {
    const transfer = new DataTransfer();
    for (const [name, type, b64] of files) {
        const bytes = Uint8Array.from(atob(b64), c => c.charCodeAt(0));
        transfer.items.add(new File([bytes], name, {type}));
    }
    if (kind === "drop") {
        const composer = document.querySelector("[data-composer]");
        const init = {dataTransfer: transfer, bubbles: true, cancelable: true};
        composer.dispatchEvent(new DragEvent("dragover", init));
        composer.dispatchEvent(new DragEvent("drop", init));
    } else {
        document.getElementById("message").dispatchEvent(
            new ClipboardEvent("paste", {clipboardData: transfer, bubbles: true, cancelable: true}));
    }
}"""


def put_files(page: Page, kind: str, *files: tuple[str, str, bytes]) -> None:
    page.evaluate(PUT_FILES, [kind, [[n, t, base64.b64encode(d).decode()] for n, t, d in files]])


def test_files_dropped_or_pasted_are_checked_shown_and_removable_one_by_one(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "document-reviewer")
    put_files(
        page,
        "drop",
        ("board-report.pdf", "application/pdf", pdf_bytes(2)),
        ("chart.png", "image/png", PNG_1PX),
    )
    # This agent takes images, so a pasted one goes to its image picker, and only there.
    put_files(page, "paste", ("photo.png", "image/png", PNG_1PX))
    expect(page.locator("[data-image-status]")).to_contain_text("Image attached: photo.png")
    assert page.eval_on_selector("#image-attachment", "i => Array.from(i.files).map(f => f.name)") == [
        "photo.png"
    ]
    files = page.locator("[data-file-list]")
    expect(files).to_contain_text("Attached: board-report.pdf")
    expect(files).to_contain_text("chart.png")
    expect(files.locator("img.thumb")).to_have_count(1)  # the image, as a thumbnail
    expect(files.locator("img.thumb")).to_have_attribute("src", re.compile("^data:image/png"))
    assert page.eval_on_selector("#attachment", "i => Array.from(i.files).map(f => f.name)") == [
        "board-report.pdf",
        "chart.png",
    ]
    # A type the agent refuses is refused on the way in, and what was attached stays.
    put_files(page, "drop", ("notes.txt", "text/plain", b"notes"))
    expect(page.locator("#composer-errors")).to_contain_text("“notes.txt” is not a type this agent accepts")
    assert page.eval_on_selector("#attachment", "i => i.files.length") == 2

    files.get_by_role("button", name="Remove board-report.pdf").click()
    expect(files).not_to_contain_text("board-report.pdf")
    assert page.eval_on_selector("#attachment", "i => Array.from(i.files).map(f => f.name)") == ["chart.png"]
    send(page, "What is in this chart?")
    wait_run(page)
    expect(page.locator(".msg-user .attachments")).to_contain_text("chart.png")
    expect(page.locator(".msg-user .attachments")).to_contain_text("photo.png")
    expect(page.locator(".msg-user .attachments")).not_to_contain_text("board-report.pdf")
    expect(files).to_have_text("")

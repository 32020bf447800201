"""The capability profile in the browser: the audio recorder, the image picker and a pasted image,
the send throttle of custom.rateLimit, the explain view's provenance chain for a Strands-shaped
declaration, an agent that does not stream, and a stream resumed after a cut connection."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Attachment, Message
from tests.e2e.conftest import CHROMIUM, SCREENSHOTS
from tests.e2e.test_runs import TIMEOUT, demo, last_run, open_agent, send, wait_run
from tests.e2e.test_uploads import PNG_1PX
from tests.factories import PASSWORD, make_endpoint, make_user
from tests.support.shaped_agent import ANSWER_PARTS, BOUNDED_WORK, CUT_RUNS, ONESHOT_WORK, ShapedAgentServer

pytestmark = pytest.mark.e2e
__all__ = ["demo"]  # the fixture, imported so pytest finds it here

FAKE_MEDIA = ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"]


@pytest.fixture(scope="module")
def shaped() -> Iterator[ShapedAgentServer]:
    server = ShapedAgentServer().start()
    yield server
    server.stop()


@pytest.fixture
def agent(live_url: str, shaped: ShapedAgentServer):
    def register(name: str) -> AgentEndpoint:
        cache.clear()
        return make_endpoint(slug=name, name=f"{name.title()} agent", base_url=shaped.url_for(name))

    return register


def answer(page: Page) -> str:
    # The message text alone: the article also holds its time and a Copy button.
    return last_run(page).locator(".msg-assistant .msg-text").inner_text()


# --- The audio recorder ------------------------------------------------------------------------------


@pytest.fixture
def media_page(playwright, live_url: str) -> Iterator[Page]:
    """A browser of its own with a fake microphone that needs no permission prompt."""
    browser = playwright.chromium.launch(
        executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu", *FAKE_MEDIA]
    )
    context = browser.new_context(permissions=["microphone"])
    page = context.new_page()
    user = make_user(perms=["upload_files", "approve_actions", "view_reasoning"])
    page.goto(f"{live_url}/accounts/login/")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_url}/")
    yield page
    context.close()
    browser.close()


def test_a_voice_note_is_recorded_listened_back_and_sent_from_the_keyboard(
    media_page: Page, demo: str, screenshot
):
    page = media_page
    open_agent(page, demo, "research-assistant")
    recorder = page.locator("[data-control=audio-recorder]")
    expect(recorder).to_be_visible()
    page.locator("[data-record]").focus()
    page.keyboard.press("Enter")
    expect(page.locator("[data-record-stop]")).to_be_focused()
    expect(page.locator("[data-record-status]")).to_have_text("Recording…")
    page.wait_for_timeout(1200)
    page.keyboard.press("Enter")  # the stop button has the focus
    expect(page.locator("[data-record-playback]")).to_be_visible()
    expect(page.locator("[data-record-status]")).to_contain_text("Voice note ready")
    assert page.locator("[data-recording]").evaluate("input => input.files[0].type").startswith("audio/")
    source = page.locator("[data-record-playback]").get_attribute("src") or ""
    assert source.startswith("blob:")
    if SCREENSHOTS:
        page.screenshot(path=f"{SCREENSHOTS}/capabilities-recorder.png", full_page=True)
        page.set_viewport_size({"width": 390, "height": 844})
        page.screenshot(path=f"{SCREENSHOTS}/capabilities-recorder-phone.png", full_page=True)
        page.set_viewport_size({"width": 1280, "height": 720})
    send(page, "What did I say?")
    wait_run(page)
    note = Attachment.objects.get(message__content="What did I say?")
    assert note.mime_type == "audio/webm" and note.size > 0
    expect(page.locator("[data-record-playback]")).to_be_hidden()  # sent: the recorder is ready again


# --- The image picker and a pasted image -------------------------------------------------------------


def test_the_image_picker_takes_photos_on_phones_and_a_pasted_image(page: Page, agent, signed_in, screenshot):
    endpoint = agent("limited")
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    picker = page.locator("[data-image-picker]")
    expect(picker).to_have_attribute("accept", "image/*")
    expect(picker).to_have_attribute("capture", "environment")
    page.fill("#message", "What is in this picture?")
    page.locator("#message").evaluate(
        """(area, bytes) => {
          const file = new File([new Uint8Array(bytes)], "image.png", {type: "image/png"});
          const data = new DataTransfer();
          data.items.add(file);
          const paste = {clipboardData: data, bubbles: true, cancelable: true};
          area.dispatchEvent(new ClipboardEvent("paste", paste));
        }""",
        list(PNG_1PX),
    )
    expect(page.locator("[data-image-status]")).to_contain_text("pasted-image-1.png")
    expect(page.locator("#message")).to_have_value("What is in this picture?")  # the words stay
    screenshot("capabilities-image-pasted")
    page.locator("[data-composer] button.button-primary").click()
    wait_run(page)
    pasted = Attachment.objects.get(message__content="What is in this picture?")
    assert (pasted.name, pasted.mime_type) == ("pasted-image-1.png", "image/png")
    page.set_input_files(
        "[data-image-picker]", files=[{"name": "photo.png", "mimeType": "image/png", "buffer": PNG_1PX}]
    )
    expect(page.locator("[data-image-status]")).to_contain_text("photo.png")


# --- The throttle of custom.rateLimit ----------------------------------------------------------------


def test_sends_past_the_declared_rate_are_refused_and_the_message_is_kept(
    page: Page, agent, signed_in, screenshot
):
    endpoint = agent("limited")
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    status = page.locator("#throttle-status")
    expect(status).to_contain_text("2 of 2 messages left this minute")
    send(page, "one")
    wait_run(page)
    expect(status).to_contain_text("1 of 2 messages left")
    send(page, "two")
    wait_run(page)
    expect(status).to_contain_text("0 of 2 messages left")
    expect(status).to_contain_text("the next is possible in")
    send(page, "three, please")
    expect(page.locator("#composer-errors")).to_contain_text("at most 2 messages a minute")
    expect(page.locator("#message")).to_have_value("three, please")
    screenshot("capabilities-throttled")
    assert not Message.objects.filter(content="three, please").exists()
    assert Message.objects.filter(conversation__endpoint=endpoint, role="user").count() == 2


# --- The explain view of a Strands-shaped declaration ------------------------------------------------


def test_a_strands_declaration_is_explained_down_to_its_fields(page: Page, agent, signed_in, screenshot):
    endpoint = agent("strands")
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    page.locator("[data-open-explain]").click()  # the explain panel is a dialog the button opens
    explain = page.locator("#explain")
    expect(explain).to_be_visible()
    expect(explain.locator("[data-shape]")).to_contain_text("Read as AWS Strands")
    approvals = explain.locator("[data-explain=approvals]")
    approvals.locator("summary").click()
    chain = approvals.locator("[data-provenance]")
    expect(chain.first).to_be_visible()
    expect(approvals).to_contain_text("features.interrupts")
    expect(approvals).to_contain_text("features.toolCallInterruptEditedArgs")
    expect(approvals.locator("[data-provenance] li", has_text="features.interrupts").first).to_contain_text(
        "true"
    )
    screenshot("capabilities-strands-explain")


# --- Connection strategies -------------------------------------------------------------------------


def test_an_agent_that_does_not_stream_is_read_whole_and_says_so(page: Page, agent, signed_in):
    endpoint = agent("oneshot")
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    expect(page.locator("[data-control=transport]")).to_contain_text("does not stream")
    expect(page.locator("[data-control=transport]")).to_contain_text("the answer arrives complete")
    send(page, "hello")
    # While it works: that the answer comes all at once, and for how long it has worked.
    status = last_run(page).locator(".run-status")
    expect(status.locator("[data-whole-answer]")).to_have_text(
        "This agent answers all at once: its whole answer appears when it is ready."
    )
    clock = status.locator("[data-elapsed-label]")
    expect(clock).to_have_text(re.compile(r"^[12] s$"), timeout=ONESHOT_WORK * 1000)
    expect(status).to_contain_text("Working for")
    assert last_run(page).locator(".msg-assistant").count() == 0  # nothing half-said meanwhile
    wait_run(page)
    assert answer(page).strip() == "".join(ANSWER_PARTS).strip()
    expect(status.locator("[data-whole-answer]")).to_have_count(0)


# --- Progress against the declared bounds ----------------------------------------------------------


def test_a_run_counts_its_steps_and_time_against_the_declared_bounds_and_again_after_a_reload(
    page: Page, demo: str, signed_in, settings
):
    settings.AGENTS_UI_DEMO_PACING = 0.02
    signed_in()
    open_agent(page, demo, "planner")  # declares at most 5 iterations and 30 s
    send(page, "Plan the product launch in Berlin")
    progress = last_run(page).locator("[data-progress-line]")
    expect(progress).to_contain_text(re.compile(r"Step [1-5] of at most 5"), timeout=TIMEOUT)
    expect(progress).to_contain_text(re.compile(r"Elapsed \d+ s of at most 30 s"))
    wait_run(page)
    expect(progress).to_have_text(re.compile(r"^\s*\d steps of at most 5 · Took \d+ s of at most 30 s\s*$"))
    shown = progress.inner_text()
    expect(last_run(page).locator("[data-past-bound]:visible")).to_have_count(0)
    page.reload()
    expect(last_run(page).locator("[data-progress-line]")).to_have_text(shown)


def test_a_run_that_goes_past_its_declared_bounds_says_so_while_it_goes(page: Page, agent, signed_in):
    endpoint = agent("bounded")  # at most 1 iteration and 1 s; it takes 2 steps and 10 s
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    send(page, "hello")
    status = last_run(page).locator(".run-status")
    # The browser's clock passes the bound before the server says anything more.
    expect(status.locator("[data-past-bound=time]")).to_be_visible(timeout=(BOUNDED_WORK - 0.5) * 1000)
    expect(status.locator("[data-steps]")).to_have_text("Step 1 of at most 1", timeout=1)
    expect(status.locator("[data-past-bound=steps]")).to_have_text(
        "This run went past its declared bound: 2 steps, where the agent declares at most 1.",
        timeout=TIMEOUT,
    )
    wait_run(page)
    expect(status.locator("[data-past-bound=time]")).to_have_text(
        "This run went past its declared bound: the agent declares it stops within 1 s."
    )
    expect(status.locator("[data-progress-line]")).to_contain_text(
        re.compile(r"2 steps of at most 1 · Took (1[0-9]|[2-9][0-9]) s")
    )


def test_a_cut_stream_resumes_from_the_last_event_and_shows_nothing_twice(page: Page, agent, signed_in):
    endpoint = agent("resumable")
    signed_in()
    open_agent(page, page.url.rstrip("/"), endpoint.slug)
    expect(page.locator("[data-control=transport]")).to_contain_text("resumable")
    started = time.monotonic()
    send(page, "hello")
    wait_run(page)
    assert time.monotonic() - started < TIMEOUT / 1000
    text = answer(page)
    assert text.strip() == "".join(ANSWER_PARTS).strip()
    for part in ANSWER_PARTS:
        assert text.count(part.strip()) == 1
    saved = Message.objects.get(conversation__endpoint=endpoint, role="assistant")
    assert saved.content == "".join(ANSWER_PARTS)
    assert str(saved.run_id) in CUT_RUNS  # the first connection was cut indeed


# --- Images and audio in answers -----------------------------------------------------------------


def test_an_answers_image_is_displayed_and_its_audio_clip_plays_and_again_after_a_reload(
    page: Page, demo: str, signed_in, screenshot
):
    signed_in()
    open_agent(page, demo, "studio")
    send(page, "Draw a lighthouse")
    wait_run(page)
    run = last_run(page)
    picture = run.locator("figure[data-media=image] img")
    expect(picture).to_be_visible()
    expect(picture).to_have_attribute("alt", "A sun over hills, in the colours of a lighthouse")
    # Decoded and drawn: the browser knows its size.
    assert picture.evaluate("img => img.complete && img.naturalWidth") == 48
    clip = run.locator("figure[data-media=audio] audio")
    expect(clip).to_have_attribute("controls", "")
    duration = clip.evaluate(
        """a => new Promise(done => {
            if (a.readyState >= 1) return done(a.duration);
            a.addEventListener("loadedmetadata", () => done(a.duration));
            a.addEventListener("error", () => done(-1));
            a.load();
        })"""
    )
    assert abs(duration - 0.6) < 0.05
    played = clip.evaluate(
        "a => { a.muted = true; return a.play().then(() => new Promise(r => a.onended = () => r(true))); }"
    )
    assert played is True
    screenshot("media-in-answers")
    page.reload()
    expect(last_run(page).locator("figure[data-media=image] img")).to_be_visible()
    expect(last_run(page).locator("figure[data-media=audio] audio")).to_have_count(1)

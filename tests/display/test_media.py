"""Images and audio in answers: content parts of a tool's result and Markdown images, each checked
before the page shows it; never fetched, bounded, of allowed types only, and only where the plan
shows media."""

from __future__ import annotations

import base64
import json
import re

import pytest
from ag_ui.core import (
    AudioPart,
    DataSource,
    FileSource,
    ImagePart,
    TextPart,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    UrlSource,
)
from django.conf import settings

from agents_ui.capabilities import Observations
from agents_ui.decisions import decide
from agents_ui.demo.agui.studio import picture_png, sound_wav
from agents_ui.display import media
from agents_ui.display.markdown import markdown_html, streaming_markdown
from agents_ui.display.run_view import RunView, render_run
from agents_ui.models import Conversation, Run, RunEvent
from agents_ui.runs.event_log import event_record, replay
from agents_ui.sdk import TranscriptBuilder
from tests.factories import make_endpoint, make_user

PNG = picture_png("a lighthouse")
WAV = sound_wav("a lighthouse")
PNG64 = base64.b64encode(PNG).decode()
WAV64 = base64.b64encode(WAV).decode()
DECLARED = {"multimodal": {"output": {"image": True, "audio": True}}}


def image(value: str = PNG64, mime_type: str = "image/png", **metadata) -> ImagePart:
    return ImagePart(source=DataSource(value=value, mime_type=mime_type), metadata=metadata or None)


def audio(value: str = WAV64, mime_type: str = "audio/wav") -> AudioPart:
    return AudioPart(source=DataSource(value=value, mime_type=mime_type))


def result_events(content) -> list:
    return [
        ToolCallStartEvent(tool_call_id="c", tool_call_name="draw_picture"),
        ToolCallEndEvent(tool_call_id="c"),
        ToolCallResultEvent(message_id="t", tool_call_id="c", content=content),
    ]


def new_run() -> Run:
    conversation = Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.COMPLETED)
    run.conversation = conversation
    return run


def page(run: Run, transcript, declaration=DECLARED, observed: Observations | None = None) -> str:
    plan = decide(capabilities=declaration, observed=observed or Observations())
    return render_run(RunView(run, transcript, plan))


@pytest.mark.django_db
def test_an_image_and_an_audio_clip_in_a_tools_result_are_shown_and_playable():
    transcript = TranscriptBuilder().apply_all(
        result_events([TextPart(text="A picture."), image(alt="A sun over hills"), audio()])
    )
    html = page(new_run(), transcript)
    assert f'<img src="data:image/png;base64,{PNG64}" alt="A sun over hills">' in html
    assert f'<audio controls preload="metadata" src="data:audio/wav;base64,{WAV64}"' in html
    # The result's text beside them, never their bytes as JSON.
    assert "A picture." in html and html.count(PNG64) == 1 and '"value"' not in html


@pytest.mark.django_db
def test_media_seen_in_a_run_are_shown_though_never_declared_and_the_reasons_say_so():
    transcript = TranscriptBuilder().apply_all(result_events([image()]))
    assert transcript.observed.media
    hidden = page(new_run(), transcript, declaration={})
    assert "<img" not in hidden and "data-media-hidden" in hidden
    assert "not shown: images and audio in answers are turned off for this agent" in hidden
    observed = Observations.of(transcript.observed)
    assert "<img" in page(new_run(), transcript, declaration={}, observed=observed)
    control = decide(capabilities={}, observed=observed)["media-output"]
    assert control.shown and "The agent sent an image or audio in a run although it was never declared" in [
        r.text for r in control.reasons
    ]


@pytest.mark.django_db
def test_after_a_reload_the_media_are_shown_again_from_the_event_log():
    run = new_run()
    for seq, event in enumerate(result_events([image(), audio()]), start=1):
        kind, payload = event_record(event)
        RunEvent.objects.create(run=run, seq=seq, type=kind, payload=json.loads(payload))
    html = page(run, replay(run))
    assert f'src="data:image/png;base64,{PNG64}"' in html and f'src="data:audio/wav;base64,{WAV64}"' in html


def test_an_http_address_is_a_link_never_loaded_and_a_provider_file_is_only_named():
    linked = media.of_part(ImagePart(source=UrlSource(value="https://cdn.example/cat.png")))
    assert linked.link == "https://cdn.example/cat.png" and not linked.src
    for url in ("javascript:alert(1)", "file:///etc/passwd", "//cdn.example/cat.png", "ftp://x/y.png"):
        shown = media.of_part(ImagePart(source=UrlSource(value=url)))
        assert not shown.src and not shown.link and "not an http(s) link" in shown.note
    handle = media.of_part(AudioPart(source=FileSource(value="file-abc123")))
    assert not handle.src and not handle.link and "only the agent's provider can open" in handle.note


@pytest.mark.parametrize(
    ("part", "note"),
    [
        (
            image(mime_type="image/svg+xml", value=base64.b64encode(b"<svg/>").decode()),
            "not a type shown here",
        ),
        (image(mime_type="text/html", value=base64.b64encode(b"<b>").decode()), "not a type shown here"),
        (image(value=WAV64), "labelled image/png, but its bytes are audio/x-wav"),
        (audio(value=PNG64), "labelled audio/wav, but its bytes are image/png"),
        (image(value="not base64!"), "not valid base64"),
        (image(value=base64.b64encode(b"\x89PNG" + b"\0" * (media.MAX_MEDIA_BYTES)).decode()), "larger than"),
        (
            ImagePart(source=UrlSource(value="data:image/png;base64," + "A" * (2 * media.MAX_MEDIA_BYTES))),
            "larger",
        ),
    ],
)
def test_inline_bytes_show_only_when_small_valid_and_of_an_allowed_type_they_really_are(part, note):
    shown = media.of_part(part)
    assert not shown.src and note in shown.note


def test_a_data_url_source_is_inline_bytes_and_a_result_shows_at_most_a_few():
    part = ImagePart(source=UrlSource(value=f"data:image/png;base64,{PNG64}"))
    assert media.of_part(part).src == f"data:image/png;base64,{PNG64}"
    found, more = media.of_parts([image()] * (media.MAX_MEDIA_ITEMS + 3))
    assert len(found) == media.MAX_MEDIA_ITEMS and more == 3
    assert media.of_parts("plain text") == ([], 0)


@pytest.mark.django_db
def test_a_markdown_image_inline_is_shown_checked_and_an_address_is_a_link():
    text = (
        f"Here: ![a chart](data:image/png;base64,{PNG64}) and ![clip](data:audio/wav;base64,{WAV64}) "
        "and ![remote](https://cdn.example/a.png) and ![svg](data:image/svg+xml;base64,PHN2Zz4=)"
    )
    html = markdown_html(text, media=True)
    assert f'<img src="data:image/png;base64,{PNG64}" alt="a chart" data-media="image">' in html
    assert f'src="data:audio/wav;base64,{WAV64}"' in html and "<audio controls" in html
    assert '<a href="https://cdn.example/a.png"' in html and 'https://cdn.example/a.png" alt' not in html
    assert "svg" not in re.findall(r'src="([^"]*)"', html).__str__()
    # Not shown where the plan shows no media: the alt text, no element.
    plain = markdown_html(text)
    assert "<img" not in plain and "<audio" not in plain
    assert "[image: a chart]" in plain and "[audio clip: clip]" in plain
    # A live answer is never cut inside an image's data: its images show as the finished one's.
    live = streaming_markdown(text, media=True)
    assert f'<img src="data:image/png;base64,{PNG64}"' in live.settled_html + live.tail_html
    assert f'src="data:audio/wav;base64,{WAV64}"' in live.settled_html + live.tail_html


def test_links_in_answers_keep_their_http_address_and_lose_any_other():
    html = markdown_html(
        "[docs](https://docs.example/x) [mail](mailto:a@b.example) [js](javascript:alert(1)) "
        f"[data](data:image/png;base64,{PNG64}) [clip](data:audio/wav;base64,{WAV64})"
    )
    assert '<a href="https://docs.example/x" rel="noopener noreferrer nofollow">docs</a>' in html
    assert '<a href="mailto:a@b.example"' in html
    assert "javascript:" not in re.findall(r'href="([^"]*)"', html).__str__()
    assert "data:" not in re.findall(r'href="([^"]*)"', html).__str__()


def test_the_page_loads_media_from_itself_and_inline_data_only_never_from_an_agents_host():
    csp = settings.SECURE_CSP
    for directive in ("img-src", "media-src"):
        assert not [source for source in csp[directive] if "http" in source or source == "*"]

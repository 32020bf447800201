"""A run's fragments for the live stream: each one swaps in by its own id, and only its root does."""

from __future__ import annotations

import re

import pytest
from ag_ui.core import (
    ActivityDeltaEvent,
    ActivitySnapshotEvent,
    StateSnapshotEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallStartEvent,
)

from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.markdown import markdown_html, streaming_markdown
from agents_ui.display.run_view import RunView
from agents_ui.display.stream_diff import StreamRenderer
from agents_ui.display.values import dom_id
from agents_ui.models import Conversation, Run
from agents_ui.sdk import TranscriptBuilder, a2ui
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db


def swapped_ids(html: str) -> list[str]:
    """The ids of the elements marked for an out-of-band swap, in order."""
    return re.findall(r'<[a-z]+ [^>]*?id="([^"]+)"[^>]*? hx-swap-oob="true"', html)


@pytest.fixture
def stream():
    conversation = Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
    run.conversation = conversation
    builder = TranscriptBuilder()
    return run, builder, StreamRenderer(RunView(run, builder.transcript, decide(user=UserAbilities())))


def test_the_first_look_swaps_the_run_body_alone_not_the_parts_inside_it(stream):
    run, builder, renderer = stream
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="Hello"))
    builder.apply(ToolCallStartEvent(tool_call_id="c", tool_call_name="search"))
    html = renderer.first()
    assert swapped_ids(html) == [f"run-{run.pk}-body"]
    assert html.count("hx-swap-oob") == 1
    assert f'id="run-{run.pk}-status"' in html and 'data-tool-call="search"' in html


def test_a_part_that_changed_is_swapped_by_its_own_id(stream):
    run, builder, renderer = stream
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="<i>Hello"))
    renderer.first()
    builder.apply(TextMessageEndEvent(message_id="m"))
    run.status = Run.Status.COMPLETED
    html = renderer.update()
    ids = swapped_ids(html)
    assert ids[0].startswith("msg-") and f"run-{run.pk}-status" in ids
    assert html.count("hx-swap-oob") == len(ids)
    assert "&lt;i&gt;Hello" in html


def test_the_state_panel_is_the_workspace_partial_swapped_in_with_the_document_escaped(stream):
    _, builder, renderer = stream
    builder.apply(StateSnapshotEvent(snapshot={"step": "<script>"}))
    html = renderer.state_fragment()
    assert html.startswith('<div id="state-document" class="state-document" hx-swap-oob="true">')
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert renderer.state_fragment() == ""  # unchanged: nothing to send


def test_a_growing_answer_sends_only_its_tail_until_something_else_changes(stream):
    run, builder, renderer = stream
    body = f'id="run-{run.pk}-body"'
    assert body in renderer.first()
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    assert renderer.update() == ""  # nothing to show yet
    builder.apply(TextMessageContentEvent(message_id="m", delta="<b>Hi"))
    assert body in renderer.update()  # its first characters: the body, with the new message
    builder.apply(TextMessageContentEvent(message_id="m", delta=" & more"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="!"))
    target = f"{dom_id('msg', 'm')}-tail"
    assert (
        renderer.update()
        == f'<div class="md-tail" id="{target}" hx-swap-oob="true"><p>&lt;b&gt;Hi &amp; more!</p>\n</div>'
    )
    assert renderer.update() == ""
    run.status = Run.Status.COMPLETED  # the run's status changed: its section is sent again
    assert f'id="run-{run.pk}-status"' in renderer.update()
    builder.apply(ToolCallStartEvent(tool_call_id="c", tool_call_name="search"))
    assert body in renderer.update()  # a new tool call: the body again
    builder.apply(TextMessageEndEvent(message_id="m"))
    complete = renderer.update()
    assert "&lt;b&gt;Hi &amp; more!" in complete and "md-tail" not in complete


def test_a_plain_line_grows_by_its_new_characters_until_markdown_may_change_it(stream):
    _, builder, renderer = stream
    renderer.first()
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="Heat pumps"))
    renderer.update()  # the body, with the new message
    line = f"{dom_id('msg', 'm')}-line"
    builder.apply(TextMessageContentEvent(message_id="m", delta=" move heat"))
    first = renderer.update()  # the tail becomes a line the stream can append to
    assert f'<p id="{line}">Heat pumps move heat</p>' in first
    builder.apply(TextMessageContentEvent(message_id="m", delta=" [1], mostly"))
    assert renderer.update() == f'<span hx-swap-oob="beforeend:#{line}"> [1], mostly</span>'
    builder.apply(TextMessageContentEvent(message_id="m", delta=" **fast**"))
    html = renderer.update()  # Markdown may change the line: the tail is rendered again
    assert "<strong>fast</strong>" in html and "beforeend" not in html


def test_a_streaming_answer_is_markdown_while_it_streams(stream):
    _, builder, renderer = stream
    renderer.first()
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="Steps:\n\n- **one"))
    assert "<li><strong>one</strong></li>" not in renderer.update()  # the body, with the list
    builder.apply(TextMessageContentEvent(message_id="m", delta="**\n- two"))
    html = renderer.update()
    assert "<li><strong>one</strong></li>" in html and "<li>two</li>" in html and "**" not in html


def test_a_long_streaming_answer_settles_its_blocks_so_each_swap_stays_small():
    text, frozen, settled = "", 0, []
    for n in range(400):
        text += f"Paragraph {n} with **bold** words.\n\n" if n % 3 else f"- item {n}\n"
        live = streaming_markdown(text, frozen)
        frozen = live.frozen
        settled.append(live.settled_html)
        assert len(live.tail_html) < 4_000
    assert frozen > len(text) - 2_000
    assert "".join(settled) + live.tail_html == markdown_html(text)  # blocks, not characters, settle


def test_one_long_growing_paragraph_is_split_near_its_end_while_it_streams():
    text = "word " * 5_000
    live = streaming_markdown(text)
    assert len(text) - live.frozen < 2_000 and live.tail_html.startswith("<p>word")
    assert streaming_markdown(text + "more", live.frozen).frozen >= live.frozen


def test_code_blocks_are_highlighted_with_classes_never_styles():
    html = markdown_html('```python\ndef f():\n    return "<s>"\n```\n\n```nosuchlanguage\n<b>x</b>\n```')
    assert '<pre class="code" data-lang="python"><code><span class="k">def</span>' in html
    assert "&lt;s&gt;" in html and "style=" not in html
    assert "<code>&lt;b&gt;x&lt;/b&gt;\n</code>" in html  # an unknown language: shown plain
    # An agent cannot forge the highlighter's markup: raw HTML stays text.
    assert "<span" not in markdown_html('<span class="k" style="color:red">x</span>')


@pytest.mark.parametrize(
    "line",
    [
        "[1234567890123456] [1234567890123457] ",
        'Hello, world. It is "fine"?',
        "Solar panels",
        "1. a",
        "_x_",
        "a: b",
    ],
)
def test_a_live_plain_line_renders_as_markdown_renders_it(line):
    assert streaming_markdown(line).tail_html == markdown_html(line)


def test_an_open_code_block_is_a_code_block_while_it_streams():
    text = "Here it is:\n\n```python\ndef f(x):\n    return x\n"
    live = streaming_markdown(text)
    assert '<pre class="code" data-lang="python"><code><span class="k">def</span>' in live.tail_html
    assert "<p>def" not in live.tail_html
    # The closing fence, while it arrives, is neither code nor text.
    for arriving in ("`", "``", "```"):
        assert "`" not in streaming_markdown(text + arriving).tail_html


def test_a_long_open_code_block_stays_code_across_every_swap():
    text, frozen, shown = "Intro.\n\n```python\n", 0, ""
    for n in range(600):
        text += f"    return value_{n}\n"
        live = streaming_markdown(text, frozen)
        frozen = live.frozen
        shown += live.settled_html
        # Never a paragraph: each part of the block, settled or live, is a code block.
        assert "<p>return" not in live.tail_html and '<pre class="code"' in live.tail_html
        assert len(live.tail_html) < 20_000
    assert frozen > len(text) - 2_000
    assert shown.count("<p>") == 1 and "<p>return" not in shown  # the intro, then only code


def test_a_live_plain_line_inside_an_open_code_block_is_code(stream):
    _, builder, renderer = stream
    renderer.first()
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="```\n" + "x = 1\n" * 400))
    renderer.update()
    builder.apply(TextMessageContentEvent(message_id="m", delta="return it"))
    html = renderer.update()
    assert "<pre" in html and "<p>return it" not in html and "-line" not in html


def test_an_activity_shows_at_its_place_and_is_swapped_whole_when_a_delta_changes_it(stream):
    run, builder, renderer = stream
    builder.apply(TextMessageStartEvent(message_id="m", role="assistant"))
    builder.apply(TextMessageContentEvent(message_id="m", delta="Here it is"))
    renderer.first()
    content = {"a2ui_operations": [
        {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": a2ui.BASIC_CATALOG_ID}},
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": [
            {"id": "root", "component": "Text", "text": {"path": "/status"}}]}},
        {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": {"status": "holding"}}},
    ]}  # fmt: skip
    builder.apply(ActivitySnapshotEvent(message_id="a", activity_type="a2ui-surface", content=content))
    html = renderer.update()
    assert swapped_ids(html) == [
        f"run-{run.pk}-body"
    ]  # a new block: the body again, the block after the text
    assert html.index('data-message="m"') < html.index('data-activity="a2ui-surface"') and "holding" in html
    builder.apply(
        ActivityDeltaEvent(
            message_id="a",
            activity_type="a2ui-surface",
            patch=[
                {"op": "replace", "path": "/a2ui_operations/2/updateDataModel/value/status", "value": "done"}
            ],
        )
    )
    html = renderer.update()
    [swapped] = swapped_ids(html)
    assert swapped.startswith("act-") and "done" in html and "holding" not in html
    assert renderer.update() == ""  # nothing changed since


@pytest.mark.parametrize(
    "address",
    ["/accounts/logout/", "../runs/x/stop/", "//evil.example.test/", "java%09script:alert(1)", "ftp://x/"],
)
def test_an_agents_link_to_a_page_it_picks_here_or_an_odd_scheme_is_text(address):
    html = markdown_html(f"[go]({address})")
    assert "href" not in html and ">go</a>" in html


@pytest.mark.parametrize(
    "address", ["https://example.test/a", "http://example.test/", "mailto:x@example.test", "#note-1"]
)
def test_an_agents_link_to_its_own_site_mail_or_a_note_stays_a_link(address):
    assert f'href="{address}"' in markdown_html(f"[go]({address})")

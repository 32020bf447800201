"""The SSE parser, byte by byte."""

from __future__ import annotations

import pytest

from agents_ui.sdk import ProtocolError, RunTooLargeError, SseFrame, SseParser
from agents_ui.sdk.sse import DEFAULT_MAX_TOTAL_BYTES, INVALID_UTF8_NOTE

STREAM = (
    b"\xef\xbb\xbf: hello\r\n\r\n"
    b'data: {"a":1}\r\n\r\n'
    b"id: 7\revent: message:delta\rdata: line1\rdata: line2\r\r"
    b"retry: 10\nunknown: x\ndata:no-space\n\n"
    b"event: empty\n\n"
    b"data: [DONE]\n\n"
)
EXPECTED = [
    SseFrame('{"a":1}'),
    SseFrame("line1\nline2", "message:delta", "7"),
    SseFrame("no-space", None, "7"),
    SseFrame("[DONE]", None, "7"),
]


@pytest.mark.parametrize("size", [1, 2, 3, 5, 16, 1000])
def test_frames_are_the_same_whatever_the_chunking(size):
    parser = SseParser()
    frames = []
    for i in range(0, len(STREAM), size):
        frames += parser.feed(STREAM[i : i + size])
    assert frames == EXPECTED
    assert not parser.has_partial_frame


def test_crlf_split_across_chunks_is_one_line_end():
    parser = SseParser()
    assert parser.feed(b"data: a\r") == []
    # "\r\n" ends the line, the lone "\r" ends the frame; the "\n" after it belongs to that CRLF.
    assert parser.feed(b"\n\r") == [SseFrame("a")]
    assert parser.feed(b"\ndata: b\n\n") == [SseFrame("b")]


def test_partial_frame_is_reported():
    parser = SseParser()
    parser.feed(b'data: {"type":"RUN_STARTED"}\n\ndata: {"ty')
    assert parser.has_partial_frame


def test_frame_limit():
    parser = SseParser(max_frame_bytes=100)
    parser.feed(b"data: " + b"x" * 50)
    with pytest.raises(ProtocolError, match="exceeded 100 bytes"):
        parser.feed(b"x" * 60)
    with pytest.raises(ProtocolError, match="exceeded 100 bytes"):
        SseParser(max_frame_bytes=100).feed(b"data: " + b"x" * 200 + b"\n\n")


def test_total_limit_is_per_run_and_says_where_the_answer_was_cut():
    parser = SseParser(max_total_bytes=30)
    parser.feed(b"data: 1\n\n")
    with pytest.raises(RunTooLargeError, match=r"^The agent sent more than 30 bytes in one run; the answer"):
        parser.feed(b"data: 22222222222222222222\n\n")
    assert DEFAULT_MAX_TOTAL_BYTES == 32 * 1024 * 1024
    with pytest.raises(RunTooLargeError) as cut:
        SseParser(max_total_bytes=DEFAULT_MAX_TOTAL_BYTES).feed(b": " * (DEFAULT_MAX_TOTAL_BYTES // 2 + 1))
    assert cut.value.message == "The agent sent more than 32 MB in one run; the answer was cut there."
    assert cut.value.code == "run_too_large"


@pytest.mark.parametrize("size", [1, 7, 1000])
def test_a_frame_that_is_not_utf8_is_left_out_and_the_frames_around_it_are_kept(size):
    stream = b'data: {"a":1}\n\ndata: \xff\xfe\n\ndata: {"b":2}\n\ndata: caf\xc3\xa9\n\n'
    notes: list[str] = []
    parser = SseParser(notes=notes)
    frames = []
    for i in range(0, len(stream), size):
        frames += parser.feed(stream[i : i + size])
    assert frames == [SseFrame('{"a":1}'), SseFrame('{"b":2}'), SseFrame("caf\u00e9")]
    assert parser.dropped_frames == 1
    assert notes == [INVALID_UTF8_NOTE]
    parser.feed(b"data: \xc3\n\n")
    assert parser.dropped_frames == 2 and notes == [INVALID_UTF8_NOTE]

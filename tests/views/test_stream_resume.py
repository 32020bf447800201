"""A run's event stream asked again after a cut, by any process: every frame carries its cursor (the
run's last event seq it shows), and a stream asked with one (Last-Event-ID, or the page's `cursor`
parameter) goes on from there: the growing answer sent whole once, nothing else of the run sent
again. A cursor that is not one of ours, or that the event log does not reach, gets the page whole."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from agents_ui.views import stream
from tests.runs.test_fanout import answer, new_run, store

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _no_redis(settings):
    settings.AGENTS_UI_FANOUT_URL = ""


async def first_frame(run, **headers) -> str:
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(lambda: run.conversation.user)())
    query = headers.pop("query", "")
    response = await client.get(f"/runs/{run.pk}/events/{query}", headers=headers)
    frames = response.streaming_content
    try:
        return (await anext(frames)).decode()
    finally:
        await frames.aclose()


def words(frame: str) -> list[str]:
    return re.findall(r"\bw\d+\b", frame)


async def test_every_frame_says_its_cursor_and_how_soon_to_ask_again():
    run = await sync_to_async(new_run)()
    await store(run, answer(10)[:8])  # begun, six words said
    frame = await first_frame(run)
    assert frame.startswith("retry: 1000\nid: 8\nevent: update\n")
    assert f'id="run-{run.pk}-body"' in frame  # the page whole: the stream may be a moment after it
    assert words(frame) == [f"w{i}" for i in range(6)]


@pytest.mark.parametrize("asked", [{"Last-Event-ID": "5"}, {"query": "?cursor=5"}])
async def test_a_stream_asked_again_goes_on_from_its_cursor(asked):
    run = await sync_to_async(new_run)()
    await store(run, answer(10)[:8])
    frame = await first_frame(run, **asked)
    assert frame.startswith("retry: 1000\nid: 8\n")
    # Not the run's body: what the person has open or half typed on the page stays as it is.
    assert f'id="run-{run.pk}-body"' not in frame
    # The answer that grows, whole once (the browser's copy of it is replaced, never added to).
    assert re.search(r'<article class="msg msg-assistant[^"]*" id="msg-[0-9a-f]+"', frame)
    assert words(frame) == [f"w{i}" for i in range(6)]
    assert f'id="run-{run.pk}-status"' in frame


@pytest.mark.parametrize(
    "asked",
    [{"Last-Event-ID": c} for c in ("abc", "-1", "1e3", "9" * 13, " ")] + [{"query": "?cursor=%D9%A3"}],
)
async def test_a_cursor_that_is_not_one_of_ours_gets_the_page_whole(asked):
    run = await sync_to_async(new_run)()
    await store(run, answer(10)[:8])
    frame = await first_frame(run, **asked)
    assert f'id="run-{run.pk}-body"' in frame and words(frame) == [f"w{i}" for i in range(6)]


async def test_a_cursor_past_the_event_log_gets_the_page_whole_after_a_moment(monkeypatch):
    monkeypatch.setattr(stream, "CURSOR_WAIT_SECONDS", 0.3)
    run = await sync_to_async(new_run)()
    await store(run, answer(10)[:8])
    frame = await first_frame(run, **{"Last-Event-ID": "40"})
    assert frame.startswith("retry: 1000\nid: 8\n") and f'id="run-{run.pk}-body"' in frame

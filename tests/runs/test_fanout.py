"""The live fan-out on a real Redis (tests/support/redis_server.py): a run's Stream read by followers
of other event loops, each over its own connections, from their cursor; what the Stream misses read
from the database; Redis killed and started again mid-follow; a stop reaching the run's driver."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from ag_ui.core import (
    RunFinishedEvent,
    RunStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
)
from asgiref.sync import sync_to_async

from agents_ui.models import ApprovalRecord, Conversation, Message, Run, RunEvent
from agents_ui.runs.event_log import EventLogReader, event_record
from agents_ui.runs.fanout import CONTROL_CHANNEL, DatabaseTail, InProcessFanout, RedisFanout, fanout
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import start_run, stop_run
from tests.factories import make_endpoint, make_user
from tests.support.waiting import eventually

pytestmark = pytest.mark.django_db(transaction=True)


def new_run(base_url: str = "http://agent.example.test/run") -> Run:
    endpoint = make_endpoint(base_url=base_url)
    conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint, title="hello")
    message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content="hello")
    run = Run.objects.create(
        conversation=conversation,
        status=Run.Status.RUNNING,
        request=RunRequest(message_id=message.pk).as_json(),
    )
    run.conversation = conversation
    return run


def answer(words: int, *, big: int | None = None, size: int = 0) -> list[tuple[int, str, str]]:
    """An AG-UI run's records (seq, type, JSON text): `words` deltas "w<i> " (the `big`-th of `size`)."""
    events = [
        RunStartedEvent(thread_id="t", run_id="r"),
        TextMessageStartEvent(message_id="m", role="assistant"),
    ]
    for i in range(words):
        delta = "x" * size + " " if i == big else f"w{i} "
        events.append(TextMessageContentEvent(message_id="m", delta=delta))
    events += [TextMessageEndEvent(message_id="m"), RunFinishedEvent(thread_id="t", run_id="r")]
    return [(seq, *event_record(event)) for seq, event in enumerate(events, start=1)]


def said(words: int, *, big: int | None = None, size: int = 0) -> str:
    return "".join("x" * size + " " if i == big else f"w{i} " for i in range(words))


async def store(run: Run, records: list[tuple[int, str, str]]) -> None:
    """What the driver's event writer does: the records into the event log."""
    await RunEvent.objects.abulk_create(
        RunEvent(run_id=run.pk, seq=seq, type=type_, payload=json.loads(payload))
        for seq, type_, payload in records
    )


def publish(driver: RedisFanout, run: Run, records: list[tuple[int, str, str]]) -> None:
    for seq, type_, payload in records:
        driver.publish(str(run.pk), seq, type_, payload)


async def flushed(driver: RedisFanout) -> None:
    await eventually(lambda: not driver._queue and (driver._publisher is None or driver._publisher.done()))


def text(log: EventLogReader) -> str:
    messages = log.transcript.messages
    return messages[0].text if messages else ""


def follow_in_another_loop(url: str, run_id, *, until_seq: int, timeout: float = 60):
    """A follower as another process has it: its own thread, event loop and Redis connections.
    Returns (log, tail) once it folded event `until_seq` (or saw the run's end)."""
    result: dict = {}

    async def follow():
        other = RedisFanout(url)
        log = EventLogReader(run_id, "agui")
        tail = result["tail"] = other.tail(log)
        try:
            async with asyncio.timeout(timeout):
                while log.last_seq < until_seq and not tail.ended:
                    await tail.next()
        finally:
            await other.aclose()
        result["log"] = log

    thread = threading.Thread(target=lambda: asyncio.run(follow()), daemon=True)
    thread.start()
    return thread, result


async def joined(thread: threading.Thread, timeout: float = 60) -> None:  # noqa: ASYNC109
    await asyncio.to_thread(thread.join, timeout)
    assert not thread.is_alive(), "the follower did not finish"


async def test_a_follower_in_another_loop_reads_the_stream_from_its_cursor_every_event_once(redis_server):
    run = await sync_to_async(new_run)()
    records = answer(300)
    driver = fanout()
    assert isinstance(driver, RedisFanout)
    # The first 50 are stored already: the follower folds them from the database, then its cursor is 50.
    await store(run, records[:50])
    publish(driver, run, records[:50])
    thread, result = follow_in_another_loop(redis_server.url, run.pk, until_seq=len(records))
    # The rest only reach the database at the run's end: the follower must have them from the Stream.
    for start in range(50, len(records), 25):
        publish(driver, run, records[start : start + 25])
        await asyncio.sleep(0.01)
    await flushed(driver)
    await eventually(lambda: "tail" in result and result["tail"].from_stream == len(records) - 50)
    await store(run, records[50:])
    driver.ended(str(run.pk), len(records))
    await flushed(driver)
    await joined(thread)
    log, tail = result["log"], result["tail"]
    assert text(log) == said(300)
    assert log.last_seq == len(records)
    assert (tail.from_database, tail.from_stream) == (50, len(records) - 50)
    assert log.transcript.outcome is not None  # RUN_FINISHED folded, once
    await driver.aclose()


async def test_a_follower_behind_the_streams_window_reads_the_rest_from_the_database(
    redis_server, settings, monkeypatch, record_property
):
    record_property("fault", "redis-stream-trimmed-under-a-follower")
    settings.AGENTS_UI_FANOUT_STREAM_MAXLEN = 10
    monkeypatch.setattr("agents_ui.runs.fanout.READ_ROWS", 300)  # the gap is read in several goes
    run = await sync_to_async(new_run)()
    records = answer(2000)
    driver, other = fanout(), RedisFanout(redis_server.url)
    await store(run, records[:5])
    log = EventLogReader(run.pk, "agui")
    tail = other.tail(log)
    assert await tail.next() == 5  # the database, up to its cursor
    publish(driver, run, records[5:])
    await store(run, records[5:])
    await flushed(driver)
    driver.ended(str(run.pk), len(records))
    await flushed(driver)
    assert await driver.redis.xlen(f"run:{run.pk}") < 500  # trimmed: the Stream lost most of the run
    async with asyncio.timeout(30):
        while not tail.ended:
            await tail.next()
    assert text(log) == said(2000)
    assert log.last_seq == len(records)
    assert tail.from_database + tail.from_stream == len(records)
    assert tail.from_database > 1500
    await driver.aclose()
    await other.aclose()


async def test_an_event_too_large_for_the_stream_is_read_from_the_database(
    redis_server, settings, record_property
):
    record_property("fault", "event-too-large-for-redis")
    settings.AGENTS_UI_FANOUT_EVENT_MAX_BYTES = 1000
    run = await sync_to_async(new_run)()
    records = answer(20, big=10, size=5000)  # the 13th record: 5 KB
    driver, other = fanout(), RedisFanout(redis_server.url)
    log = EventLogReader(run.pk, "agui")
    tail = other.tail(log)
    assert await tail.next() == 0
    publish(driver, run, records)
    await flushed(driver)
    entry = (await driver.redis.xrange(f"run:{run.pk}", "13-0", "13-0"))[0][1]
    assert entry == {"t": "TEXT_MESSAGE_CONTENT", "big": "1"}  # only marked in the Stream
    await store(run, records[:13])  # the writer has stored up to the large one
    async with asyncio.timeout(30):
        while log.last_seq < len(records):
            await tail.next()
    assert text(log) == said(20, big=10, size=5000)
    assert (tail.from_database, tail.from_stream) == (1, len(records) - 1)
    await driver.aclose()
    await other.aclose()


async def test_redis_killed_and_started_again_mid_follow_the_follower_recovers_every_event_once(
    redis_server, record_property
):
    record_property("fault", "redis-restarted-mid-follow")
    run = await sync_to_async(new_run)()
    records = answer(600)
    driver = fanout()
    thread, result = follow_in_another_loop(redis_server.url, run.pk, until_seq=len(records))

    async def drive(part):  # what a driver does: the Stream at once, the database a moment later
        for start in range(0, len(part), 20):
            chunk = part[start : start + 20]
            publish(driver, run, chunk)
            await store(run, chunk)
            await asyncio.sleep(0.01)
        await flushed(driver)

    await drive(records[:200])
    await eventually(lambda: "tail" in result and result["tail"].from_stream > 0)
    redis_server.kill()
    await drive(records[200:400])  # lost to Redis: the follower reads them from the database
    await eventually(lambda: result["tail"].fallbacks > 0 and result["tail"].log.last_seq >= 400, timeout=30)
    redis_server.start()
    # The driver and the follower both try Redis again (on a busy machine the follower may be later).
    await eventually(lambda: time.monotonic() > max(driver._down_until, result["tail"]._down_until))
    streamed_before = result["tail"].from_stream
    await drive(records[400:])
    driver.ended(str(run.pk), len(records))
    await flushed(driver)
    await joined(thread)
    log, tail = result["log"], result["tail"]
    assert text(log) == said(600)
    assert log.last_seq == len(records)
    assert tail.from_stream > streamed_before  # back on the Stream once Redis was
    assert tail.from_database + tail.from_stream == len(records)
    await driver.aclose()


def _slow_agent():
    async def slow(exchange):
        exchange.start_sse()
        await exchange.send('data: {"type":"RUN_STARTED","threadId":"t","runId":"r"}\n\n')
        await exchange.send('data: {"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}\n\n')
        while not exchange.disconnected.is_set():
            delta = json.dumps({"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "more "})
            await exchange.send(f"data: {delta}\n\n")
            await asyncio.sleep(0.05)

    return slow


async def test_a_stop_sent_from_another_process_reaches_the_driver_at_once(
    redis_server, fake_server, record_property
):
    record_property("fault", "stop-sent-to-another-web-process")
    server = await fake_server(_slow_agent())
    run = await sync_to_async(new_run)(f"{server.url}/slow")
    live = start_run(run)
    await eventually(lambda: live.transcript.messages and "more" in live.transcript.messages[0].text)
    assert isinstance(live.fanout, RedisFanout)
    await asyncio.wait_for(live.fanout.subscribed.wait(), timeout=10)
    # The stored run still says "running": only the control channel tells the driver.
    listeners = await asyncio.to_thread(
        lambda: asyncio.run(
            _broadcast(redis_server.url, run.pk, {"kind": "stop", "reason": "Stopped elsewhere."})
        )
    )
    assert listeners >= 1
    await asyncio.wait_for(live.task, timeout=10)
    stored = await Run.objects.aget(pk=run.pk)
    assert (stored.status, stored.error) == (Run.Status.CANCELLED, "Stopped elsewhere.")
    assert (await Message.objects.aget(run=run)).content.startswith("more ")
    # Its Stream ends with the run's end, and expires.
    last = (await live.fanout.redis.xrevrange(f"run:{run.pk}", count=1))[0]
    assert last == (f"{stored.event_count}-1", {"end": "1"})
    assert 0 < await live.fanout.redis.ttl(f"run:{run.pk}") <= 3600
    await live.fanout.aclose()


async def _broadcast(url: str, run_id, message) -> int:
    other = RedisFanout(url)
    try:
        return await other.broadcast(str(run_id), message)
    finally:
        await other.aclose()


async def test_stop_of_a_run_driven_elsewhere_goes_over_the_control_channel(redis_server):
    run = await sync_to_async(new_run)()
    listener = RedisFanout(redis_server.url)
    pubsub = listener.redis.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(CONTROL_CHANNEL)
    assert not await stop_run(run.pk, "Stopped to change course.")  # not driven here
    async with asyncio.timeout(10):
        while (message := await pubsub.get_message(timeout=1.0)) is None:
            pass
    assert json.loads(message["data"]) == {
        "kind": "stop",
        "reason": "Stopped to change course.",
        "run": str(run.pk),
    }
    await pubsub.aclose()
    await listener.aclose()
    await fanout().aclose()


async def test_a_control_message_for_a_run_nobody_here_drives_is_ignored(redis_server):
    other = RedisFanout(redis_server.url)
    other._on_control(json.dumps({"kind": "stop", "run": "not-driven-here"}))
    other._on_control("not json")
    other._on_control("x" * 10_000)
    await asyncio.sleep(0)
    await other.aclose()


async def test_without_redis_the_fanout_stays_in_the_process(settings, fake_server):
    settings.AGENTS_UI_FANOUT_URL = ""
    assert isinstance(fanout(), InProcessFanout)
    run = await sync_to_async(new_run)()
    records = answer(3)
    await store(run, records)
    log = EventLogReader(run.pk, "agui")
    tail = fanout().tail(log)
    assert isinstance(tail, DatabaseTail)
    assert await tail.next() == len(records) and text(log) == said(3)
    assert not await stop_run(run.pk)  # driven nowhere here: the caller records the stop
    server = await fake_server(_slow_agent())
    driven = await sync_to_async(new_run)(f"{server.url}/slow")
    live = start_run(driven)
    await eventually(lambda: live.transcript.messages and "more" in live.transcript.messages[0].text)
    assert isinstance(live.fanout, InProcessFanout)
    assert await stop_run(driven.pk, "Stopped here.")
    assert (await Run.objects.aget(pk=driven.pk)).error == "Stopped here."


async def test_a_decision_taken_through_another_process_reaches_the_drivers_streams(
    redis_server, fake_server
):
    server = await fake_server(_slow_agent())
    run = await sync_to_async(new_run)(f"{server.url}/slow")
    live = start_run(run)
    await eventually(lambda: live.transcript.messages)
    await asyncio.wait_for(live.fanout.subscribed.wait(), timeout=10)
    decider = await sync_to_async(make_user)("decider")
    await ApprovalRecord.objects.acreate(
        run_id=run.pk, request_id="approval-1", decision=ApprovalRecord.Decision.APPROVED, decided_by=decider
    )
    assert "approval-1" not in live.decided
    message = {"kind": "decided", "request": "approval-1"}
    await asyncio.to_thread(lambda: asyncio.run(_broadcast(redis_server.url, run.pk, message)))
    record = await eventually(lambda: live.decided.get("approval-1"))
    assert record.decided_by.username == "decider"  # loaded with it: the stream shows who decided
    assert await stop_run(run.pk)
    await live.fanout.aclose()


async def test_a_follower_reads_everything_the_stream_holds_for_it_in_one_go(redis_server):
    run = await sync_to_async(new_run)()
    records = answer(1000)
    driver, other = fanout(), RedisFanout(redis_server.url)
    log = EventLogReader(run.pk, "agui")
    tail = other.tail(log)
    assert await tail.next() == 0  # nothing stored yet
    publish(driver, run, records)
    await flushed(driver)
    # Five times what one XREAD returns, in one frame: a fast agent's follower keeps up.
    assert await tail.next() == len(records)
    assert text(log) == said(1000) and tail.from_stream == len(records)
    await driver.aclose()
    await other.aclose()

"""A run's progress against the bounds its agent declares (execution.maxIterations, maxExecutionTime),
and the clock of an agent that answers all at once (transport.streaming: false)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from ag_ui.core import RunFinishedEvent, RunStartedEvent, StepFinishedEvent, StepStartedEvent
from django.utils import timezone

from agents_ui.decisions import decide
from agents_ui.display.run_view import RunView, render_run
from agents_ui.display.stream_diff import StreamRenderer
from agents_ui.display.values import seconds_label
from agents_ui.models import Conversation, Run, RunEvent
from agents_ui.runs.event_log import event_record, replay
from agents_ui.sdk import TranscriptBuilder
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

BOUNDED = {"execution": {"maxIterations": 3, "maxExecutionTime": 30_000}}


def new_run(status: str = Run.Status.RUNNING, **times) -> Run:
    conversation = Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=status, **times)
    run.conversation = conversation
    return run


def steps(builder: TranscriptBuilder, count: int, *, finished: bool = True) -> None:
    for n in range(count):
        builder.apply(StepStartedEvent(step_name=f"step {n}"))
        if finished:
            builder.apply(StepFinishedEvent(step_name=f"step {n}"))


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def status_of(run: Run, builder: TranscriptBuilder, declaration=None) -> str:
    html = render_run(RunView(run, builder.transcript, decide(capabilities=declaration)))
    return html[html.index(f'id="run-{run.pk}-status"') :]


def test_a_live_run_counts_its_steps_and_time_against_the_declared_bounds():
    run = new_run(started_at=timezone.now() - timedelta(seconds=4))
    builder = TranscriptBuilder()
    steps(builder, 2)
    html = status_of(run, builder, BOUNDED)
    assert "Step 2 of at most 3" in text(html)
    assert re.search(r"Elapsed (4|5) s of at most 30 s", text(html))
    # The browser advances the clock from the server's count, and knows the bound.
    assert re.search(r'data-elapsed="4\.\d" data-bound="30"', html)
    past = re.search(r'<p [^>]*data-past-bound="time"[^>]*>', html).group(0)
    assert "hidden" in past  # not past the bound yet


def test_before_its_first_step_a_run_says_how_many_it_may_take():
    html = status_of(new_run(), TranscriptBuilder(), BOUNDED)
    assert "No step yet, at most 3" in text(html)


def test_a_run_past_its_declared_number_of_steps_says_so():
    builder = TranscriptBuilder()
    steps(builder, 4)
    html = status_of(new_run(), builder, BOUNDED)
    assert "Step 4 of at most 3" in text(html)
    assert "This run went past its declared bound: 4 steps, where the agent declares at most 3." in text(html)


def test_a_finished_run_that_took_longer_than_declared_says_so():
    start = timezone.now() - timedelta(minutes=5)
    run = new_run(Run.Status.COMPLETED, started_at=start, finished_at=start + timedelta(seconds=42))
    builder = TranscriptBuilder()
    steps(builder, 3)
    html = status_of(run, builder, BOUNDED)
    assert "3 steps of at most 3 · Took 42 s of at most 30 s" in text(html)
    assert "data-elapsed=" not in html  # over: the clock stands still
    past = re.search(r'<p [^>]*data-past-bound="time"[^>]*>', html).group(0)
    assert "hidden" not in past
    assert "past its declared bound: the agent declares it stops within 30 s" in text(html)
    assert 'data-past-bound="steps"' not in html


def test_steps_are_counted_where_the_agent_declares_no_bound():
    builder = TranscriptBuilder()
    steps(builder, 1, finished=False)
    html = status_of(new_run(), builder)
    assert "Step 1" in text(html) and "at most" not in text(html)
    assert "data-elapsed" not in html  # no bound to hold the time against


def test_nothing_is_shown_without_a_bound_or_a_step():
    assert "data-progress" not in status_of(new_run(), TranscriptBuilder())
    assert "data-progress" not in status_of(new_run(), TranscriptBuilder(), {"execution": {}})


def test_an_agent_that_does_not_stream_shows_that_it_answers_at_once_and_how_long_it_works():
    run = new_run(started_at=timezone.now() - timedelta(seconds=2))
    html = status_of(run, TranscriptBuilder(), {"transport": {"streaming": False}})
    assert "This agent answers all at once: its whole answer appears when it is ready." in text(html)
    assert re.search(r"Working for (2|3) s", text(html)) and "data-elapsed=" in html
    run.status = Run.Status.COMPLETED
    run.finished_at = timezone.now()
    done = status_of(run, TranscriptBuilder(), {"transport": {"streaming": False}})
    assert "answers all at once" not in done and "Working for" not in done


def test_each_new_step_sends_the_status_again_while_the_run_goes():
    run = new_run()
    builder = TranscriptBuilder()
    renderer = StreamRenderer(RunView(run, builder.transcript, decide(capabilities=BOUNDED)))
    renderer.first()
    builder.apply(StepStartedEvent(step_name="plan"))
    html = renderer.update()
    assert f'id="run-{run.pk}-status"' in html and "Step 1 of at most 3" in text(html)
    builder.apply(StepFinishedEvent(step_name="plan"))
    assert "Step" not in text(renderer.update())  # finishing a step adds no step
    builder.apply(StepStartedEvent(step_name="write"))
    assert "Step 2 of at most 3" in text(renderer.update())


def test_after_a_reload_the_steps_are_counted_again_from_the_event_log():
    start = timezone.now() - timedelta(minutes=1)
    run = new_run(Run.Status.COMPLETED, started_at=start, finished_at=start + timedelta(seconds=12))
    events = [RunStartedEvent(thread_id="t", run_id="r")]
    for name in ("a", "b"):
        events += [StepStartedEvent(step_name=name), StepFinishedEvent(step_name=name)]
    events.append(RunFinishedEvent(thread_id="t", run_id="r"))
    for seq, event in enumerate(events, start=1):
        kind, payload = event_record(event)
        RunEvent.objects.create(run=run, seq=seq, type=kind, payload=json.loads(payload))
    html = render_run(RunView(run, replay(run), decide(capabilities=BOUNDED)))
    assert "2 steps of at most 3 · Took 12 s of at most 30 s" in text(html)


@pytest.mark.parametrize(
    ("seconds", "label"), [(0, "0 s"), (59.9, "59 s"), (60, "1 min 0 s"), (125, "2 min 5 s")]
)
def test_durations_are_said_in_minutes_and_seconds(seconds, label):
    assert seconds_label(seconds) == label

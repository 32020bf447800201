"""The next run of a thread: one rule for busy, whoever asks (agents_ui/runs/turns.py)."""

from __future__ import annotations

import pytest

from agents_ui.models import Conversation, Run
from agents_ui.runs import turns
from agents_ui.runs.live import LIVE
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def thread() -> Conversation:
    return Conversation.objects.create(user=make_user(), endpoint=make_endpoint(), title="t")


@pytest.mark.parametrize("status", [Run.Status.PENDING, Run.Status.RUNNING])
def test_a_run_going_on_in_the_database_makes_the_thread_busy_even_when_no_process_drives_it(thread, status):
    Run.objects.create(conversation=thread, request={}, status=status)
    assert not LIVE  # driven by another worker, or left by a restart: still busy
    with pytest.raises(turns.Busy):
        turns.next_run(thread, {"kind": "message"})
    assert thread.runs.count() == 1


@pytest.mark.parametrize(
    "status", [Run.Status.COMPLETED, Run.Status.INTERRUPTED, Run.Status.CANCELLED, Run.Status.FAILED]
)
def test_a_finished_run_leaves_the_thread_free(thread, status):
    Run.objects.create(conversation=thread, request={}, status=status)
    run = turns.next_run(thread, {"kind": "resume"})
    assert run.status == Run.Status.PENDING and run.conversation is thread


def test_an_answer_to_a_run_the_thread_went_past_is_refused(thread):
    asked = Run.objects.create(conversation=thread, request={}, status=Run.Status.COMPLETED)
    Run.objects.create(conversation=thread, request={}, status=Run.Status.COMPLETED)
    with pytest.raises(turns.MovedOn):
        turns.next_run(thread, {"kind": "answer"}, after=asked)

"""The next run of a thread, made one way, whatever asks for it: a message sent, an answer made
again or edited, a decision on what the agent asked, an answer to a tool call, an action on a
generated interface.

One rule says whether the thread is busy: **a run of the conversation is pending or running in the
database**. Of the rules the callers had before, it is the one that holds everywhere:

- the live registry (`runs.live.live_run`) knows only the runs this process drives, so a run driven
  by another worker, or left running by a restart, looked idle;
- "a later run exists" says the thread went on (the call asked in that run can no longer be
  answered), not that it is busy, and says nothing of a run still going before it;
- looking only at the runs of one turn misses a run started from another tab.

A pending run counts (it is saved before it is driven), a stopped or orphaned one does not once the
stop is recorded (views/stop.py records it when no process drives the run), so "stop it first" is
always advice the person can follow. The check and the new run are one transaction: two requests at
the same instant make one run between them, the other is told the thread is busy.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from agents_ui.models import Conversation, Run
from agents_ui.runs import queue, waiting

GOING = (Run.Status.PENDING, Run.Status.RUNNING)


class Busy(Exception):
    """Another run of the thread is going on: the new one would answer a thread that is still moving."""


class MovedOn(Exception):
    """The thread went on after the run this one answers: that run's question is no longer open."""


def busy(conversation: Conversation) -> bool:
    return conversation.runs.filter(status__in=GOING).exists()


def check(conversation: Conversation, *, after: Run | None = None) -> None:
    """Raise `MovedOn` once a run came after `after`, `Busy` while a run of the thread is going."""
    if after is not None and conversation.runs.filter(created_at__gt=after.created_at).exists():
        raise MovedOn
    if busy(conversation):
        raise Busy


def next_run(
    conversation: Conversation,
    request: dict[str, Any],
    *,
    after: Run | None = None,
    client_token: str = "",
    new_thread: bool = False,
) -> Run:
    """Save the thread's next run (pending; the caller starts it). `after`: the run whose question it
    answers, refused (`MovedOn`) once a later run exists. Raises `Busy` while a run is going on.
    `new_thread`: the conversation was made in the caller's transaction, so nothing of it can be going
    on or waiting (neither is looked for), and nothing here refuses it: it needs no savepoint of its
    own in the caller's transaction."""
    with transaction.atomic(savepoint=not new_thread):
        if not new_thread:
            check(conversation, after=after)
        run = Run.objects.create(conversation=conversation, request=request, client_token=client_token)
        queue.wake_workers()  # with separate run workers: one claims it as this commits
        if not new_thread:
            waiting.close_earlier(conversation, run)
    run.conversation = conversation
    return run

"""What a run leaves waiting on its person, kept as WaitingItem rows through the run's lifecycle,
so the inbox is a query of those rows and never a fold of every run.

- a run that ends waiting (an interrupt, a request its stream held for, a tool call left for the
  client, a task asking a question or needing authorization) writes its items (`record`);
- a request an agent's stream holds for is written as it arrives (`record_holding`), and closed at
  the run's end if it is no longer open;
- the thread's next run closes every item of the runs before it (`close_earlier`, in the same
  transaction as the new run): the question was answered, or the thread went on without it;
- an answer kept until the run's other calls have theirs closes its item (`close_one`).

Whether a request was decided is never kept here: the decision record (ApprovalRecord, one per run
and request) says so, and the inbox's query leaves out what it names.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from django.db.models import Count, Max
from django.utils import timezone

from agents_ui.display.run_view import RunView
from agents_ui.models import Conversation, Run, WaitingItem
from agents_ui.sdk.transcript import Transcript

TITLE_LIMIT = 200
DETAIL_LIMIT = 600


def _moment(text: str | None) -> datetime | None:
    if not text:
        return None
    try:
        when = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def _line(text: Any, limit: int) -> str:
    return " ".join(str(text or "").split())[:limit]


def items_of(run: Run, transcript: Transcript, plan: Any, status: str) -> list[WaitingItem]:
    """The items a run in `status` leaves waiting (unsaved), from its transcript under its plan."""
    conversation = run.conversation
    now = timezone.now()

    def item(
        kind: str, request_id: str, title: Any, detail: Any = "", expires: str | None = None
    ) -> WaitingItem:
        return WaitingItem(
            run=run, user_id=conversation.user_id, endpoint_id=conversation.endpoint_id, kind=kind,
            request_id=str(request_id)[:200], title=_line(title, TITLE_LIMIT),
            detail=_line(detail, DETAIL_LIMIT), asked_at=now, expires_at=_moment(expires),
        )  # fmt: skip

    found: list[WaitingItem] = []
    for request in transcript.open_interrupts if status == Run.Status.INTERRUPTED else ():
        call = transcript.tool_calls.get(request.tool_call_id or "")
        title = (call.name if call else "") or request.reason or "A decision"
        found.append(item(WaitingItem.Kind.APPROVAL, request.id, title, request.message, request.expires_at))
    for request in (
        transcript.pending_approvals if status in (Run.Status.RUNNING, Run.Status.INTERRUPTED) else ()
    ):
        said = request.message or request.reason
        found.append(
            item(
                WaitingItem.Kind.APPROVAL, request.id, request.name or "A decision", said, request.expires_at
            )
        )
    task = transcript.task
    if task is not None and task.waiting:
        kind = WaitingItem.Kind.AUTH if task.state == "auth-required" else WaitingItem.Kind.INPUT
        said = task.status_text or (
            "The agent needs authorization before it goes on."
            if kind == WaitingItem.Kind.AUTH
            else "The agent asks."
        )
        found.append(item(kind, task.task_id or run.pk, said))
    if status == Run.Status.COMPLETED:
        run.status = status
        view = RunView(run, transcript, plan)
        for call in transcript.tool_calls.values():
            if view.call_view(call).awaiting:
                args = json.dumps(call.args, ensure_ascii=False) if call.args not in (None, {}, []) else ""
                found.append(item(WaitingItem.Kind.ANSWER, call.id, call.name, args))
    return found


def record(run: Run, transcript: Transcript, plan: Any, status: str) -> None:
    """The run ended in `status`: its items are exactly what it leaves waiting."""
    found = items_of(run, transcript, plan, status)
    keys = {(i.kind, i.request_id) for i in found}
    open_now = WaitingItem.objects.filter(run=run, closed_at__isnull=True)
    gone = [i.pk for i in open_now if (i.kind, i.request_id) not in keys]
    if gone:
        WaitingItem.objects.filter(pk__in=gone).update(closed_at=timezone.now())
    WaitingItem.objects.bulk_create(found, ignore_conflicts=True)


def record_holding(run: Run, transcript: Transcript) -> None:
    """A request the run's stream holds for arrived: it waits on the person from now."""
    WaitingItem.objects.bulk_create(
        items_of(run, transcript, None, Run.Status.RUNNING), ignore_conflicts=True
    )


def close_earlier(conversation: Conversation, run: Run) -> None:
    """The thread's next run exists: nothing asked before it waits any more."""
    WaitingItem.objects.filter(run__conversation=conversation, closed_at__isnull=True).exclude(
        run=run
    ).update(closed_at=timezone.now())


def close_one(run: Run, kind: str, request_id: str) -> None:
    WaitingItem.objects.filter(run=run, kind=kind, request_id=request_id, closed_at__isnull=True).update(
        closed_at=timezone.now()
    )


def waiting_summary(user: Any) -> tuple[int, datetime | None]:
    """How many items wait on this person now (snoozed ones aside), and when the newest was asked:
    one indexed query (a partial index on the open items), whatever the number of runs. A person
    with nothing open at all, as most are most of the time, costs only a look at that index: the
    full reading's joins cost more to build than to run, at every run's end and every page."""
    if not WaitingItem.objects.filter(user=user, closed_at__isnull=True).exists():
        return 0, None
    found = WaitingItem.objects.open_for(user).awake().aggregate(count=Count("pk"), newest=Max("asked_at"))
    return found["count"], found["newest"]

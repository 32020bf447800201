"""How many messages a person may still send an agent that declares a rate (`custom.rateLimit`).

The count is of this person's turns with this agent in the last window (the runs a message, an
edit, a new answer or a press on a generated interface started; a decision or a tool's answer
resumes a turn and is never refused), read from what is stored, so it holds across tabs, reloads
and server processes, and every route that starts a turn is held to it. A send is checked and recorded in one
transaction (`claim`, inside the one that saves the message), so sends at the same instant are
counted one after another and only the allowed number pass.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from agents_ui.decisions import Plan
from agents_ui.models import AgentEndpoint, Run

# The kinds of run that are a person's turn, counted against the agent's rate.
TURNS = ("message", "a2ui-action")


class Throttled(Exception):
    """The person reached the agent's rate: the exception's text says when they may go on."""


@dataclass(frozen=True)
class Allowance:
    """Sends left in the current window, and when the next one is possible once none are left."""

    limit: int
    window_seconds: int
    used: int
    next_at: datetime | None  # when the oldest send of the window leaves it

    @property
    def left(self) -> int:
        return max(self.limit - self.used, 0)

    @property
    def exhausted(self) -> bool:
        return self.left == 0

    def wait_seconds(self, now: datetime | None = None) -> int:
        if not self.exhausted or self.next_at is None:
            return 0
        remaining = (self.next_at - (now or timezone.now())).total_seconds()
        return max(int(remaining + 0.999), 1)

    def refusal(self) -> str:
        wait = self.wait_seconds()
        return (
            f"This agent takes at most {self.limit} messages a minute, and you have sent {self.used}. "
            f"Your message is kept here: send it again in {wait} second{'s' if wait != 1 else ''}."
        )


def _limits(plan: Plan) -> tuple[int, int] | None:
    control = plan["throttle"]
    limit = control.details.get("max_requests")
    if not control.shown or not limit:
        return None
    return limit, int(control.details.get("window_seconds") or 60)


def _sent(endpoint: AgentEndpoint | int, user: Any, window: int) -> Any:
    since = timezone.now() - timedelta(seconds=window)
    return Run.objects.filter(
        conversation__user=user,
        conversation__endpoint=endpoint,
        request__kind__in=TURNS,
        created_at__gt=since,
    ).order_by("-created_at")


def _allowance(limit: int, window: int, times: list[datetime], used: int) -> Allowance:
    # Once the limit is reached, the next send is possible when the limit-th newest leaves the window.
    next_at = times[limit - 1] + timedelta(seconds=window) if len(times) >= limit else None
    return Allowance(limit, window, used, next_at)


async def allowance(plan: Plan, endpoint: AgentEndpoint | int, user: Any) -> Allowance | None:
    """None when the agent declares no rate, or the throttle is hidden (`endpoint`: one, or its key)."""
    limits = _limits(plan)
    if limits is None:
        return None
    limit, window = limits
    sent = _sent(endpoint, user, window)
    times = [at async for at in sent.values_list("created_at", flat=True)[:limit]]
    used = await sent.acount() if len(times) >= limit else len(times)
    return _allowance(limit, window, times, used)


def claim(plan: Plan, endpoint: AgentEndpoint | int, user: Any) -> Allowance | None:
    """The allowance as it stands for one more send, counted under a lock the surrounding transaction
    holds until it ends: the caller records the send (saves the message) in that same transaction,
    or refuses it when the allowance is exhausted. None when the agent declares no rate.

    PostgreSQL: this person's row is locked, so their concurrent sends count one after another.
    SQLite: the transaction is IMMEDIATE (settings), so it holds the database's write lock from its
    first statement, and no other send commits between this count and its own message.
    """
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("claim() counts and records a send in one transaction: call it inside one")
    limits = _limits(plan)
    if limits is None:
        return None
    limit, window = limits
    list(get_user_model().objects.select_for_update().filter(pk=user.pk).values_list("pk", flat=True))
    sent = _sent(endpoint, user, window)
    times = list(sent.values_list("created_at", flat=True)[:limit])
    used = sent.count() if len(times) >= limit else len(times)
    return _allowance(limit, window, times, used)


def hold(plan: Plan, endpoint: AgentEndpoint | int, user: Any) -> None:
    """Raise Throttled when one more turn would pass the agent's rate; inside the transaction that
    saves the turn's run (see `claim`)."""
    if (left := claim(plan, endpoint, user)) is not None and left.exhausted:
        wait = left.wait_seconds()
        raise Throttled(
            f"This agent takes at most {left.limit} messages a minute, and you have sent {left.used}. "
            f"Try again in {wait} second{'s' if wait != 1 else ''}."
        )

"""How many messages a person may still send an agent that declares a rate (`custom.rateLimit`).

The count is of this person's messages to this agent in the last window, read from what is stored,
so it holds across tabs, reloads and server processes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.utils import timezone

from agents_ui.decisions import Plan
from agents_ui.models import AgentEndpoint, Message


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


async def allowance(plan: Plan, endpoint: AgentEndpoint | int, user: Any) -> Allowance | None:
    """None when the agent declares no rate, or the throttle is hidden (`endpoint`: one, or its key)."""
    control = plan["throttle"]
    limit = control.details.get("max_requests")
    if not control.shown or not limit:
        return None
    window = int(control.details.get("window_seconds") or 60)
    since = timezone.now() - timedelta(seconds=window)
    sent = Message.objects.filter(
        conversation__user=user,
        conversation__endpoint=endpoint,
        role=Message.Role.USER,
        created_at__gt=since,
    ).order_by("-created_at")
    times = [at async for at in sent.values_list("created_at", flat=True)[:limit]]
    used = await sent.acount() if len(times) >= limit else len(times)
    # Once the limit is reached, the next send is possible when the limit-th newest leaves the window.
    next_at = times[limit - 1] + timedelta(seconds=window) if len(times) >= limit else None
    return Allowance(limit, window, used, next_at)

"""Steps of the run-worker tests (tests/queue) that a product process takes, run in one of its own:

    python -m tests.support.queue_scenarios <step> '<JSON arguments>'

with the environment of tests.support.postgres.product_env (PostgreSQL, separate run workers). Each
step prints its result as one JSON line. The steps call the product's own functions: what a send
commits (runs.turns), a claim (runs.queue), a web process's stop (runs.control), the writer's
fenced write (runs.writer).
"""

from __future__ import annotations

import asyncio
import json
import sys
from datetime import timedelta
from typing import Any

import django


def seed(agent_base: str, count: int = 1) -> dict[str, Any]:
    """A person, an endpoint at `agent_base`, and `count` conversations each with a queued run."""
    from django.contrib.auth import get_user_model

    from agents_ui.models import AgentEndpoint, Conversation, Message
    from agents_ui.runs import turns
    from agents_ui.runs.inputs import RunRequest

    user, _ = get_user_model().objects.get_or_create(username="queue-person")
    user.set_password("queue-person-password")
    user.save()
    slug = f"paced-{AgentEndpoint.objects.count() + 1}"
    endpoint = AgentEndpoint.objects.create(
        name="Paced agent", slug=slug, protocol=AgentEndpoint.Protocol.AGUI, base_url=agent_base
    )
    runs = []
    for n in range(count):
        conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=f"Question {n}")
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=f"Q{n}")
        run = turns.next_run(conversation, RunRequest(message_id=message.pk).as_json())
        runs.append(str(run.pk))
    return {"runs": runs, "slug": slug}


def claim_as(worker: str, heartbeat_age: float = 0.0) -> dict[str, Any]:
    """Claim one run as `worker` would, its heartbeat `heartbeat_age` seconds old (a worker that
    stopped right after its claim, before it began the run)."""
    from django.utils import timezone

    from agents_ui.models import Run
    from agents_ui.runs import queue

    leases = queue.claim(worker, 1)
    if leases and heartbeat_age:
        Run.objects.filter(pk=leases[0].run_id).update(
            heartbeat_at=timezone.now() - timedelta(seconds=heartbeat_age)
        )
    return {"leases": [lease.__dict__ for lease in leases]}


def sweep(lease_seconds: float) -> dict[str, Any]:
    from agents_ui.runs import queue

    return {"outcomes": queue.sweep(lease_seconds)}


def stop(run: str) -> dict[str, Any]:
    """What a web process does when the person presses stop (views/stop.py)."""
    from agents_ui.runs.control import request_stop

    return {"stopped": asyncio.run(request_stop(run))}


def fenced_write(run: str, attempt: int, worker: str, seq: int) -> dict[str, Any]:
    """One event written by the writer under the lease (attempt, worker): refused once it is stale."""
    from agents_ui.models import Run
    from agents_ui.runs import writer
    from agents_ui.runs.live import LiveRun

    live = LiveRun(run, "agui")
    live.attempt, live.worker = attempt, worker
    job = writer.WriteJob(
        live, [(seq, "RAW", json.dumps({"type": "RAW", "event": {"n": seq}}))], [], seq, set()
    )
    stopped, lost = writer._write_many([job])
    status = Run.objects.filter(pk=run, attempt=attempt, worker=worker).update(status=Run.Status.COMPLETED)
    return {"lost": sorted(lost), "stopped": sorted(stopped), "status_written": status}


STEPS = {"seed": seed, "claim_as": claim_as, "sweep": sweep, "stop": stop, "fenced_write": fenced_write}


if __name__ == "__main__":
    django.setup()
    step, arguments = sys.argv[1], json.loads(sys.argv[2] if len(sys.argv) > 2 else "{}")
    print(json.dumps(STEPS[step](**arguments)), flush=True)

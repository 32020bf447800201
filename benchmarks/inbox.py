"""How long the inbox takes with 200 items waiting on one person, among many finished runs.

One person has --waiting conversations whose run ended on an AG-UI interrupt (the event log as the
product keeps it: a tool call, then RUN_FINISHED with an interrupt outcome; the WaitingItem rows as
the run's end writes them) and --finished conversations of three finished turns each. Measured
server-side (django.test.AsyncClient through the whole middleware stack, every discovery cached):

- inbox page: /inbox/, its first page of items (each of its runs folded, with its approval form);
- inbox count: /inbox/count/, the header's poll (one indexed count);
- catalogue: /, a page with the header's count in it, for comparison.

Each render's CPU time (this process, every thread) is printed too: on a busy machine the wall
times mostly measure waiting for a CPU, the CPU times do not.

Usage: python benchmarks/inbox.py [--json] [--waiting N] [--finished N] [--renders N]
Targets (CPU, medians): inbox_page_cpu_ms < 250 (a page of 25 items, each with its form),
inbox_count_cpu_ms < 30 (the whole request; its query is one indexed count).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
PAGE_TARGET_MS = 250.0
COUNT_TARGET_MS = 30.0


def setup_django(directory: str) -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "benchmarks.settings"
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["CACHE_URL"] = "locmem://benchmark"
    os.environ["AGENTS_UI_DEMO_AUTOREGISTER"] = "false"
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"  # sync ORM set-up beside async views, one thread
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def interrupted_events(n: int) -> list[dict]:
    call = f"call-{n}"
    args = {"fromAccount": "OPS-001", "toAccount": f"VENDOR-{n:03d}", "amount": 100 + n, "currency": "EUR"}
    return [
        {"type": "RUN_STARTED", "threadId": f"t{n}", "runId": f"r{n}"},
        {"type": "TEXT_MESSAGE_START", "messageId": f"m{n}", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m{n}", "delta": "I will transfer the money."},
        {"type": "TEXT_MESSAGE_END", "messageId": f"m{n}"},
        {"type": "TOOL_CALL_START", "toolCallId": call, "toolCallName": "transfer_funds",
         "parentMessageId": f"m{n}"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps(args)},
        {"type": "TOOL_CALL_END", "toolCallId": call},
        {
            "type": "RUN_FINISHED", "threadId": f"t{n}", "runId": f"r{n}",
            "outcome": {"type": "interrupt", "interrupts": [{
                "id": f"interrupt-{n}", "reason": "tool_call", "toolCallId": call,
                "message": f"Transfer {100 + n} EUR to VENDOR-{n:03d}?",
                "responseSchema": {"type": "object", "properties": {"approved": {"type": "boolean"}},
                                   "required": ["approved"]},
            }]},
        },
    ]  # fmt: skip


def finished_events(n: int) -> list[dict]:
    return [
        {"type": "RUN_STARTED", "threadId": f"f{n}", "runId": f"fr{n}"},
        {"type": "TEXT_MESSAGE_START", "messageId": f"fm{n}", "role": "assistant"},
        *[{"type": "TEXT_MESSAGE_CONTENT", "messageId": f"fm{n}", "delta": "word " * 20} for _ in range(20)],
        {"type": "TEXT_MESSAGE_END", "messageId": f"fm{n}"},
        {"type": "RUN_FINISHED", "threadId": f"f{n}", "runId": f"fr{n}"},
    ]


def populate(waiting: int, finished: int):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission

    from agents_ui.models import AgentEndpoint, Conversation, Message, Run, RunEvent
    from agents_ui.runs.event_log import replay
    from agents_ui.runs.waiting import record

    endpoint = AgentEndpoint.objects.create(
        name="Operations", slug="operations", protocol=AgentEndpoint.Protocol.AGUI,
        base_url="http://127.0.0.1:9/agent/",  # never reached: nothing here runs the agent
    )  # fmt: skip
    user = get_user_model().objects.create_user(username="bench", password="bench-only-password")
    user.user_permissions.set(
        Permission.objects.filter(codename__in=["approve_actions"], content_type__app_label="agents_ui")
    )

    def turn(conversation, events, status):
        message = Message.objects.create(conversation=conversation, role="user", content="Pay the vendor")
        run = Run.objects.create(
            conversation=conversation, status=status, request={"kind": "message", "message_id": message.pk}
        )
        RunEvent.objects.bulk_create(
            RunEvent(run=run, seq=seq, type=event["type"], payload=event)
            for seq, event in enumerate(events, 1)
        )
        return run

    for n in range(finished):
        conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=f"Done {n}")
        for _ in range(3):
            turn(conversation, finished_events(n), Run.Status.COMPLETED)
    for n in range(waiting):
        conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=f"Transfer {n}")
        run = turn(conversation, interrupted_events(n), Run.Status.INTERRUPTED)
        run.conversation = conversation
        record(run, replay(run), None, Run.Status.INTERRUPTED)  # as the run's end writes them
    return user


def median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


async def measure(options, user) -> dict[str, float]:
    from django.test import AsyncClient

    client = AsyncClient()
    await client.aforce_login(user)

    cpu: dict[str, list[float]] = {}

    async def timed(path: str, check: bytes) -> float:
        """One render's wall time; its CPU time (this process, every thread) is kept beside it."""
        used, start = time.process_time(), time.perf_counter()
        response = await client.get(path)
        elapsed = time.perf_counter() - start
        cpu.setdefault(path, []).append(time.process_time() - used)
        assert response.status_code == 200 and check in response.content, (path, response.status_code)
        return elapsed

    waiting = f'data-inbox-count="{options.waiting}"'.encode()
    first = await timed("/inbox/", b"data-inbox-run=")  # imports, templates, the first discovery
    pages = [await timed("/inbox/", b"data-approval-form") for _ in range(options.renders)]
    last = [await timed("/inbox/?page=last", b"data-inbox-run=") for _ in range(options.renders)]
    counts = [await timed("/inbox/count/", waiting) for _ in range(options.renders)]
    catalogue = [await timed("/", waiting) for _ in range(options.renders)]
    page_ms, count_ms = median_ms(cpu["/inbox/"][1:]), median_ms(cpu["/inbox/count/"])
    return {
        "inbox_waiting_items": options.waiting,
        "inbox_finished_runs": options.finished * 3,
        "inbox_first_render_ms": round(first * 1000, 1),
        "inbox_page_ms": median_ms(pages),
        "inbox_page_cpu_ms": page_ms,
        "inbox_last_page_ms": median_ms(last),
        "inbox_page_ratio": round(page_ms / PAGE_TARGET_MS, 2),
        "inbox_count_ms": median_ms(counts),
        "inbox_count_cpu_ms": count_ms,
        "inbox_count_ratio": round(count_ms / COUNT_TARGET_MS, 2),
        "inbox_catalogue_ms": median_ms(catalogue),
        "inbox_load_1min": round(os.getloadavg()[0], 2),
    }


UNITS = {
    "inbox_waiting_items": "items",
    "inbox_finished_runs": "runs",
    "inbox_page_ratio": "x",
    "inbox_count_ratio": "x",
    "inbox_load_1min": "procs",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of lines")
    parser.add_argument("--waiting", type=int, default=200)
    parser.add_argument("--finished", type=int, default=100, help="conversations of three finished runs")
    parser.add_argument("--renders", type=int, default=10, help="median of N renders")
    options = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="agents-ui-bench-") as directory:
        setup_django(directory)
        user = populate(options.waiting, options.finished)
        results = asyncio.run(measure(options, user))

    if options.json:
        print(json.dumps(results))
    else:
        for name, value in results.items():
            print(f"{name}: {value} {UNITS.get(name, 'ms')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Drive queued runs apart from the web processes.

    manage.py run_worker [--concurrency N] [--drain-seconds S]


Needs AGENTS_UI_RUN_WORKERS=separate on PostgreSQL (docs/deploy.md). Any number of these, on any
machine sharing the database; SIGTERM (or Ctrl-C) stops claiming, lets the runs finish within the
drain time, then hands back the rest (agents_ui.runs.worker).
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser


class Command(BaseCommand):
    help = "Claim queued runs and drive them (AGENTS_UI_RUN_WORKERS=separate, PostgreSQL)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--concurrency", type=int, default=10, help="runs driven at once (default 10)")
        parser.add_argument(
            "--drain-seconds",
            type=float,
            default=30.0,
            help="on SIGTERM, how long running runs may take to finish before they are handed back",
        )
        parser.add_argument("--name", default="", help="this worker's name in the runs it holds")

    def handle(self, *args: Any, **options: Any) -> None:
        from django.db import connection

        from agents_ui.runs import queue
        from agents_ui.runs.worker import RunWorker

        if not queue.separate():
            raise CommandError(
                "Run workers need AGENTS_UI_RUN_WORKERS=separate (and PostgreSQL): see docs/deploy.md."
            )
        if connection.vendor != "postgresql":
            raise CommandError(
                "Run workers need PostgreSQL (DATABASE_URL=postgres://...): see docs/deploy.md."
            )
        if options["concurrency"] < 1:
            raise CommandError("--concurrency must be 1 or more.")
        worker = RunWorker(
            concurrency=options["concurrency"], drain_seconds=options["drain_seconds"], name=options["name"]
        )

        async def main() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                loop.add_signal_handler(sig, worker.stop)
            await worker.serve()

        self.stdout.write(f"run worker {worker.name}: {worker.concurrency} at a time", ending="\n")
        self.stdout.flush()
        asyncio.run(main())
        self.stdout.write(f"run worker {worker.name}: stopped after {worker.claimed} run(s)")

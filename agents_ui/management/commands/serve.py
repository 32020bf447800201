"""Serve the product: uvicorn with its C event loop and HTTP parser, tuned once the product is loaded.

`make run`, the benchmarks and the load scripts start the product with this command, so what they
measure is what is served. The tuning happens here and nowhere else: importing `project.asgi` (as
tests do) only builds the application. docs/performance.md has the figures.
"""

from __future__ import annotations

import gc
import os
from importlib import import_module
from typing import Any

from django.core.management.base import BaseCommand, CommandParser

# uvicorn calls this in each worker process, after the product is loaded.
APPLICATION_FACTORY = f"{__name__}:served_application"


def served_application() -> Any:
    """The product's ASGI application, for a process that will serve it until it stops."""
    from django.conf import settings

    from project.asgi import application

    # The URL conf and the views it names, which the first request would load: part of what lasts.
    import_module(settings.ROOT_URLCONF)
    tune_garbage_collector()
    return application


def tune_garbage_collector() -> None:
    # What is loaded by now lives as long as the process, and every event of every open stream
    # allocates: keep the former out of the collector's scans, and make young collections rarer.
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


class Command(BaseCommand):
    help = "Serve Agents UI with uvicorn (uvloop, httptools) on HOST:PORT."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default=os.environ.get("HOST") or "127.0.0.1")
        parser.add_argument("--port", type=int, default=int(os.environ.get("PORT") or 8000))
        parser.add_argument("--workers", type=int, default=1, help="worker processes (1)")
        parser.add_argument("--log-level", default="warning", help="uvicorn's log level (warning)")
        parser.add_argument("--access-log", action="store_true", help="log every request")
        parser.add_argument("--backlog", type=int, default=2048, help="connections waiting to be accepted")
        parser.add_argument(
            "--timeout-graceful-shutdown", type=int, default=None, help="seconds open streams get to end"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        import uvicorn

        uvicorn.run(
            APPLICATION_FACTORY,
            factory=True,
            host=options["host"],
            port=options["port"],
            workers=options["workers"],
            loop="uvloop",
            http="httptools",
            lifespan="off",  # Django has no lifespan events
            log_level=options["log_level"],
            access_log=options["access_log"],
            backlog=options["backlog"],
            timeout_graceful_shutdown=options["timeout_graceful_shutdown"],
        )

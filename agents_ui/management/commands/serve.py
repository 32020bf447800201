"""Serve the product: uvicorn with its C event loop and HTTP parser, tuned once the product is loaded.

`make run`, the benchmarks and the load scripts start the product with this command, so what they
measure is what is served. The tuning happens here and nowhere else: importing `project.asgi` (as
tests do) only builds the application. docs/performance.md has the figures.
"""

from __future__ import annotations

import ctypes
import ctypes.util
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
    tune_memory_allocator()
    return application


# glibc's mallopt parameters.
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8


def tune_memory_allocator() -> None:
    """Large blocks (an agent's long answer, a run's batch of events) go back to the system when freed.

    By default glibc raises its mmap threshold to the largest block freed so far, so after one run of
    tens of megabytes every later large block stays on the heap, and each thread's arena keeps its
    own; the process's memory then only grows. A fixed threshold and few arenas keep it bounded.
    """
    name = ctypes.util.find_library("c")
    if not name or os.environ.get("MALLOC_MMAP_THRESHOLD_"):
        return
    try:
        libc = ctypes.CDLL(name)
        libc.mallopt(_M_MMAP_THRESHOLD, 128 * 1024)
        libc.mallopt(_M_ARENA_MAX, 2)
    except (OSError, AttributeError):  # not glibc: its own allocator's defaults
        pass


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

"""uvicorn serving an ASGI application from a thread of this process, on a free loopback port.

Tests and the fault agent (tests/support/fault_agent.py) use it: the server shares the process (and
so the test database) and, unlike a WSGI live server, streams responses as they are written.
"""

from __future__ import annotations

import socket
import threading
from typing import Any, Self

from tests.support.waiting import eventually_sync


class ThreadedUvicorn:
    def __init__(self, application: Any, *, log_level: str = "warning") -> None:
        import uvicorn

        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(application, log_level=log_level, lifespan="off", timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [self._sock]}, daemon=True
        )

    def start(self) -> Self:
        self._thread.start()

        def started() -> bool:
            if not self._thread.is_alive():
                raise RuntimeError(f"{type(self).__name__} did not start")
            return self._server.started

        eventually_sync(started, what=f"{type(self).__name__} to start")
        return self

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=5)
        self._sock.close()


class LiveASGIServer(ThreadedUvicorn):
    """The product's ASGI application served from a thread, so streaming really streams.

    It runs in this process, so it sees the test database (a file, see project.test_settings).
    """

    def __init__(self) -> None:
        from project.asgi import application

        super().__init__(application)

"""A real, throwaway redis-server for the tests: its own port and directory, nothing saved to disk.

`redis_server` (a pytest fixture, see tests/conftest.py) starts one per test process on port 16379
(or the next free one, below the ephemeral range: tests/support/ports.py), empties it before each
test, and can be killed and started again mid-test. Without redis-server installed the tests that
use it are skipped, saying why.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time

from tests.support.ports import unused_port

BASE_PORT = 16379


def redis_port() -> int:
    """The first free port from BASE_PORT: test processes side by side get their own."""
    return unused_port(BASE_PORT)


class RedisServer:
    """redis-server on 127.0.0.1:<port>, without persistence."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.url = f"redis://127.0.0.1:{port}/0"
        self.directory = tempfile.mkdtemp(prefix="agents-ui-redis-")
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        command = [
            shutil.which("redis-server") or "redis-server",
            "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", self.directory, "--protected-mode", "no",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"redis-server exited with {self.process.returncode} (port {self.port} in use?)"
                )
            if self.ping():
                return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1) as sock:
                sock.sendall(b"PING\r\n")
                return sock.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL: what a crash looks like (everything it held is gone: nothing is saved)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.kill()
        self.start()

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=5) as sock:
            sock.sendall(b"FLUSHALL\r\n")
            sock.recv(16)

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


def installed() -> bool:
    return shutil.which("redis-server") is not None


SKIP_REASON = (
    "redis-server is not installed (apt-get install redis-server): the fan-out tests run against a "
    "real Redis, never an imitation"
)

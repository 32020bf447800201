"""The "internal" network in SSRF tests: a listener on loopback that records every connection made.

`InternalListener` binds one port on 127.0.0.1 and, where the system lets it, on 127.0.0.2 and
[::1], and records each connection as it is accepted, before a byte of HTTP is read: whatever the
product would have sent (a request, a TLS hello), reaching the address at all is the failure. It
then closes the connection. The SSRF tests point every hostile redirect, card interface, key set and
image at it, with private addresses refused, and assert it recorded nothing.

It runs on a thread of its own with blocking sockets, so it serves any event loop and any process
(scripts/attack_load.py starts one beside the product's server).
"""

from __future__ import annotations

import contextlib
import errno
import selectors
import socket
import threading
from dataclasses import dataclass
from typing import Self

# The loopback addresses it listens on, when the system has them (127.0.0.2 is not on macOS).
ADDRESSES = ("127.0.0.1", "127.0.0.2", "::1")


@dataclass(frozen=True)
class Connection:
    local: str  # the address it was made to
    peer: str


class InternalListener:
    def __init__(self) -> None:
        self.connections: list[Connection] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._sockets = self._bind()
        self.port = self._sockets[0].getsockname()[1]
        self.addresses = tuple(s.getsockname()[0] for s in self._sockets)
        self._thread = threading.Thread(target=self._serve, daemon=True, name="internal-listener")

    def _bind(self) -> list[socket.socket]:
        for _ in range(20):  # the first port may be taken on the other addresses: try another
            first = _listen("127.0.0.1", 0)
            port = first.getsockname()[1]
            bound, taken = [first], False
            for address in ADDRESSES[1:]:
                try:
                    bound.append(_listen(address, port))
                except OSError as exc:
                    if exc.errno == errno.EADDRINUSE:
                        taken = True
                        break
                    # EADDRNOTAVAIL / EAFNOSUPPORT: the system has no such address; go on without it.
            if not taken:
                return bound
            for sock in bound:
                sock.close()
        raise RuntimeError("no port free on every loopback address")

    def url(self, address: str = "127.0.0.1", path: str = "/") -> str:
        host = f"[{address}]" if ":" in address else address
        return f"http://{host}:{self.port}{path}"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        for sock in self._sockets:
            sock.close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def recorded(self) -> list[Connection]:
        with self._lock:
            return list(self.connections)

    def clear(self) -> None:
        with self._lock:
            self.connections.clear()

    def _serve(self) -> None:
        with selectors.DefaultSelector() as selector:
            for sock in self._sockets:
                selector.register(sock, selectors.EVENT_READ)
            while not self._stop.is_set():
                for key, _ in selector.select(timeout=0.05):
                    with contextlib.suppress(OSError):
                        conn, peer = key.fileobj.accept()  # type: ignore[union-attr]
                        with self._lock:
                            self.connections.append(Connection(conn.getsockname()[0], str(peer[0])))
                        conn.close()


def _listen(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(64)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock

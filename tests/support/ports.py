"""Ports for the servers the tests start themselves (PostgreSQL, Redis) and start again on the same port.

They are taken below the kernel's range of ephemeral ports (32768 and up by default), which every
outgoing connection of the tests draws from: a port there may be free when it is chosen and held by
a client's socket a moment later. A port is free when it can be bound, not merely when nothing
answers on it: a client's socket holds its port without listening.
"""

from __future__ import annotations

import socket
from pathlib import Path


def ephemeral_ports() -> range:
    """The kernel's range of ports for outgoing connections (Linux's default where it cannot be read)."""
    try:
        low, high = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()
        return range(int(low), int(high) + 1)
    except (OSError, ValueError):
        return range(32768, 61000)


def bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def unused_port(first: int, *, skip: set[int] = frozenset()) -> int:
    """The first port from `first` that can be bound and is not an ephemeral one: test processes side
    by side get their own."""
    ephemeral = ephemeral_ports()
    for port in range(first, first + 500):
        if port not in ephemeral and port not in skip and bindable(port):
            return port
    above = f"{ephemeral.start}-{ephemeral.stop - 1}"
    raise RuntimeError(f"no free port from {first} outside the ephemeral range {above}")

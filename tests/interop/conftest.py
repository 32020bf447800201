"""Interop peers for the tests: started once per session on loopback, stopped at the end."""

from __future__ import annotations

from tests.interop.fixtures import REQUIRED, peer_server

__all__ = ["REQUIRED", "peer_server"]

"""The interop peers as a pytest fixture, for the SDK-level tests and the browser tests alike.

Without a peer's environment the tests that need it are skipped, so `make test` passes on a
machine without them; `make interop` and CI install them first and set AGENTS_UI_INTEROP=1, which
turns a missing peer into a failure.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack

import pytest

from tests.interop.peers import PEERS, RunningPeer, missing_reason, running

REQUIRED = os.environ.get("AGENTS_UI_INTEROP") == "1"


@pytest.fixture(scope="session")
def peer_server() -> Iterator[Callable[[str], RunningPeer]]:
    """``peer_server(name)``: the running peer, started on first use."""
    started: dict[str, RunningPeer] = {}
    with ExitStack() as stack:

        def get(name: str) -> RunningPeer:
            if name not in started:
                reason = missing_reason(PEERS[name])
                if reason:
                    if REQUIRED:
                        pytest.fail(reason)
                    pytest.skip(reason)
                started[name] = stack.enter_context(running(PEERS[name]))
            return started[name]

        yield get

"""The ASGI entry point: an open event stream keeps no thread of its own."""

from __future__ import annotations

import uuid

import pytest
from asgiref.sync import SyncToAsync

from project.asgi import AgentsUIASGIHandler


def http_scope(path: str) -> dict:
    return {
        "type": "http",
        "method": "GET",
        "path": path,
        "root_path": "",
        "headers": [],
        "query_string": b"",
    }


@pytest.mark.parametrize(
    ("path", "long_lived"),
    [
        (f"/runs/{uuid.uuid4()}/events/", True),
        ("/runs/not-a-run/events/", False),
        ("/", False),
        ("/agents/helper/", False),
        ("/no/such/page/", False),
    ],
)
async def test_only_event_streams_go_without_a_thread_of_their_own(monkeypatch, path, long_lived):
    seen = {}

    async def handle(self, scope, receive, send):
        # Django's per-request thread exists exactly when a thread-sensitive context is set.
        seen["own_thread"] = SyncToAsync.thread_sensitive_context.get(None) is not None

    monkeypatch.setattr(AgentsUIASGIHandler, "handle", handle)
    await AgentsUIASGIHandler()(http_scope(path), None, None)
    assert seen["own_thread"] is not long_lived

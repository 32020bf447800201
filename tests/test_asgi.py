"""The ASGI entry point: an event stream keeps no thread of its own; static paths stay in their folders."""

from __future__ import annotations

import logging
import uuid

import httpx
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


# --- Static files ------------------------------------------------------------------------------------


async def asgi_get(raw_path: str) -> httpx.Response:
    """GET through the application exactly as served (the static files handler in front)."""
    from project.asgi import application

    transport = httpx.ASGITransport(app=application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(raw_path)


@pytest.mark.parametrize(
    "raw_path",
    [
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/static/%2e%2e/manage.py",
        "/static/agents_ui/%2e%2e/%2e%2e/%2e%2e/project/settings.py",
        "/static/..%2f..%2fetc/passwd",
        "/static/%2e%2e",
    ],
)
@pytest.mark.parametrize("debug", [True, False], ids=["development", "deployed"])
async def test_a_static_path_leading_out_of_the_static_folders_is_not_found(
    raw_path, debug, settings, caplog
):
    settings.DEBUG = debug
    caplog.set_level(logging.DEBUG)
    response = await asgi_get(raw_path)
    assert response.status_code == 404
    assert "root:" not in response.text and "SECRET_KEY" not in response.text
    assert not [record for record in caplog.records if record.exc_info or record.levelno >= logging.ERROR]


async def test_static_files_are_still_served():
    response = await asgi_get("/static/agents_ui/app.css")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
    assert (await asgi_get("/static/agents_ui/no-such-file.css")).status_code == 404

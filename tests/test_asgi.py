"""The ASGI entry point: an event stream keeps no thread of its own; static paths stay in their folders."""

from __future__ import annotations

import asyncio
import gc
import io
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import httpx
import pytest
from asgiref.sync import SyncToAsync

from project.asgi import AgentsUIASGIHandler
from tests.support.waiting import eventually, eventually_sync


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
    gc.collect()  # an earlier test's abandoned tasks report themselves when collected, not this request
    caplog.set_level(logging.DEBUG)
    response = await asgi_get(raw_path)
    assert response.status_code == 404
    assert "root:" not in response.text and "SECRET_KEY" not in response.text
    collected = ("asyncio", "opentelemetry.context")  # what garbage collection may log meanwhile
    assert not [
        record
        for record in caplog.records
        if (record.exc_info or record.levelno >= logging.ERROR) and record.name not in collected
    ]


async def test_static_files_are_still_served():
    response = await asgi_get("/static/agents_ui/app.css")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/css")
    assert (await asgi_get("/static/agents_ui/no-such-file.css")).status_code == 404


async def test_a_static_file_opened_for_a_browser_that_left_is_closed(monkeypatch):
    from django.core.handlers.asgi import ASGIRequest

    from project.asgi import StaticFilesHandler

    opened, entered, release = [], threading.Event(), threading.Event()
    handler = StaticFilesHandler(AgentsUIASGIHandler())
    serve = StaticFilesHandler.serve

    def slow_serve(self, request):
        entered.set()
        release.wait(5)  # the browser leaves while the file is being opened
        response = serve(self, request)
        opened.append(response)
        return response

    monkeypatch.setattr(StaticFilesHandler, "serve", slow_serve)
    request = ASGIRequest(http_scope("/static/agents_ui/app.css"), io.BytesIO())
    work = asyncio.ensure_future(handler.get_response_async(request))
    await eventually(entered.is_set, what="the static file to be opening")
    work.cancel()
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await work
    # Its file too: no descriptor left for the collector.
    await eventually(lambda: opened and opened[0].closed, what="the opened static file to be closed")


# --- Serving -----------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[1]


def python(code: str, **env: str) -> str:
    """Run code in a fresh interpreter at the repository's root; its standard output."""
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.test_settings", **env}
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_importing_the_application_leaves_the_garbage_collector_alone():
    code = "import gc; before = gc.get_threshold(); import project.asgi; "
    code += "print(gc.get_threshold() == before, gc.get_freeze_count())"
    assert python(code) == "True 0"


def test_the_served_application_is_tuned_once_loaded():
    code = "import gc, sys; from agents_ui.management.commands.serve import served_application as s; "
    code += "app = s(); import project.asgi; print(app is project.asgi.application, gc.get_threshold()[0], "
    code += "gc.get_freeze_count() > 0, 'project.urls' in sys.modules)"
    assert python(code) == "True 50000 True True"


def test_serve_runs_uvicorn_with_its_c_loop_and_parser_on_host_and_port(monkeypatch):
    import uvicorn
    from django.core.management import call_command

    seen = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **options: seen.update(app=app, **options))
    monkeypatch.setenv("HOST", "0.0.0.0")
    monkeypatch.setenv("PORT", "8123")
    call_command("serve", "--workers", "2")
    assert seen["app"] == "agents_ui.management.commands.serve:served_application"
    assert seen["factory"] is True
    assert (seen["host"], seen["port"], seen["workers"]) == ("0.0.0.0", 8123, 2)
    assert (seen["loop"], seen["http"], seen["lifespan"]) == ("uvloop", "httptools", "off")


def test_manage_py_serve_serves_the_product(tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "DEBUG": "true", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    command = [sys.executable, "manage.py", "serve", "--port", str(port)]
    log = tmp_path / "serve.log"
    with log.open("w") as output, subprocess.Popen(command, cwd=ROOT, env=env, stderr=output) as server:
        try:

            def answering() -> httpx.Response | None:
                assert server.poll() is None, log.read_text()
                try:
                    return httpx.get(f"http://127.0.0.1:{port}/static/agents_ui/app.css", timeout=2)
                except httpx.TransportError:
                    return None

            response = eventually_sync(answering, timeout=30, interval=0.1, what=log.read_text)
            assert response.status_code == 200
            assert httpx.get(f"http://127.0.0.1:{port}/static/%2e%2e/manage.py").status_code == 404
        finally:
            server.send_signal(signal.SIGINT)
            server.wait(timeout=15)
    assert "Traceback" not in log.read_text()

"""ASGI entry point: the product is served by uvicorn so that SSE responses really stream.

Static files are served by the same application (Django's ASGI static handler, which reads them
through the finders), so one uvicorn process is the whole product; put a CDN or proxy in front for
heavy traffic. This module only builds the application: `manage.py serve` serves it, tuned for a
long-lived process.
"""

import asyncio
import os

import django
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import ImproperlyConfigured, SuspiciousFileOperation
from django.core.handlers.asgi import ASGIHandler
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

# Responses that stay open for the whole of an agent's run.
LONG_LIVED_VIEWS = frozenset({"run-events"})


class AgentsUIASGIHandler(ASGIHandler):
    """Django's ASGI handler, except that a run's event stream keeps no thread of its own.

    Django gives every request a thread for its synchronous parts and keeps it until the response
    ends: for an event stream that is a thread per open tab for the whole run (its stack, and one
    more thread for the GIL to share). An event stream does its synchronous work
    before the first byte (and holds no database connection afterwards), so it uses the process's
    shared thread for that instead, as every request did before per-request threads existed.
    """

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and self._long_lived(scope):
            await self.handle(scope, receive, send)
        else:
            await super().__call__(scope, receive, send)

    @staticmethod
    def _long_lived(scope) -> bool:
        path = scope["path"].removeprefix(scope.get("root_path", "")) or "/"
        try:
            return resolve(path).url_name in LONG_LIVED_VIEWS
        except Resolver404:
            return False


class StaticFilesHandler(ASGIStaticFilesHandler):
    """Django's static files handler, except that a path leading out of the static folders is "not
    found": Django raises for it, and the server would answer 500 with a traceback in the log."""

    def serve(self, request: HttpRequest) -> HttpResponse:
        try:
            return super().serve(request)
        except SuspiciousFileOperation as exc:
            raise Http404("No such static file.") from exc

    async def get_response_async(self, request: HttpRequest) -> HttpResponse:
        # A browser that leaves while the file is being opened cancels this await; Django then drops
        # the response it never received, its file still open. The opening finishes and is closed.
        opening = asyncio.ensure_future(super().get_response_async(request))
        try:
            return await asyncio.shield(opening)
        except asyncio.CancelledError:
            opening.add_done_callback(_close_unsent)
            raise


def _close_unsent(opening: asyncio.Future) -> None:
    if not opening.cancelled() and opening.exception() is None:
        opening.result().close()


class BoundedBody:
    """Refuses a request body over AGENTS_UI_MAX_REQUEST_BYTES with 413, before Django reads it.

    Django's ASGI handler spools the whole body before any view (or upload check) runs: a declared
    length over the bound is refused at once, and a body without one is cut when it passes it.
    """

    def __init__(self, app) -> None:
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        from django.conf import settings

        limit = settings.AGENTS_UI_MAX_REQUEST_BYTES
        declared = dict(scope.get("headers") or []).get(b"content-length")
        try:
            too_long = declared is not None and int(declared) > limit
        except ValueError:
            too_long = True
        if too_long:
            return await _refuse(send, limit)
        started, seen = False, 0

        async def tracked_send(message):
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        async def bounded_receive():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    if not started:
                        await _refuse(tracked_send, limit)
                    return {"type": "http.disconnect"}  # Django stops reading and answers nothing more
            return message

        return await self.app(scope, bounded_receive, tracked_send)


async def _refuse(send, limit: int) -> None:
    body = (
        f"The request is too large: the limit is {limit // (1024 * 1024)} MB. "
        "Send smaller files, or fewer at a time.\n"
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def build_application(*, demo_agents: bool | None = None):
    """The product's ASGI stack: the body bound, then (demo agents on) the demo A2A agents, then
    static files and Django.

    The demo A2A agents are served by the a2a-sdk's Starlette routes: they are mounted, and Starlette
    and sse-starlette imported, only when the demo agents are on (`demo_agents`, by default
    settings.AGENTS_UI_DEMO_AGENTS). A deployment without them installs requirements/runtime.txt,
    which has neither.
    """
    from django.conf import settings

    if demo_agents is None:
        demo_agents = settings.AGENTS_UI_DEMO_AGENTS
    app = StaticFilesHandler(AgentsUIASGIHandler())
    if demo_agents:
        try:
            from agents_ui.demo.a2a.server import DemoA2AAgents
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"AGENTS_UI_DEMO_AGENTS is on, but the demo A2A agent's server cannot be imported ({exc}): "
                "install requirements/demo.txt (pip install --require-hashes -r requirements/demo.txt), "
                "or turn the demo agents off."
            ) from exc
        app = DemoA2AAgents(app)
    return BoundedBody(app)


django.setup(set_prefix=False)

application = build_application()

"""ASGI entry point: the product is served by uvicorn so that SSE responses really stream.

Static files are served by the same application (Django's ASGI static handler, which reads them
through the finders), so one uvicorn process is the whole product; put a CDN or proxy in front for
heavy traffic. This module only builds the application: `manage.py serve` serves it, tuned for a
long-lived process.
"""

import asyncio
import os
from concurrent.futures import ThreadPoolExecutor

import django
from asgiref.sync import ThreadSensitiveContext, iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import ImproperlyConfigured, MiddlewareNotUsed, SuspiciousFileOperation
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.exception import convert_exception_to_response, response_for_exception
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils.deprecation import MiddlewareMixin
from django.utils.module_loading import import_string

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")

# Responses that stay open for the whole of an agent's run.
LONG_LIVED_VIEWS = frozenset({"run-events"})


class AgentsUIASGIHandler(ASGIHandler):
    """Django's ASGI handler, except that a run's event stream keeps no thread of its own, and that
    synchronous middleware goes to its thread once on the way in and once on the way out.

    Django gives every request a thread for its synchronous parts and keeps it until the response
    ends: for an event stream that is a thread per open tab for the whole run (its stack, and one
    more thread for the GIL to share). An event stream does its synchronous work
    before the first byte (and holds no database connection afterwards), so it uses the process's
    shared thread for that instead, as every request did before per-request threads existed.

    Django's own middleware (security, sessions, CSRF, sign-in, messages...) is synchronous: under
    ASGI each of its hooks is a trip to the request's thread and back to the event loop, fifteen
    trips a request, each waiting its turn on a loop busy with hundreds of streams. Consecutive
    middleware of that kind runs as one `OneTrip`, in the same order and with the same outcome.

    Django starts that thread for the request and another one at its end to join it: two thread
    starts a request, and at each the event loop waits until the new thread runs (with 500 streams
    open, a fifth of the loop's time). A request here takes a thread of `RequestThreads` and gives
    it back when it ends: still one request's work at a time on it, in its order.
    """

    def __init__(self):
        super().__init__()
        self.threads = RequestThreads()

    def load_middleware(self, is_async=False):
        if not is_async or not all(_async_or_one_trip(path) for path in settings.MIDDLEWARE):
            return super().load_middleware(is_async)
        # Django's own construction (BaseHandler.load_middleware), innermost first, for a stack of
        # async-capable middleware and of MiddlewareMixin classes with synchronous hooks.
        self._view_middleware, self._template_response_middleware, self._exception_middleware = [], [], []
        handler = convert_exception_to_response(self._get_response_async)
        trip: list[MiddlewareMixin] = []  # outermost first
        for path in reversed(settings.MIDDLEWARE):
            middleware = import_string(path)
            one_trip = _one_trip(middleware)
            if not one_trip and trip:
                handler, trip = convert_exception_to_response(OneTrip(trip, handler)), []
            try:
                instance = middleware(_inner_of_a_trip if one_trip else handler)
            except MiddlewareNotUsed:
                continue
            if hasattr(instance, "process_view"):
                self._view_middleware.insert(0, self.adapt_method_mode(True, instance.process_view))
            if hasattr(instance, "process_template_response"):
                self._template_response_middleware.append(
                    self.adapt_method_mode(True, instance.process_template_response)
                )
            if hasattr(instance, "process_exception"):
                self._exception_middleware.append(self.adapt_method_mode(False, instance.process_exception))
            if one_trip:
                trip.insert(0, instance)
            else:
                handler = convert_exception_to_response(instance)
        if trip:
            handler = convert_exception_to_response(OneTrip(trip, handler))
        self._middleware_chain = handler

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)
        if self._long_lived(scope):
            return await self.handle(scope, receive, send)
        thread = self.threads.lease()
        try:
            async with ThreadSensitiveContext(executor=thread):
                await self.handle(scope, receive, send)
        except BaseException:
            self.threads.give_back(thread, reusable=False)
            raise
        self.threads.give_back(thread)

    @staticmethod
    def _long_lived(scope) -> bool:
        path = scope["path"].removeprefix(scope.get("root_path", "")) or "/"
        try:
            return resolve(path).url_name in LONG_LIVED_VIEWS
        except Resolver404:
            return False


class RequestThreads:
    """The threads that requests' synchronous parts run on, each kept for the next request.

    A request leases one thread (an idle one, or a new one when none is idle) for its whole time and
    gives it back at its end; up to `KEEP` idle threads stay, and one given back past that ends when
    its work is done. A request that did not end normally (cancelled when its browser left, or
    raised) gives its thread back to end: a synchronous call it was awaiting may still be running.
    A thread's database connection is Django's, closed at the request's end as CONN_MAX_AGE says: kept
    on SQLite (settings.py), so that a thread kept keeps its connection and prepared statements.
    """

    KEEP = 16

    def __init__(self) -> None:
        self._idle: list[ThreadPoolExecutor] = []

    def lease(self) -> ThreadPoolExecutor:
        if self._idle:
            return self._idle.pop()
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="request")

    def give_back(self, thread: ThreadPoolExecutor, *, reusable: bool = True) -> None:
        if reusable and len(self._idle) < self.KEEP:
            self._idle.append(thread)
        else:
            thread.shutdown(wait=False)

    @property
    def idle(self) -> int:
        return len(self._idle)


class OneTrip:
    """Consecutive synchronous middleware, as Django runs it, in one trip to the request's thread on
    the way in (every `process_request`, outermost first) and one on the way out (every
    `process_response`, innermost first).

    As in Django's chain: a `process_request` that answers skips the rest and the view, and its
    own `process_response` and the outer ones see its answer; one that raises becomes Django's
    response for the exception, seen by the outer ones alone; a `process_response` that raises
    becomes that response for the next one out.
    """

    def __init__(self, members: list[MiddlewareMixin], get_response) -> None:
        self.members = members
        self.get_response = get_response
        markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        response, entered = await sync_to_async(self._requests, thread_sensitive=True)(request)
        if response is None:
            response = await self.get_response(request)
        return await sync_to_async(self._responses, thread_sensitive=True)(request, response, entered)

    def _requests(self, request: HttpRequest) -> tuple[HttpResponse | None, int]:
        """An answer from the way in (or None), and how many members' `process_response` it sees."""
        for index, member in enumerate(self.members):
            if not hasattr(member, "process_request"):
                continue
            try:
                response = member.process_request(request)
            except Exception as exc:
                return response_for_exception(request, exc), index
            if response is not None:
                return response, index + 1
        return None, len(self.members)

    def _responses(self, request: HttpRequest, response: HttpResponse, entered: int) -> HttpResponse:
        for member in reversed(self.members[:entered]):
            if hasattr(member, "process_response"):
                try:
                    response = member.process_response(request, response)
                except Exception as exc:
                    response = response_for_exception(request, exc)
        return response


def _one_trip(middleware) -> bool:
    """Django's kind of synchronous middleware: MiddlewareMixin's calls, synchronous hooks."""
    return (
        isinstance(middleware, type)
        and issubclass(middleware, MiddlewareMixin)
        and middleware.__call__ is MiddlewareMixin.__call__
        and middleware.__acall__ is MiddlewareMixin.__acall__
        and not any(
            iscoroutinefunction(getattr(middleware, hook, None))
            for hook in ("process_request", "process_response")
        )
    )


def _async_or_one_trip(path: str) -> bool:
    middleware = import_string(path)
    return _one_trip(middleware) or getattr(middleware, "async_capable", False)


async def _inner_of_a_trip(request: HttpRequest) -> HttpResponse:
    # A member of a OneTrip is called through its hooks alone, never as a whole.
    raise RuntimeError("a middleware of a one-trip group was called whole")


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

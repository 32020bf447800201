"""Who may call the demo agents, and how much one call may send and receive.

The demo agents run inside the product's own server, so they must not become a way in for anyone else:

- they answer only while settings.AGENTS_UI_DEMO_AGENTS is on; otherwise every route is a 404;
- every call but discovery carries this installation's demo key in the KEY_HEADER header. The key is
  derived from SECRET_KEY, and registration stores it as the demo endpoints' custom-header
  credential, so the product sends it exactly as it sends any agent's credential. A browser cannot
  add that header to a cross-site request, which is why the routes need no CSRF token;
- discovery (an AG-UI agent's capabilities, an external agent's policy, the documentation page) stays
  open, as a real agent's is: it takes no body and answers a small fixed document;
- a request body larger than the route takes is refused with 413 before it is parsed;
- an answer may not grow past ANSWER_ALLOWANCE plus ANSWER_FACTOR times the request: past that the
  agent ends the run with an error, so no request buys a much larger answer.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Any

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.utils.crypto import constant_time_compare, salted_hmac

from agents_ui.demo.replies import human_size

KEY_HEADER = "X-Demo-Agent-Key"
# Runs and JSON calls: a long conversation of long messages fits with room to spare.
MAX_BODY_BYTES = 1024 * 1024
# What a multipart upload adds around the file itself (boundaries, part headers).
MULTIPART_OVERHEAD_BYTES = 64 * 1024
# Every answer may use this much whatever the request, plus ANSWER_FACTOR bytes per byte received.
ANSWER_ALLOWANCE = 64 * 1024
ANSWER_FACTOR = 2

View = Callable[..., Awaitable[HttpResponse]]


def enabled() -> bool:
    """Whether this server serves its demo agents (read at call time, so tests can switch it)."""
    return bool(getattr(settings, "AGENTS_UI_DEMO_AGENTS", False))


def demo_key() -> str:
    """This installation's demo key: secret as long as SECRET_KEY is, and the same in every worker."""
    return salted_hmac("agents_ui.demo.gate", "demo agent key", algorithm="sha256").hexdigest()


def has_key(request: HttpRequest) -> bool:
    return constant_time_compare(request.headers.get(KEY_HEADER, ""), demo_key())


def error(status: int, code: str, message: str) -> JsonResponse:
    """An error in the body every demo agent uses (docs/PROTOCOLS.md 2.3), so clients show `message`."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


def too_large_message(size: int | None, limit: int) -> str:
    said = f"The request is {human_size(size)}" if size is not None else "The request is too large"
    return f"{said}; this demo agent takes at most {human_size(limit)}."


def too_large(size: int | None, limit: int) -> JsonResponse:
    return error(413, "request_too_large", too_large_message(size, limit))


def declared_size(request: HttpRequest) -> int | None:
    """The Content-Length the client sent, or None when it sent none (or nonsense)."""
    try:
        return max(0, int(request.headers.get("Content-Length", "")))
    except ValueError:
        return None


def read_body(request: HttpRequest, limit: int) -> bytes | None:
    """The body, or None when it is over `limit`: never more than one byte past it is read."""
    size = declared_size(request)
    if size is not None and size > limit:
        return None
    raw = request.read(limit + 1)
    return None if len(raw) > limit else raw


def demo_route(*, keyed: bool = True) -> Callable[[View], View]:
    """Serve the view only while the demo agents are on (404), and, when `keyed`, only to the key (403)."""

    def decorate(view: View) -> View:
        @functools.wraps(view)
        async def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not enabled():
                raise Http404("The demo agents are not served here.")
            if keyed and not has_key(request):
                return error(
                    403, "forbidden", "This demo agent answers only the Agents UI installation serving it."
                )
            return await view(request, *args, **kwargs)

        return gated

    return decorate


class AnswerBudget:
    """How many bytes an answer to a request of `request_bytes` may still send."""

    def __init__(self, request_bytes: int) -> None:
        self.limit = ANSWER_ALLOWANCE + ANSWER_FACTOR * max(0, request_bytes)
        self.used = 0

    def allows(self, frame: str) -> bool:
        """Count `frame`; False once the answer would be over its limit (the frame is not to be sent)."""
        self.used += len(frame.encode())
        return self.used <= self.limit

    @property
    def message(self) -> str:
        return (
            f"The answer grew past {human_size(self.limit)}, the most this request may produce, "
            "so the agent stopped it."
        )

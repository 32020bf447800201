"""HTTP plumbing shared by both clients: timeouts, error translation, owned-or-borrowed clients."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from .errors import (
    AgentError,
    AgentTimeoutError,
    AgentUnreachableError,
    EventIdleTimeoutError,
    ProtocolError,
    RunTimeLimitError,
    error_from_response,
)
from .limits import MAX_JSON_DEPTH, duration_label, json_text_depth

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ERROR_BODY_BYTES",
    "BodyOutOfBoundsError",
    "BodyTooDeepError",
    "BodyTooLargeError",
    "RunClock",
    "check_content_type",
    "client_for",
    "make_timeout",
    "raise_for_status",
    "read_json",
    "translate_transport_errors",
]

# connect: how long to wait for the agent to accept; read: the idle time allowed between two reads
# of a response, so on a stream it is the idle timeout between events.
DEFAULT_TIMEOUT = httpx.Timeout(connect=5.0, read=60.0, write=30.0, pool=5.0)
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_JSON_BODY_BYTES = 8 * 1024 * 1024


def make_timeout(timeout: float | httpx.Timeout | None) -> httpx.Timeout:
    if timeout is None:
        return DEFAULT_TIMEOUT
    if isinstance(timeout, httpx.Timeout):
        return timeout
    return httpx.Timeout(timeout)


@contextlib.contextmanager
def translate_transport_errors(what: str) -> Iterator[None]:
    """httpx errors -> the SDK's. ``what`` names the call for the message (never a credential)."""
    try:
        yield
    except httpx.TimeoutException as exc:
        raise AgentTimeoutError(f"{what}: the agent did not answer in time ({type(exc).__name__})") from exc
    except httpx.ConnectError as exc:
        raise AgentUnreachableError(f"{what}: the agent could not be reached ({exc})") from exc
    except httpx.RemoteProtocolError as exc:
        raise ProtocolError(f"{what}: the agent broke the HTTP exchange ({exc})") from exc
    except httpx.TransportError as exc:
        raise AgentUnreachableError(
            f"{what}: the connection to the agent failed ({type(exc).__name__})"
        ) from exc
    except httpx.InvalidURL as exc:
        raise AgentUnreachableError(f"{what}: the agent's URL is not valid ({exc})") from exc


@contextlib.asynccontextmanager
async def client_for(client: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """The caller's client when given (connection reuse), else one that lives for this call only,
    so nothing is left open when a caller forgets to close the SDK object."""
    if client is not None:
        yield client
        return
    async with httpx.AsyncClient(follow_redirects=False) as owned:
        yield owned


async def _read_limited(response: httpx.Response, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            return b"".join(chunks), True
        chunks.append(chunk)
    return b"".join(chunks), False


async def raise_for_status(response: httpx.Response) -> None:
    """A non-2xx answer becomes its SDK error (docs/PROTOCOLS.md 2.3); the body is read up to a limit."""
    if response.is_success:
        return
    body, _ = await _read_limited(response, MAX_ERROR_BODY_BYTES)
    raise error_from_response(response.status_code, body, response.headers)


def check_content_type(response: httpx.Response, expected: str | tuple[str, ...], what: str) -> None:
    content_type = response.headers.get("content-type", "")
    allowed = (expected,) if isinstance(expected, str) else expected
    if content_type.split(";", 1)[0].strip().lower() not in allowed:
        shown = content_type or "no content type"
        raise ProtocolError(f"{what}: the agent answered {shown!r}, expected {expected!r}")


class BodyOutOfBoundsError(ProtocolError):
    """A JSON answer past a bound the client reads within: not mistaken for a page that is not JSON
    (which, for discovery, means "no discovery"), and never kept."""


class BodyTooLargeError(BodyOutOfBoundsError):
    """Larger than the client reads: not read to its end."""


class BodyTooDeepError(BodyOutOfBoundsError):
    """Nested deeper than the client parses (checked on the text, before any recursive parser)."""


async def read_json(
    response: httpx.Response,
    what: str,
    *,
    limit: int = MAX_JSON_BODY_BYTES,
    max_depth: int = MAX_JSON_DEPTH,
    content_types: tuple[str, ...] = ("application/json",),
) -> Any:
    """The JSON body of a 2xx answer, or ProtocolError saying what is wrong with it."""
    check_content_type(response, content_types, what)
    body, too_large = await _read_limited(response, limit)
    if too_large:
        raise BodyTooLargeError(f"{what}: the agent's answer is larger than {limit} bytes")
    try:
        text = body.decode(json.detect_encoding(body))
    except (UnicodeDecodeError, LookupError) as exc:
        raise ProtocolError(f"{what}: the agent's answer is not valid JSON ({exc})") from exc
    if text.count("[") + text.count("{") > max_depth and json_text_depth(text) > max_depth:
        raise BodyTooDeepError(f"{what}: the agent's answer is nested more than {max_depth} levels deep")
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ProtocolError(f"{what}: the agent's answer is not valid JSON ({exc})") from exc


class RunClock:
    """The time bounds of one run's stream: an overall limit, and an idle limit on whole events.

    The idle limit counts from the last complete event the client handed on, not the last byte, so
    an agent that drips bytes or never ends a frame is cut as surely as a silent one. While the
    agent legitimately waits (``waiting`` > 0: an approval it asked for is undecided), only the
    overall limit applies. Created when the run starts, so the overall limit counts from there.
    """

    __slots__ = (
        "_idle_deadline",
        "_loop",
        "_run_deadline",
        "event_idle_timeout",
        "run_time_limit",
        "waiting",
    )

    def __init__(self, event_idle_timeout: float | None, run_time_limit: float | None) -> None:
        self._loop = asyncio.get_running_loop()
        self.event_idle_timeout = event_idle_timeout
        self.run_time_limit = run_time_limit
        now = self._loop.time()
        self._run_deadline = now + run_time_limit if run_time_limit is not None else None
        self._idle_deadline: float | None = None
        self.waiting = 0
        self.event_seen()

    def event_seen(self) -> None:
        """A whole event arrived (and was handled): the idle limit starts again from now."""
        if self.event_idle_timeout is not None:
            self._idle_deadline = self._loop.time() + self.event_idle_timeout

    async def next_chunk(self, chunks: AsyncIterator[bytes]) -> bytes | None:
        """The next piece of the body, None at its end; raises when a limit passes first."""
        idle = self._idle_deadline if not self.waiting else None
        run = self._run_deadline
        deadline = run if idle is None else idle if run is None else min(idle, run)
        if deadline is None:
            return await anext(chunks, None)
        try:
            async with asyncio.timeout_at(deadline) as scope:
                return await anext(chunks, None)
        except TimeoutError:
            if not scope.expired():
                raise
            if deadline == run:
                assert self.run_time_limit is not None
                raise RunTimeLimitError(
                    f"The run went past its time limit of {duration_label(self.run_time_limit)}; "
                    "the answer was cut there."
                ) from None
            assert self.event_idle_timeout is not None
            raise EventIdleTimeoutError(
                f"The agent sent no complete event for {duration_label(self.event_idle_timeout)}; "
                "the answer was cut there."
            ) from None


def describe(exc: AgentError) -> str:
    """Short text for a discovery snapshot."""
    return str(exc)

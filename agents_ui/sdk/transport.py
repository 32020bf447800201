"""HTTP plumbing shared by both clients: timeouts, error translation, owned-or-borrowed clients."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any, Literal

import httpx

from .errors import (
    AgentError,
    AgentTimeoutError,
    AgentUnreachableError,
    ProtocolError,
    error_from_response,
)

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_ERROR_BODY_BYTES",
    "BodyTooLargeError",
    "DiscoveryStatus",
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

DiscoveryStatus = Literal["declared", "none", "invalid", "unreachable"]


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


def check_content_type(response: httpx.Response, expected: str, what: str) -> None:
    content_type = response.headers.get("content-type", "")
    if content_type.split(";", 1)[0].strip().lower() != expected:
        shown = content_type or "no content type"
        raise ProtocolError(f"{what}: the agent answered {shown!r}, expected {expected!r}")


class BodyTooLargeError(ProtocolError):
    """A JSON answer over the size the client reads: not read to its end, and not mistaken for a
    page that is not JSON (which, for discovery, means "no discovery")."""


async def read_json(response: httpx.Response, what: str, *, limit: int = MAX_JSON_BODY_BYTES) -> Any:
    """The JSON body of a 2xx answer, or ProtocolError saying what is wrong with it."""
    check_content_type(response, "application/json", what)
    body, too_large = await _read_limited(response, limit)
    if too_large:
        raise BodyTooLargeError(f"{what}: the agent's answer is larger than {limit} bytes")
    try:
        return json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ProtocolError(f"{what}: the agent's answer is not valid JSON ({exc})") from exc


def describe(exc: AgentError) -> str:
    """Short text for a discovery snapshot."""
    return str(exc)

"""One error hierarchy for both protocols, and the one place that maps an error answer to it.

Messages are written for an admin reading a log or a banner. They never contain credentials: no
header value is ever copied into an exception.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = [
    "ERROR_CLASSES",
    "AgentError",
    "AgentTimeoutError",
    "AgentUnreachableError",
    "ApprovalAlreadyDecidedError",
    "ApprovalExpiredError",
    "EventIdleTimeoutError",
    "FileTooLargeError",
    "HostContextRejectedError",
    "InternalAgentError",
    "InvalidRequestError",
    "NotFoundError",
    "ProtocolError",
    "RateLimitedError",
    "RunTimeLimitError",
    "RunTooLargeError",
    "SdkVersionUnsupportedError",
    "SpendLimitExceededError",
    "UnsupportedCapabilityError",
    "UnsupportedMediaTypeError",
    "error_from_response",
    "parse_retry_after",
    "validation_problems",
]


class AgentError(Exception):
    """Base of every SDK error. ``code`` is the stable machine-readable reason."""

    code: str = "agent_error"
    default_message: str = "the agent answered with an error"

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        status: int | None = None,
        capability: str | None = None,
        retry_after: float | None = None,
        request_id: str | None = None,
        details: Any = None,
    ) -> None:
        if code is not None:
            self.code = code
        self.message = message or self.default_message
        self.status = status
        self.capability = capability
        self.retry_after = retry_after
        self.request_id = request_id
        self.details = details
        super().__init__(self.message)

    def __str__(self) -> str:
        parts = [self.message]
        if self.status is not None:
            parts.append(f"(HTTP {self.status}, {self.code})")
        else:
            parts.append(f"({self.code})")
        if self.request_id:
            parts.append(f"request {self.request_id}")
        return " ".join(parts)


# --- docs/PROTOCOLS.md 2.3: one class per code ---------------------------------------------------------


class InvalidRequestError(AgentError):
    code = "invalid_request"
    default_message = "the agent rejected the request as malformed"


class UnsupportedCapabilityError(AgentError):
    code = "unsupported_capability"
    default_message = "the agent's policy disables this capability"

    def __init__(self, message: str | None = None, *, capability: str | None = None, **kwargs: Any) -> None:
        if message is None and capability:
            message = f"the agent's policy disables the capability {capability!r}"
        super().__init__(message, capability=capability, **kwargs)


class NotFoundError(AgentError):
    code = "not_found"
    default_message = "the agent does not know this conversation, approval, file or artifact"


class ApprovalAlreadyDecidedError(AgentError):
    code = "approval_already_decided"
    default_message = "this approval has already been decided"


class ApprovalExpiredError(AgentError):
    code = "approval_expired"
    default_message = "this approval expired before it was decided"


class FileTooLargeError(AgentError):
    code = "file_too_large"
    default_message = "the file is larger than the agent accepts"


class UnsupportedMediaTypeError(AgentError):
    code = "unsupported_media_type"
    default_message = "the agent does not accept this type of file"


class HostContextRejectedError(AgentError):
    code = "host_context_rejected"
    default_message = "the agent rejected the host context (a field it does not accept, or too large)"


class SdkVersionUnsupportedError(AgentError):
    code = "sdk_version_unsupported"
    default_message = "the agent requires a newer SDK version than this product runs"


class RateLimitedError(AgentError):
    code = "rate_limited"
    default_message = "the agent's rate limit is reached; try again later"


class SpendLimitExceededError(RateLimitedError):
    """A 429 too, with ``Retry-After``; a subclass so "wait and retry" handling covers both."""

    code = "spend_limit_exceeded"
    default_message = "the agent's spend limit is reached; try again later"


class InternalAgentError(AgentError):
    code = "internal"
    default_message = "the agent failed internally"


# --- transport and protocol -----------------------------------------------------------------------


class AgentUnreachableError(AgentError):
    code = "unreachable"
    default_message = "the agent could not be reached"


class AgentTimeoutError(AgentError):
    code = "timeout"
    default_message = "the agent did not answer in time"


class ProtocolError(AgentError):
    """The agent answered, but not in the declared shape (bad JSON, wrong content type, a cut stream)."""

    code = "protocol_error"
    default_message = "the agent's answer does not follow the protocol"


# --- the bounds of one run (agents_ui.sdk.limits): the answer so far is kept, the rest is cut ----------


class RunTooLargeError(ProtocolError):
    code = "run_too_large"
    default_message = "The agent sent more than this product reads in one run; the answer was cut there."


class EventIdleTimeoutError(AgentTimeoutError):
    """No whole event for too long, even if bytes kept coming (a drip, or a frame that never ends)."""

    code = "event_idle_timeout"
    default_message = "The agent sent no complete event for too long; the answer was cut there."


class RunTimeLimitError(AgentTimeoutError):
    code = "run_time_limit"
    default_message = "The run went past its time limit; the answer was cut there."


ERROR_CLASSES: dict[str, type[AgentError]] = {
    cls.code: cls
    for cls in (
        InvalidRequestError,
        UnsupportedCapabilityError,
        NotFoundError,
        ApprovalAlreadyDecidedError,
        ApprovalExpiredError,
        FileTooLargeError,
        UnsupportedMediaTypeError,
        HostContextRejectedError,
        SdkVersionUnsupportedError,
        RateLimitedError,
        SpendLimitExceededError,
        InternalAgentError,
    )
}


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` as seconds: delta-seconds or an HTTP date. None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        # Plain dicts are case-sensitive; httpx.Headers is not.
        lowered = name.lower()
        for key, candidate in headers.items():
            if key.lower() == lowered:
                return candidate
    return value


def error_from_response(
    status: int,
    body: bytes | str | Mapping[str, Any] | None,
    headers: Mapping[str, str] | None = None,
) -> AgentError:
    """Turn a non-2xx answer into its exception (docs/PROTOCOLS.md 2.3). Never raises itself.

    The code in the body decides the class; when the body is not the declared shape, the status
    alone decides (5xx -> internal, 429 -> rate limited), else a plain ``AgentError``.
    """
    retry_after = parse_retry_after(_header(headers, "Retry-After"))
    parsed: Any = body
    if isinstance(body, bytes | str):
        try:
            parsed = json.loads(body) if body else None
        except (ValueError, UnicodeDecodeError):
            parsed = None
    error = parsed.get("error") if isinstance(parsed, Mapping) else None
    if isinstance(error, Mapping) and isinstance(error.get("code"), str):
        code = error["code"]
        message = error.get("message") if isinstance(error.get("message"), str) else None
        capability = error.get("capability") if isinstance(error.get("capability"), str) else None
        request_id = error.get("requestId") if isinstance(error.get("requestId"), str) else None
        cls = ERROR_CLASSES.get(code)
        kwargs: dict[str, Any] = {
            "status": status,
            "capability": capability,
            "retry_after": retry_after,
            "request_id": request_id,
            "details": error.get("details"),
        }
        if cls is None:
            return AgentError(message or f"the agent answered with the error {code!r}", code=code, **kwargs)
        return cls(message, **kwargs)

    # Not the declared error shape: a proxy, a framework default page, or a non-conforming agent.
    note = f"the agent answered HTTP {status} without the error body of the protocol"
    if status >= 500:
        return InternalAgentError(note, status=status, retry_after=retry_after)
    if status == 429:
        return RateLimitedError(note, status=status, retry_after=retry_after)
    return AgentError(note, code=f"http_{status}", status=status, retry_after=retry_after)


def validation_problem(where: Iterable[object], why: str, *, separator: str = ".", root: str = "") -> str:
    """One problem of a value that does not match its model or schema: ``where: why``, ``where``
    the path to the part at fault joined by ``separator`` (``root`` for the document itself, or
    just ``why`` when ``root`` is empty). The one way the SDK words a validation problem."""
    path = separator.join(str(part) for part in where) or root
    return f"{path}: {why}" if path else why


def validation_problems(exc: ValidationError, *, limit: int = 5, root: str = "(root)") -> str:
    """What a pydantic validation failure says, for a person: the first ``limit`` problems, each as
    `validation_problem` words it with a dotted path."""
    return "; ".join(
        validation_problem(err["loc"], err["msg"], root=root) for err in exc.errors(include_url=False)[:limit]
    )

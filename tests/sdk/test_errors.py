"""error_from_response: the one mapping from an error answer to an exception."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest

from agents_ui.sdk import errors as e


@pytest.mark.parametrize(
    ("status", "code", "cls"),
    [
        (400, "invalid_request", e.InvalidRequestError),
        (403, "unsupported_capability", e.UnsupportedCapabilityError),
        (404, "not_found", e.NotFoundError),
        (409, "approval_already_decided", e.ApprovalAlreadyDecidedError),
        (410, "approval_expired", e.ApprovalExpiredError),
        (413, "file_too_large", e.FileTooLargeError),
        (415, "unsupported_media_type", e.UnsupportedMediaTypeError),
        (422, "host_context_rejected", e.HostContextRejectedError),
        (426, "sdk_version_unsupported", e.SdkVersionUnsupportedError),
        (429, "rate_limited", e.RateLimitedError),
        (429, "spend_limit_exceeded", e.SpendLimitExceededError),
        (500, "internal", e.InternalAgentError),
    ],
)
def test_minimal_detail_bodies_map_by_code(status, code, cls):
    exc = e.error_from_response(status, f'{{"error": {{"code": "{code}"}}}}'.encode(), {})
    assert type(exc) is cls and exc.code == code and exc.status == status
    assert exc.message == cls.default_message


def test_standard_and_diagnostic_details_are_kept():
    body = {
        "error": {
            "code": "unsupported_capability",
            "message": "files are disabled",
            "capability": "files",
            "requestId": "r-1",
            "details": {"policy": "v3"},
        }
    }
    exc = e.error_from_response(403, body, None)
    assert isinstance(exc, e.UnsupportedCapabilityError)
    assert (exc.message, exc.capability, exc.request_id, exc.details) == (
        "files are disabled",
        "files",
        "r-1",
        {"policy": "v3"},
    )
    assert "r-1" in str(exc) and "HTTP 403" in str(exc)


def test_retry_after_seconds_and_date():
    exc = e.error_from_response(429, {"error": {"code": "rate_limited"}}, {"Retry-After": "12"})
    assert exc.retry_after == 12.0
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
    exc = e.error_from_response(429, {"error": {"code": "spend_limit_exceeded"}}, {"retry-after": later})
    assert 50 < exc.retry_after <= 60
    assert isinstance(exc, e.RateLimitedError)
    assert e.parse_retry_after("soon") is None


@pytest.mark.parametrize(
    ("status", "body", "cls", "code"),
    [
        (502, b"<html>bad gateway</html>", e.InternalAgentError, "internal"),
        (429, b"", e.RateLimitedError, "rate_limited"),
        (401, b'{"detail": "no"}', e.AgentError, "http_401"),
        (418, b'{"error": {"code": "teapot", "message": "short and stout"}}', e.AgentError, "teapot"),
    ],
)
def test_bodies_that_are_not_the_declared_shape(status, body, cls, code):
    exc = e.error_from_response(status, body, {})
    assert type(exc) is cls and exc.code == code


def test_every_sdk_error_is_an_agent_error():
    for cls in [*e.ERROR_CLASSES.values(), e.AgentTimeoutError, e.AgentUnreachableError, e.ProtocolError]:
        assert issubclass(cls, e.AgentError)
    assert len(e.ERROR_CLASSES) == 12

"""The errors of docs/PROTOCOLS.md 2.3 an external demo agent answers with: the view renders `body`."""

from __future__ import annotations

from typing import Any


class ErrorAnswer(Exception):
    """A non-2xx answer of PROTOCOLS 2.3: the view turns it into {"error": {...}}."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        capability: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.capability = capability
        self.details = details
        self.retry_after = retry_after

    def body(self, detail_level: str, request_id: str) -> dict[str, Any]:
        """The error body, with as much detail as the agent's `publicErrorDetail` promises."""
        error: dict[str, Any] = {"code": self.code}
        if detail_level != "minimal":
            error["message"] = self.message
            if self.capability:
                error["capability"] = self.capability
            error["requestId"] = request_id
        if detail_level == "diagnostic" and self.details:
            error["details"] = self.details
        return {"error": error}


def unsupported(capability: str) -> ErrorAnswer:
    return ErrorAnswer(
        403,
        "unsupported_capability",
        f"This agent does not offer {capability}.",
        capability=capability,
    )


def not_found(what: str) -> ErrorAnswer:
    return ErrorAnswer(404, "not_found", f"Unknown {what}.")


def invalid(message: str) -> ErrorAnswer:
    return ErrorAnswer(400, "invalid_request", message)

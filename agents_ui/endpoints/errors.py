"""The one place that turns an agent error into a sentence for the person using the page."""

from __future__ import annotations

import logging

from agents_ui.sdk import AgentError

logger = logging.getLogger(__name__)

MESSAGES: dict[str, str] = {
    "invalid_request": "The agent did not understand the request.",
    "unsupported_capability": "The agent does not offer {capability}.",
    "not_found": "The agent no longer knows this item.",
    "approval_already_decided": "This request was already decided.",
    "approval_expired": "This request expired before it was decided.",
    "file_too_large": "The file is larger than the agent accepts.",
    "unsupported_media_type": "The agent does not accept this type of file.",
    "host_context_rejected": "The agent refused the page context it was sent.",
    "sdk_version_unsupported": "The agent needs a newer version of this product's client.",
    "rate_limited": "The agent is busy: too many requests.",
    "spend_limit_exceeded": "The agent's spending limit is reached.",
    "internal": "The agent failed while answering.",
    "unreachable": "The agent cannot be reached.",
    "timeout": "The agent did not answer in time.",
    "protocol_error": "The agent answered in a form this product cannot read.",
    "stream_truncated": "Interrupted: the agent's answer stopped before it finished.",
    "unauthorized": "The agent refused this product's credentials: an admin must set the one it requires.",
}

# The product's own bounds on a run: the SDK's message already says which bound and where it cut.
# A rule of AG-UI the agent broke: the SDK's sentence names it (docs/PROTOCOLS.md 1.7).
OWN_WORDS = frozenset({"run_too_large", "event_idle_timeout", "run_time_limit", "agent_broke_protocol"})


def describe(error: AgentError) -> str:
    """A clear message; never the credential, never a raw body."""
    code = getattr(error, "code", "") or "internal"
    if code in OWN_WORDS:
        return error.message
    if code not in MESSAGES:  # the code is for the log, not for the sentence people read
        logger.info("the agent reported an error with an unknown code: %s", code[:100])
    template = MESSAGES.get(code, "The agent reported an error this product does not know.")
    capability = getattr(error, "capability", None) or "this feature"
    text = template.format(code=code, capability=capability)
    retry_after = getattr(error, "retry_after", None)
    if retry_after:
        text += f" Try again in {duration(retry_after)}."
    return text


def duration(seconds: float) -> str:
    """150 -> "2 minutes", 86400 -> "24 hours", 90 -> "90 seconds"."""
    seconds = round(seconds)
    for size, unit in ((3600, "hour"), (60, "minute")):
        if seconds >= size * 2 or (seconds >= size and seconds % size == 0):
            count = round(seconds / size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"

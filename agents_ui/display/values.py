"""How the run's cards write values: ids for the page, JSON, arguments, durations, the shown end of
a long text. Plain functions, shared by the cards, the stream differ and the views."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.conf import settings

from agents_ui.sdk.limits import safe_link


def safe_url(url: Any) -> str:
    """A link an agent gave, kept only when it is plain http(s)."""
    return safe_link(url) or ""


def shown_tail(text: str) -> tuple[str, int]:
    """The end of a text, at most AGENTS_UI_SHOWN_TEXT_CHARS long, and how many characters precede it.

    A run may hold tens of megabytes of text: a page shows the latest part of each, so it stays fast.
    """
    limit = settings.AGENTS_UI_SHOWN_TEXT_CHARS
    text = text or ""
    if len(text) <= limit:
        return text, 0
    return text[-limit:], len(text) - limit


def dom_id(prefix: str, value: str) -> str:
    """A stable, safe DOM id for an agent-chosen id (which may hold any character)."""
    return f"{prefix}-{hashlib.blake2s(value.encode(), digest_size=6).hexdigest()}"


def call_dom(run_id: Any, call_id: str) -> str:
    """A tool call's card id, scoped by run: AG-UI ids are not unique across the runs of a thread."""
    return dom_id("call", f"{run_id}:{call_id}")


def maybe_json(value: Any) -> Any:
    """Answers often arrive as JSON text: show the document, not an escaped string."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def confirmed_call(name: str, args: Any) -> tuple[str, Any] | None:
    """The call a confirmation tool asks about, (name, arguments): ADK's ``adk_request_confirmation``
    carries it as ``originalFunctionCall``."""
    if name != "adk_request_confirmation" or not isinstance(args, dict):
        return None
    original = args.get("originalFunctionCall")
    if not isinstance(original, dict) or not isinstance(original.get("name"), str):
        return None
    return original["name"][:200], original.get("args") if original.get("args") is not None else {}


def plain_arguments(args: Any) -> list[tuple[str, str]]:
    """Arguments as "name: value" lines, when each is a plain value; [] otherwise (shown as JSON)."""
    if not isinstance(args, dict) or not args:
        return []
    if not all(isinstance(v, str | int | float | bool) or v is None for v in args.values()):
        return []
    return [(str(k), _plain(v)) for k, v in args.items()]


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "none" if value is None else str(value)


def pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def seconds_label(seconds: float) -> str:
    """A duration as the run status says it: "12 s", "2 min 5 s" (workspace.js says it the same way)."""
    whole = int(seconds)
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"

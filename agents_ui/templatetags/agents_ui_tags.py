"""Small presentation filters: how the product words things, never what is supported."""

from __future__ import annotations

from datetime import UTC, datetime
from urllib.parse import urlsplit

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from agents_ui.sdk.limits import safe_link

register = template.Library()

_WINDOWS = {60: "minute", 3600: "hour", 86400: "day", 604800: "week"}


@register.filter
def words(value: object) -> str:
    """`non_idempotent` -> `non-idempotent`, `runtime_standard` -> `runtime standard`."""
    text = str(value or "")
    return text.replace("non_", "non-").replace("_", " ")


@register.filter
def per_window(seconds: object) -> str:
    """60 -> "per minute", 7200 -> "per 2 hours", 45 -> "per 45 s"."""
    try:
        value = int(seconds)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return ""
    for size, name in sorted(_WINDOWS.items(), reverse=True):
        if value == size:
            return f"per {name}"
        if value % size == 0:
            return f"per {value // size} {name}s"
    return f"per {value} s"


@register.filter
def ago(moment: datetime | None) -> str:
    """ "just now" under a minute, else "5 minutes ago"."""
    if moment is None:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment).split(',')[0]} ago"


@register.filter
def moment(value: object) -> datetime | None:
    """An ISO 8601 time an agent sent ("2026-12-01T12:18:52Z") as a datetime, None when it is not one."""
    if isinstance(value, datetime):
        return value
    try:
        parsed = datetime.fromisoformat(str(value or "").strip())
    except ValueError:
        return None
    return parsed if timezone.is_aware(parsed) else parsed.replace(tzinfo=UTC)


@register.filter
def number(value: object) -> str:
    """500.0 -> "500", 12.5 -> "12.5"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@register.filter
def host(url: str) -> str:
    """https://example.org/a/b -> "example.org": where a link goes, said briefly."""
    return urlsplit(url).netloc if isinstance(url, str) else ""


@register.filter
def agent_link(value: object) -> str:
    """An agent-supplied URL fit for an href: absolute http(s) only, else "" (no link is shown).

    Every link an agent names becomes one through here (the SDK's `safe_link` decides), so
    `javascript:`, `data:` and the like never do.
    """
    return safe_link(value) or ""

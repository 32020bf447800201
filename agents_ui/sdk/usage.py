"""Token usage an agent reports for a run, read into one bounded shape whatever the protocol.

AG-UI 1.1 puts ``usage`` on RUN_FINISHED and RUN_ERROR: a list of ``TokenUsage``, one entry per
provider and model, where ``inputTokens`` and ``outputTokens`` are totals and ``cachedInputTokens``,
``cacheWriteInputTokens`` and ``reasoningTokens`` are parts of them, never additions. An external
agent sends one object on ``run:completed`` (docs/PROTOCOLS.md 2.2). A2A defines none.

A count the agent did not send stays ``None``: "not reported" is never zero. Everything here is
agent-supplied: the entries, their labels and their numbers are bounded. Pure Python: no Django.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

MAX_ENTRIES = 16  # models one run reports
MAX_LABEL = 80  # characters of a provider's or a model's name
MAX_COUNT = 9_007_199_254_740_991  # AG-UI's bound: the largest integer a JSON number keeps

# Each count, by its name in the stored form (snake_case), and the names agents send it under.
KEYS: dict[str, tuple[str, ...]] = {
    "input_tokens": ("inputTokens", "input_tokens", "prompt_tokens"),
    "output_tokens": ("outputTokens", "output_tokens", "completion_tokens"),
    "total_tokens": ("totalTokens", "total_tokens"),
    "cached_input_tokens": ("cachedInputTokens", "cached_input_tokens"),
    "cache_write_input_tokens": ("cacheWriteInputTokens", "cache_write_input_tokens"),
    "reasoning_tokens": ("reasoningTokens", "reasoning_tokens"),
}


@dataclass(frozen=True)
class ModelUsage:
    """One provider and model's counts for a run; ``None`` where the agent reported none."""

    provider: str = ""
    model: str = ""
    input_tokens: int | None = None
    output_tokens: int | None = None
    total_tokens: int | None = None
    cached_input_tokens: int | None = None
    cache_write_input_tokens: int | None = None
    reasoning_tokens: int | None = None

    @property
    def label(self) -> str:
        """Which model this is, as a person reads it ("" when the agent named none)."""
        if self.provider and self.model:
            return f"{self.model} ({self.provider})"
        return self.model or self.provider

    @property
    def reported(self) -> bool:
        return any(getattr(self, kind) is not None for kind in KEYS)

    def as_json(self) -> dict[str, Any]:
        """The stored form: only what was reported."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) not in (None, "")
        }

    def plus(self, other: ModelUsage) -> ModelUsage:
        """Both entries' counts summed; a count stays ``None`` only where neither reported it."""
        sums = {kind: _add(getattr(self, kind), getattr(other, kind)) for kind in KEYS}
        return ModelUsage(self.provider, self.model, **sums)


def _add(a: int | None, b: int | None) -> int | None:
    if a is None:
        return b
    if b is None:
        return a
    return min(a + b, MAX_COUNT)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if value != value or value < 0 or value > MAX_COUNT:  # NaN, negative, past the bound
        return None
    return int(value)


def _label(value: Any) -> str:
    return value.strip()[:MAX_LABEL] if isinstance(value, str) else ""


def _entry(raw: Any) -> ModelUsage | None:
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        dump = getattr(raw, "model_dump", None)
        raw = dump(by_alias=True, exclude_none=True) if callable(dump) else None
        if not isinstance(raw, Mapping):
            return None
    counts: dict[str, int | None] = {}
    for kind, names in KEYS.items():
        counts[kind] = next((c for c in (_count(raw.get(name)) for name in names) if c is not None), None)
    entry = ModelUsage(_label(raw.get("provider")), _label(raw.get("model")), **counts)
    return entry if entry.reported else None


def read_usage(raw: Any) -> list[ModelUsage]:
    """The entries of a reported usage (a list of entries, one entry, or the stored form), one per
    provider and model (two entries for the same model are summed), at most ``MAX_ENTRIES``."""
    if raw is None:
        return []
    items: Iterable[Any] = raw if isinstance(raw, list | tuple) else [raw]
    found: dict[tuple[str, str], ModelUsage] = {}
    for item in list(items)[: MAX_ENTRIES * 4]:
        entry = _entry(item)
        if entry is None:
            continue
        key = (entry.provider, entry.model)
        if key in found:
            found[key] = found[key].plus(entry)
        elif len(found) < MAX_ENTRIES:
            found[key] = entry
    return list(found.values())


def stored(raw: Any) -> list[dict[str, Any]] | None:
    """What a run keeps of its usage (``Run.usage``): the entries' JSON, or None when none."""
    entries = read_usage(raw)
    return [entry.as_json() for entry in entries] or None


def merged(reports: Iterable[Any]) -> list[ModelUsage]:
    """Several runs' usage summed per provider and model (a conversation's, an agent's)."""
    found: dict[tuple[str, str], ModelUsage] = {}
    for report in reports:
        for entry in read_usage(report):
            key = (entry.provider, entry.model)
            found[key] = found[key].plus(entry) if key in found else entry
    return sorted(found.values(), key=lambda e: (e.model, e.provider))

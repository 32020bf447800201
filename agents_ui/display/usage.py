"""Token usage as a person reads it: one short line per model, under the answer and in the admin.

"1,234 tokens in (200 cached) · 567 out (50 reasoning)": cache and reasoning counts are parts of the
totals (AG-UI's accounting, agents_ui/sdk/usage.py), so they are shown inside them, never added. A
count the agent did not report reads "not reported", never 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agents_ui.sdk.usage import ModelUsage, merged, read_usage

__all__ = ["NOT_REPORTED", "UsageLine", "summed_lines", "usage_lines"]

NOT_REPORTED = "not reported"


@dataclass(frozen=True)
class UsageLine:
    model: str  # "" when the agent named none
    text: str  # "1,234 tokens in · 567 out"


def _number(count: int | None) -> str:
    return NOT_REPORTED if count is None else f"{count:,}"


def _parts(*named: tuple[int | None, str]) -> str:
    shown = [f"{count:,} {word}" for count, word in named if count is not None]
    return f" ({', '.join(shown)})" if shown else ""


def line_of(entry: ModelUsage) -> UsageLine:
    if entry.input_tokens is None:
        tokens_in = "tokens in: not reported"
    else:
        tokens_in = f"{entry.input_tokens:,} token{'s' if entry.input_tokens != 1 else ''} in"
    tokens_in += _parts(
        (entry.cached_input_tokens, "cached"), (entry.cache_write_input_tokens, "written to cache")
    )
    tokens_out = "out: not reported" if entry.output_tokens is None else f"{entry.output_tokens:,} out"
    tokens_out += _parts((entry.reasoning_tokens, "reasoning"))
    return UsageLine(entry.label, f"{tokens_in} · {tokens_out}")


def usage_lines(raw: Any) -> list[UsageLine]:
    """One run's reported usage (any protocol's shape, or the stored one), a line per model."""
    return [line_of(entry) for entry in read_usage(raw)]


def summed_lines(reports: Iterable[Any]) -> list[UsageLine]:
    """Several runs' usage summed per model: a conversation's, an agent's."""
    return [line_of(entry) for entry in merged(reports)]

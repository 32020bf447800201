"""What every demo agent shares: answers derived from what the user wrote, and paced streaming.

The demo agents have no model behind them. To feel responsive they echo the user's own words back
in a deterministic way (same input, same answer), and they stream their answers in small deltas
with a configurable delay between them (settings.AGENTS_UI_DEMO_PACING, 0 in tests).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Iterable

from django.conf import settings

_WORD_OR_SPACE = re.compile(r"\S+\s*|\s+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s")
_AMOUNT = re.compile(r"(\d+(?:[.,]\d{1,2})?)")


def pacing() -> float:
    """Seconds between two deltas, read at call time so tests and admins can change it live."""
    return max(0.0, float(getattr(settings, "AGENTS_UI_DEMO_PACING", 0.0)))


async def pause(steps: float = 1) -> None:
    """Wait `steps` pacing steps. With no pacing, still yield to the loop so each frame is its own chunk."""
    await asyncio.sleep(pacing() * steps)


def deltas(text: str, words_per_delta: int = 2) -> list[str]:
    """Split text into small deltas that concatenate back to exactly `text` (never an empty one)."""
    tokens = _WORD_OR_SPACE.findall(text)
    chunks = ["".join(tokens[i : i + words_per_delta]) for i in range(0, len(tokens), words_per_delta)]
    return [chunk for chunk in chunks if chunk] or ([text] if text else [])


async def paced(chunks: Iterable[str]) -> AsyncIterator[str]:
    """Yield each chunk, pausing between them as a model generating tokens would."""
    first = True
    for chunk in chunks:
        if not first:
            await pause()
        first = False
        yield chunk


def topic_of(text: str, limit: int = 80) -> str:
    """The gist of what the user asked: the first sentence, trimmed, without trailing punctuation."""
    text = " ".join(text.split())
    if not text:
        return "your request"
    first = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(" .!?")
    if len(first) > limit:
        first = first[:limit].rsplit(" ", 1)[0] + "…"
    return first or "your request"


def keywords(text: str, count: int = 3) -> list[str]:
    """Distinct longer words of the message, in order: used to make search queries and plans."""
    seen: list[str] = []
    for word in re.findall(r"[A-Za-zÀ-ÿ0-9][\w-]{3,}", text):
        lowered = word.lower()
        if lowered not in _STOP_WORDS and lowered not in seen:
            seen.append(lowered)
        if len(seen) == count:
            break
    return seen or ["overview"]


def first_amount(text: str, default: float) -> float:
    """The first number in the message (e.g. "refund 40 euros" -> 40.0), or `default`."""
    match = _AMOUNT.search(text)
    if not match:
        return default
    return float(match.group(1).replace(",", "."))


def human_size(size: int) -> str:
    value = float(size)
    for unit in ("bytes", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{int(value)} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{size} bytes"  # pragma: no cover


_STOP_WORDS = {
    "about",
    "after",
    "again",
    "also",
    "because",
    "before",
    "could",
    "does",
    "from",
    "have",
    "hello",
    "help",
    "into",
    "just",
    "like",
    "make",
    "need",
    "please",
    "should",
    "some",
    "that",
    "their",
    "them",
    "then",
    "there",
    "these",
    "this",
    "want",
    "what",
    "when",
    "which",
    "with",
    "would",
    "your",
}

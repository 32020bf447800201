"""One kind of in-process memo: bounded, optionally expiring, keyed by everything its value depends on.

Work that is pure given its inputs (validating a declaration, deciding a plan, rendering a card) is
done once per process while those inputs stay the same. The key *is* the inputs, so a memo never
needs to be invalidated: a change of input is a new key. The oldest entry goes when the memo is full.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Hashable
from typing import Any

_ALL: weakref.WeakSet[Memo] = weakref.WeakSet()
MISSING: Any = object()  # for memos whose values may be None: `memo.get(key, MISSING)`


def now() -> float:
    """The time entries expire by (tests move it instead of waiting)."""
    return time.monotonic()


class Memo:
    """`memo.get(key)` -> the value, or `default`; `memo.put(key, value)` -> value.

    `seconds` (a number, or a function giving one, read at each put) bounds how long an entry is
    trusted; without it an entry lasts until it is pushed out.
    """

    def __init__(self, name: str, *, size: int, seconds: float | Callable[[], float] | None = None) -> None:
        self.name = name
        self.size = size
        self.seconds = seconds
        self._entries: dict[Hashable, tuple[float | None, Any]] = {}
        _ALL.add(self)

    def get(self, key: Hashable, default: Any = None) -> Any:
        entry = self._entries.get(key)
        if entry is None:
            return default
        expires, value = entry
        if expires is not None and expires <= now():
            del self._entries[key]
            return default
        return value

    def put(self, key: Hashable, value: Any) -> Any:
        entries = self._entries
        if len(entries) >= self.size and key not in entries:
            del entries[next(iter(entries))]
        seconds = self.seconds() if callable(self.seconds) else self.seconds
        entries[key] = (None if seconds is None else now() + seconds, value)
        return value

    def clear(self) -> None:
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def forget_all() -> None:
    """Empty every memo of this process (a test's fresh start, a benchmark's cold run)."""
    for memo in list(_ALL):
        memo.clear()

"""A clock a test moves by hand, for product code that reads the time through a `now()` seam."""

from __future__ import annotations


class Clock:
    """`clock()` is the time now; `clock.advance(seconds)` moves it on, instantly."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds

"""Where a fact of a capability profile came from: which document, which field, what it held, and how.

A fact is declared (the agent said it, in its own words), negotiated (what `prepare()` granted),
inferred (it follows from another field, or from the protocol itself), observed (a run showed it)
or set by an admin (an override). The explain view shows this chain under every decision.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any, NamedTuple

# What the explain view shows of a raw value: enough to recognise it, never a whole document.
RAW_TEXT_LIMIT = 300


class Kind(StrEnum):
    DECLARED = "declared"
    NEGOTIATED = "negotiated"
    INFERRED = "inferred"
    OBSERVED = "observed"
    OVERRIDE = "override"


def show(value: Any, limit: int = RAW_TEXT_LIMIT) -> str:
    """A value as one short line: true/false, plain text, or JSON, cut at `limit` characters."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        text = str(value)
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
        except (ValueError, RecursionError):  # a cycle or a very deep structure from an agent
            text = f"({type(value).__name__})"
    return text if len(text) <= limit else f"{text[: limit - 1]}…"


# Facts and their provenance are tuples: immutable, and cheap enough to build by the dozen for
# every plan.
class Provenance(NamedTuple):
    """One field of one document, as it was read."""

    source: str  # the document: "AG-UI capabilities", "AWS Strands capabilities", "runs" ...
    path: str  # the field inside it, in the document's own names ("features.interrupts")
    raw: Any = None  # what the field held as sent; None when it was absent (or null)
    kind: Kind = Kind.DECLARED
    note: str = ""  # how the fact follows from the field, where that is not plain

    @property
    def present(self) -> bool:
        return self.raw is not None

    @property
    def raw_text(self) -> str:
        return show(self.raw) if self.present else "absent"

    def __str__(self) -> str:
        where = f"{self.source} > {self.path}" if self.path else self.source
        return f"{where} = {self.raw_text} ({self.kind.value})"


class Fact[T](NamedTuple):
    """One thing the profile knows, or does not, about an agent.

    - `value` set: known (true, false, a number, a list ...);
    - `value` None with provenance: the document has a place for it and said nothing there
      ("not declared": unknown);
    - no provenance at all: the document has no place for it (its shape cannot say it).
    """

    value: T | None = None
    provenance: tuple[Provenance, ...] = ()

    @property
    def known(self) -> bool:
        return self.value is not None

    @property
    def sayable(self) -> bool:
        return bool(self.provenance)

    @property
    def origin(self) -> Provenance | None:
        return self.provenance[0] if self.provenance else None


# The shape has no place for this fact.
UNSAID: Fact[Any] = Fact()


def any_flag(*facts: Fact[bool], note: str = "") -> Fact[bool]:
    """One flag from several fields saying the same thing: true if one is, false if one is and none
    is true, else unknown; every field is kept as provenance, the deciding ones first."""
    sayable = [fact for fact in facts if fact.sayable]
    if not sayable:
        return UNSAID
    if any(fact.value is True for fact in sayable):
        value: bool | None = True
    elif any(fact.value is False for fact in sayable):
        value = False
    else:
        value = None
    ordered = sorted(sayable, key=lambda fact: fact.value is not value)
    provenance = tuple(p for fact in ordered for p in fact.provenance)
    if note:
        first, *rest = provenance
        provenance = (Provenance(first.source, first.path, first.raw, first.kind, note), *rest)
    return Fact(value, provenance)

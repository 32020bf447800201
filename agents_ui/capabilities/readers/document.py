"""Reading fields of a declaration as sent (JSON decoded), each into a fact with its provenance.

Agents are untrusted: a reader only looks up the fields it knows, by path, and keeps a value only
when it has the type the field needs. A value of another type is not read, and the fact says why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from agents_ui.capabilities.provenance import Fact, Kind, Provenance

_ABSENT: Any = object()

# Fields kept without being read are shown one by one; an agent could send thousands.
KEPT_LIMIT = 50


def kept(
    source: str, fields: Mapping[str, Any], note: Callable[[str], str], prefix: str = ""
) -> list[Provenance]:
    """Fields kept as they were sent, each with its note (the caller bounds how many: `capped`)."""
    return [
        Provenance(source, f"{prefix}{key}", value, Kind.DECLARED, note(f"{prefix}{key}"))
        for key, value in fields.items()
    ]


def capped(source: str, found: list[Provenance]) -> tuple[Provenance, ...]:
    """At most KEPT_LIMIT fields, then one entry saying how many more there are."""
    if len(found) <= KEPT_LIMIT:
        return tuple(found)
    hidden = len(found) - KEPT_LIMIT
    return (
        *found[:KEPT_LIMIT],
        Provenance(source, "", hidden, Kind.DECLARED, f"and {hidden} more fields, not shown"),
    )


def as_json(declaration: Any) -> Any:
    """A declaration as its wire JSON: a pydantic model is dumped by alias, with only the fields the
    agent actually sent (a model's default is not a declaration)."""
    dump = getattr(declaration, "model_dump", None)
    if callable(dump):
        return dump(mode="json", by_alias=True, exclude_unset=True)
    return declaration


class Document:
    """One declaration, read field by field."""

    def __init__(self, raw: Mapping[str, Any], source: str) -> None:
        self.raw = raw
        self.source = source

    def at(self, path: str) -> Any:
        """The value at a dotted path, or None when a step is missing or not an object."""
        value: Any = self.raw
        for key in _steps(path):
            if type(value) is not dict and not isinstance(value, Mapping):
                return None
            value = value.get(key, _ABSENT)
            if value is _ABSENT:
                return None
        return value

    def provenance(self, path: str, kind: Kind = Kind.DECLARED, note: str = "") -> Provenance:
        return Provenance(self.source, path, self.at(path), kind, note)

    def read(
        self,
        path: str,
        convert: Callable[[Any], Any],
        *,
        kind: Kind = Kind.DECLARED,
        note: str = "",
        why_not: str = "",
    ) -> Fact[Any]:
        """The fact at `path`: `convert` turns the raw value into the fact's value, or None when it
        cannot; then the fact is unknown and its note says why not."""
        raw = self.at(path)
        if raw is None:
            return Fact(None, (Provenance(self.source, path, None, kind, note),))
        value = convert(raw)
        return Fact(value, (Provenance(self.source, path, raw, kind, why_not if value is None else note),))

    def flag(self, path: str, *, kind: Kind = Kind.DECLARED, note: str = "") -> Fact[bool]:
        return self.read(path, _boolean, kind=kind, note=note, why_not="not true or false: not read")

    def count(self, path: str, *, note: str = "") -> Fact[int]:
        return self.read(path, _count, note=note, why_not="not a whole number above zero: not read")

    def text(self, path: str, *, note: str = "") -> Fact[str]:
        return self.read(path, _text, note=note, why_not="not a text: not read")

    def url(self, path: str) -> Fact[str]:
        return self.read(path, _web_address, why_not="not an http(s) address: not shown")

    def texts(self, path: str, *, note: str = "") -> Fact[tuple[str, ...]]:
        return self.read(path, _texts, note=note, why_not="not a list of texts: not read")

    def mapping(self, path: str, *, note: str = "") -> Fact[Mapping[str, Any]]:
        return self.read(path, _mapping, note=note, why_not="not an object: not read")

    def items(self, path: str, convert: Callable[[Any], Any]) -> Fact[tuple[Any, ...]]:
        """A list of entries; entries `convert` cannot read (None) are left out."""

        def read_all(raw: Any) -> tuple[Any, ...] | None:
            if not isinstance(raw, Sequence) or isinstance(raw, str):
                return None
            return tuple(entry for entry in map(convert, raw) if entry is not None)

        return self.read(path, read_all, why_not="not a list: not read")


@cache
def _steps(path: str) -> tuple[str, ...]:
    return tuple(path.split("."))


def _boolean(raw: Any) -> bool | None:
    return raw if isinstance(raw, bool) else None


def _count(raw: Any) -> int | None:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw > 0 else None


def _text(raw: Any) -> str | None:
    return raw if isinstance(raw, str) else None


def _texts(raw: Any) -> tuple[str, ...] | None:
    if isinstance(raw, Sequence) and not isinstance(raw, str) and all(isinstance(v, str) for v in raw):
        return tuple(raw)
    return None


def _mapping(raw: Any) -> Mapping[str, Any] | None:
    return raw if isinstance(raw, Mapping) else None


def _web_address(raw: Any) -> str | None:
    # Shown as a link: anything but http(s) (javascript:, data: ...) would run in the page.
    if isinstance(raw, str) and raw.lower().startswith(("https://", "http://")) and len(raw) <= 2048:
        return raw
    return None


def count_or_zero(raw: Any) -> int | None:
    """A whole number of zero or more (a byte limit of 0 is a limit too)."""
    return raw if isinstance(raw, int) and not isinstance(raw, bool) and raw >= 0 else None

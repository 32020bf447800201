"""JSON Pointer (RFC 6901): the one implementation the SDK reads and writes documents with.

Used by A2UI's data bindings and updates (``a2ui/``) and by the state's JSON Patch engine
(``state.py``), which adds its own strictness (a pointer must start with ``/``, escapes must be
``~0`` or ``~1``) and bounds before it hands a path here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "MISSING",
    "array_index",
    "escape",
    "get",
    "join",
    "remove",
    "resolve",
    "tokens",
    "unescape",
    "upsert",
]

# What :func:`get` answers for a path with nothing at it (None is a value a document can hold).
MISSING: Any = object()


def escape(key: str) -> str:
    """A key as one reference token: ``~`` is ``~0``, ``/`` is ``~1``."""
    return key.replace("~", "~0").replace("/", "~1")


def unescape(token: str) -> str:
    """One reference token as its key: ``~1`` is ``/``, ``~0`` is ``~``."""
    return token.replace("~1", "/").replace("~0", "~")


def tokens(path: str) -> list[str]:
    """A pointer's reference tokens, unescaped (``~1`` is ``/``, ``~0`` is ``~``); lenient: a
    missing leading ``/`` is read as if it were there (A2UI's paths)."""
    if path in ("", "/"):
        return []
    return [unescape(p) for p in path.lstrip("/").split("/")]


def join(parts: Sequence[str]) -> str:
    """Reference tokens back into a pointer, escaped."""
    return "/" + "/".join(escape(p) for p in parts) if parts else "/"


def array_index(part: str, length: int, *, append: bool = False) -> int | None:
    """A token as an index into an array of ``length`` items (``-`` is the end when appending)."""
    if part == "-" and append:
        return length
    if not part.isdigit() or (len(part) > 1 and part[0] == "0"):
        return None
    index = int(part)
    return index if index < length + (1 if append else 0) else None


def resolve(data: Any, path: str) -> Any:
    """The value at an absolute JSON Pointer, or None when nothing is there."""
    value = get(data, tokens(path))
    return None if value is MISSING else value


def get(data: Any, parts: Sequence[str]) -> Any:
    """The value at ``parts``, or :data:`MISSING`."""
    for part in parts:
        if isinstance(data, Mapping):
            data = data.get(part, MISSING)
        elif isinstance(data, list):
            index = array_index(part, len(data))
            data = data[index] if index is not None else MISSING
        else:
            return MISSING
        if data is MISSING:
            return MISSING
    return data


def upsert(data: Any, parts: Sequence[str], value: Any) -> bool:
    """Upsert: missing objects on the way are created (A2UI's updateDataModel)."""
    for part in parts[:-1]:
        if isinstance(data, dict):
            nxt = data.get(part)
            if not isinstance(nxt, dict | list):
                nxt = data[part] = {}
            data = nxt
        elif isinstance(data, list):
            index = array_index(part, len(data))
            if index is None:
                return False
            if not isinstance(data[index], dict | list):
                data[index] = {}
            data = data[index]
        else:
            return False
    last = parts[-1]
    if isinstance(data, dict):
        data[last] = value
        return True
    if isinstance(data, list):
        index = array_index(last, len(data), append=True)
        if index is None:
            return False
        if index == len(data):
            data.append(value)
        else:
            data[index] = value
        return True
    return False


def remove(data: Any, parts: Sequence[str]) -> None:
    """Remove what is at ``parts``; an array's item becomes null, so the array keeps its length."""
    parent = get(data, parts[:-1])
    if isinstance(parent, dict):
        parent.pop(parts[-1], None)
    elif isinstance(parent, list):
        index = array_index(parts[-1], len(parent))
        if index is not None:
            parent[index] = None  # arrays keep their length

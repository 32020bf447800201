"""Shared state under STATE_SNAPSHOT and JSON Patch (RFC 6902), bounded in size, depth and work.

An agent's patches are untrusted: a few ``copy`` operations double the document each time, and a
patch of many operations against a large document would have it copied whole for every event. So
the document is patched in place, each change written to an undo log (a patch that fails or passes
a bound is undone, leaving the last good document), and its serialised size is kept up to date from
the operations' own values, without serialising the whole document for every event. A bound passed
holds that document (later patches to it are skipped, until a snapshot replaces it) and leaves one
note for the person reading the run. Notes never show Python internals.

Why not the ``jsonpatch`` package (installed, and the tests' oracle for what a patch means): it
applies a patch to a copy of the document (or in place with no way back), measures nothing while it
works, and has no notion of a bound. Bounding it from outside would mean serialising the whole
document after every operation and copying it before every patch: the cost this engine exists to
avoid. So this is the bounded engine: the same RFC 6902 semantics (checked against ``jsonpatch`` in
tests/sdk/test_state.py), with size, depth, operation count and work measured as it goes, and an
undo log instead of copies. Paths are read with :mod:`agents_ui.sdk.pointer`.
"""

from __future__ import annotations

import json
import re
from typing import Any

from . import pointer
from .limits import (
    MAX_JSON_DEPTH,
    MAX_PATCH_OPERATIONS,
    MAX_STATE_BYTES,
    MAX_STATE_WORK_BYTES,
    json_key,
    json_text_depth,
    size_label,
)

__all__ = ["StateKeeper"]

# After this many notes about patches that could not be applied, one more says the rest are left out.
MAX_FAILURE_NOTES = 3
_ARRAY_INDEX = re.compile(r"0|[1-9][0-9]*")
_BAD_ESCAPE = re.compile(r"~(?![01])")
_IMMUTABLE = (str, int, float, bool, type(None))
_MISSING = object()


class _PatchError(Exception):
    """A patch that cannot be applied; the message is for a person."""


class _Bound(Exception):
    """A patch that would take the document past a bound; the message is the note."""


def _dumps(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


def _member(key: str, members: dict[str, Any]) -> int:
    """What one member adds to an object's text besides its value: the key, a colon, maybe a comma."""
    return len(key) + 3 + (1 if members else 0)


def _item(items: list[Any]) -> int:
    return 1 if items else 0


class StateKeeper:
    """Applies snapshots and patches to one kind of document (``subject``: "state", "activity").

    One keeper serves one run: the work bound counts what all its patches made it read or copy of
    documents already held (``copy`` and ``move`` sources, replaced and removed values), which,
    unlike an operation's own value, costs the agent nothing to ask for.
    """

    __slots__ = (
        "_document",
        "_failures",
        "_held",
        "_size",
        "max_bytes",
        "max_depth",
        "max_operations",
        "max_work_bytes",
        "subject",
        "work",
    )

    def __init__(
        self,
        subject: str = "state",
        *,
        max_bytes: int = MAX_STATE_BYTES,
        max_operations: int = MAX_PATCH_OPERATIONS,
        max_work_bytes: int = MAX_STATE_WORK_BYTES,
        max_depth: int = MAX_JSON_DEPTH,
    ) -> None:
        self.subject = subject
        self.max_bytes = max_bytes
        self.max_operations = max_operations
        self.max_work_bytes = max_work_bytes
        self.max_depth = max_depth
        self.work = 0
        self._document: Any = _MISSING  # the document whose size is known
        self._size = 0
        self._held: Any = _MISSING  # a document past a bound: its patches are skipped
        self._failures = 0

    # --- the two events --------------------------------------------------------------------------

    def snapshot(self, current: Any, snapshot: Any, notes: list[str]) -> Any:
        """The document after a snapshot: an owned copy of it, or ``current`` when it is past a bound."""
        text = _dumps(snapshot)
        if len(text) > self.max_bytes:
            return self._hold(current, notes, self._too_large())
        if self._too_deep(text, 0):
            return self._hold(current, notes, self._too_deep_note())
        document = json.loads(text)  # an owned copy: later patches never change the event
        self._document, self._size = document, len(text)
        return document

    def patch(self, current: Any, operations: Any, notes: list[str]) -> Any:
        """The document after a JSON Patch; ``current`` (the last good one) when it cannot apply.

        With no document yet the patch applies to ``{}``.
        """
        if current is self._held:
            return current
        document = {} if current is None else current
        try:
            if document is not self._document:
                self._measure(document)
            ops = self._operations(operations)
            result, size = _Patch(self, document, self._size).apply(ops)
        except _Bound as bound:
            return self._hold(current, notes, str(bound))
        except _PatchError as failure:
            self._note_failure(notes, str(failure))
            return current
        self._document, self._size = result, size
        return result

    # --- bounds and notes ----------------------------------------------------------------------

    def charge(self, size: int) -> None:
        self.work += size
        if self.work > self.max_work_bytes:
            raise _Bound(
                f"The agent's {self.subject} updates took more work than one run allows; "
                f"showing the last {self.subject} within the limit."
            )

    def _measure(self, document: Any) -> None:
        text = _dumps(document)
        self.charge(len(text))
        if len(text) > self.max_bytes:
            raise _Bound(self._too_large())
        if self._too_deep(text, 0):
            raise _Bound(self._too_deep_note())
        self._document, self._size = document, len(text)

    def _too_deep(self, text: str, level: int) -> bool:
        allowed = self.max_depth - level
        return text.count("[") + text.count("{") > allowed and json_text_depth(text) > allowed

    def _too_large(self) -> str:
        return (
            f"The agent's {self.subject} grew past {size_label(self.max_bytes)}; "
            f"showing the last {self.subject} within the limit."
        )

    def _too_deep_note(self) -> str:
        return (
            f"The agent's {self.subject} would nest more than {self.max_depth} levels deep; "
            f"showing the last {self.subject} within the limit."
        )

    def _hold(self, current: Any, notes: list[str], note: str) -> Any:
        if current is not self._held:
            notes.append(note)
        self._held = current
        return current

    def _note_failure(self, notes: list[str], why: str) -> None:
        self._failures += 1
        if self._failures <= MAX_FAILURE_NOTES:
            notes.append(f"{why} Showing the last good {self.subject}.")
        elif self._failures == MAX_FAILURE_NOTES + 1:
            notes.append(f"Further {self.subject} updates that could not be applied were left out too.")

    def _operations(self, operations: Any) -> list[dict[str, Any]]:
        if not isinstance(operations, list | tuple):
            raise _PatchError(self._failure("the update is not a list of operations"))
        if len(operations) > self.max_operations:
            raise _Bound(
                f"The agent sent a {self.subject} update of more than {self.max_operations:,} "
                f"operations; showing the last {self.subject} within the limit."
            )
        return [op.model_dump(by_alias=True) if hasattr(op, "model_dump") else op for op in operations]

    def _failure(self, why: str) -> str:
        return f"The agent's {self.subject} update was left out: the JSON Patch could not be applied ({why})."


class _Patch:
    """One patch applied in place to ``document``, every change logged so it can be undone."""

    __slots__ = ("document", "keeper", "size", "undo")

    def __init__(self, keeper: StateKeeper, document: Any, size: int) -> None:
        self.keeper = keeper
        self.document = document
        self.size = size
        self.undo: list[tuple[Any, ...]] = []

    def apply(self, ops: list[dict[str, Any]]) -> tuple[Any, int]:
        original = self.document
        try:
            for number, op in enumerate(ops, 1):
                self._operation(number, op)
                if self.size > self.keeper.max_bytes:
                    raise _Bound(self.keeper._too_large())
        except BaseException:
            self._rollback(original)
            raise
        return self.document, self.size

    # --- operations ----------------------------------------------------------------------------

    def _operation(self, number: int, op: Any) -> None:
        if not (isinstance(op, dict) and isinstance(op.get("op"), str) and isinstance(op.get("path"), str)):
            raise self._error(number, None, "it is not a JSON Patch operation")
        name, path = op["op"], op["path"]
        parts = self._pointer(number, name, path)
        if name in ("add", "replace", "test"):
            if "value" not in op:
                raise self._error(number, op, "it has no value")
            if name == "test":
                if json_key(self._resolve(number, op, parts)) != json_key(op["value"]):
                    raise self._error(number, op, "the test did not match")
                return
            value, size = self._owned(op["value"], len(parts))
            (self._add if name == "add" else self._replace)(number, op, parts, value, size)
        elif name == "remove":
            if not parts:
                raise self._error(number, op, "the whole document cannot be removed")
            self._remove(number, op, parts)
        elif name in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise self._error(number, op, "it has no source ('from')")
            from_parts = self._pointer(number, name, source)
            if name == "copy":
                text = _dumps(self._resolve(number, op, from_parts))
                self.keeper.charge(len(text))
                value, size = self._owned_text(text, len(parts))
                self._add(number, op, parts, value, size)
            elif from_parts == parts:
                if parts:
                    self._container(number, op, parts)  # changes nothing, but its source must exist
            elif parts[: len(from_parts)] == from_parts:
                raise self._error(number, op, "a value cannot be moved into itself")
            else:
                self._move(number, op, from_parts, parts)
        else:
            raise self._error(number, op, f"{name[:20]!r} is not a JSON Patch operation")

    def _add(self, number: int, op: Any, parts: list[str], value: Any, size: int) -> None:
        if not parts:
            self.undo.append(("root", self.document, self.size))
            self.document, self.size = value, size
            return
        parent, key = self._resolve(number, op, parts[:-1]), parts[-1]
        if isinstance(parent, dict):
            if key in parent:
                self.size -= self._measured(parent[key])
                self.undo.append(("set", parent, key, parent[key]))
            else:
                self.size += _member(key, parent)
                self.undo.append(("del", parent, key))
            parent[key] = value
        elif isinstance(parent, list):
            index = len(parent) if key == "-" else self._index(number, op, key, len(parent) + 1)
            self.size += _item(parent)
            parent.insert(index, value)
            self.undo.append(("pop", parent, index))
        else:
            raise self._error(number, op, "that path does not exist")
        self.size += size

    def _replace(self, number: int, op: Any, parts: list[str], value: Any, size: int) -> None:
        if not parts:
            self._add(number, op, parts, value, size)
            return
        parent, key = self._container(number, op, parts)
        self.size += size - self._measured(parent[key])
        self.undo.append(("set", parent, key, parent[key]))
        parent[key] = value

    def _remove(self, number: int, op: Any, parts: list[str], *, measure: bool = True) -> Any:
        parent, key = self._container(number, op, parts)
        old = parent.pop(key)
        if isinstance(parent, dict):
            self.size -= _member(key, parent)
            self.undo.append(("set", parent, key, old))
        else:
            self.size -= _item(parent)
            self.undo.append(("insert", parent, key, old))
        if measure:
            self.size -= self._measured(old)
        return old

    def _move(self, number: int, op: Any, from_parts: list[str], parts: list[str]) -> None:
        # The moved value keeps its size: only its separators change. Read deeper, its depth counts.
        value = self._remove(number, op, from_parts, measure=False)
        size = 0
        if not parts or len(parts) > len(from_parts):
            text = _dumps(value)
            self.keeper.charge(len(text))
            if self.keeper._too_deep(text, len(parts)):
                raise _Bound(self.keeper._too_deep_note())
            size = len(text)
        # At the root the value is the whole document, so its size is the document's.
        self._add(number, op, parts, value, size if not parts else 0)

    # --- helpers -------------------------------------------------------------------------------

    def _owned(self, value: Any, level: int) -> tuple[Any, int]:
        """The operation's value as the document will hold it (a copy of a container), and its size."""
        if isinstance(value, _IMMUTABLE):
            return value, len(_dumps(value))
        return self._owned_text(_dumps(value), level)

    def _owned_text(self, text: str, level: int) -> tuple[Any, int]:
        if len(text) > self.keeper.max_bytes:
            raise _Bound(self.keeper._too_large())
        if self.keeper._too_deep(text, level):
            raise _Bound(self.keeper._too_deep_note())
        return json.loads(text), len(text)

    def _measured(self, value: Any) -> int:
        size = len(_dumps(value))
        self.keeper.charge(size)
        return size

    def _pointer(self, number: int, name: str, path: str) -> list[str]:
        if path == "":
            return []
        if not path.startswith("/") or _BAD_ESCAPE.search(path):
            raise self._error(number, {"op": name, "path": path}, "the path is not a JSON Pointer")
        parts = [pointer.unescape(part) for part in path[1:].split("/")]
        if len(parts) > self.keeper.max_depth:
            raise _Bound(self.keeper._too_deep_note())
        return parts

    def _resolve(self, number: int, op: Any, parts: list[str]) -> Any:
        node = self.document
        for part in parts:
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list):
                node = node[self._index(number, op, part, len(node))]
            else:
                raise self._error(number, op, "that path does not exist")
        return node

    def _container(self, number: int, op: Any, parts: list[str]) -> tuple[Any, Any]:
        """The parent of an existing location, and the key or index of it there."""
        parent, key = self._resolve(number, op, parts[:-1]), parts[-1]
        if isinstance(parent, dict) and key in parent:
            return parent, key
        if isinstance(parent, list):
            return parent, self._index(number, op, key, len(parent))
        raise self._error(number, op, "that path does not exist")

    def _index(self, number: int, op: Any, part: str, length: int) -> int:
        if not _ARRAY_INDEX.fullmatch(part) or int(part) >= length:
            raise self._error(number, op, "that path does not exist")
        return int(part)

    def _error(self, number: int, op: Any, why: str) -> _PatchError:
        if isinstance(op, dict) and isinstance(op.get("op"), str) and isinstance(op.get("path"), str):
            where = f"operation {number}, {op['op'][:20]} at {op['path'][:100]!r}: {why}"
        else:
            where = f"operation {number}: {why}"
        return _PatchError(self.keeper._failure(where))

    def _rollback(self, original: Any) -> None:
        for entry in reversed(self.undo):
            kind = entry[0]
            if kind == "set":
                entry[1][entry[2]] = entry[3]
            elif kind == "del":
                del entry[1][entry[2]]
            elif kind == "pop":
                entry[1].pop(entry[2])
            elif kind == "insert":
                entry[1].insert(entry[2], entry[3])
        self.document = original

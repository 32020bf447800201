"""The bounds on what an agent may send, in one place (docs/security.md lists each one).

Everything an agent sends is untrusted: declarations, schemas, state patches and streams. Each bound
here is a default; the clients and functions that apply one take it as a parameter, so the product
can set it from its settings.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import accumulate
from typing import Any

__all__ = [
    "DEFAULT_EVENT_IDLE_TIMEOUT",
    "DEFAULT_MAX_FRAME_BYTES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "DEFAULT_RUN_TIME_LIMIT",
    "MAX_JSON_DEPTH",
    "MAX_LINK_LENGTH",
    "MAX_PATCH_OPERATIONS",
    "MAX_SCHEMA_NODES",
    "MAX_SCHEMA_PATTERN_LENGTH",
    "MAX_STATE_BYTES",
    "MAX_STATE_WORK_BYTES",
    "MAX_VALUE_NODES",
    "SCHEMA_PATTERN_TIME_LIMIT",
    "SCHEMA_TIME_LIMIT",
    "duration_label",
    "exceeds_depth",
    "json_key",
    "json_text_depth",
    "safe_link",
    "size_label",
]

MiB = 1024 * 1024

# Nesting of any JSON document from an agent (a declaration, a policy, one event). Far above what
# real ones use, far below where Python's recursion (pydantic, json, deepcopy, templates) breaks.
MAX_JSON_DEPTH = 64

# Streams (per run): one SSE frame, all bytes of a run, the wait for the next whole event, the run.
DEFAULT_MAX_FRAME_BYTES = 4 * MiB
DEFAULT_MAX_TOTAL_BYTES = 32 * MiB
DEFAULT_EVENT_IDLE_TIMEOUT = 300.0
DEFAULT_RUN_TIME_LIMIT = 3600.0

# Shared state (STATE_SNAPSHOT / STATE_DELTA) and activity documents.
MAX_STATE_BYTES = 1 * MiB
MAX_PATCH_OPERATIONS = 1000
# What the patches of one run may make the fold read or copy of the document it already holds
# (`copy` and `move` sources, replaced and removed values): work that costs the agent no bytes.
MAX_STATE_WORK_BYTES = 64 * MiB

# Agent-supplied JSON Schemas (an interrupt's responseSchema, a policy tool's inputSchema) and the
# values checked against them.
MAX_SCHEMA_NODES = 10_000
MAX_SCHEMA_PATTERN_LENGTH = 1000
MAX_VALUE_NODES = 10_000
SCHEMA_TIME_LIMIT = 1.0
# One pattern on one string: a real pattern takes microseconds; the engine's own timeout overruns
# in proportion to what it is given, so each match gets a small slice, not all the time left.
SCHEMA_PATTERN_TIME_LIMIT = 0.1

MAX_LINK_LENGTH = 2048


def size_label(size: int) -> str:
    """32 MiB -> "32 MB", 64 KiB -> "64 KB", 100 -> "100 bytes"."""
    if size >= MiB:
        return f"{size / MiB:.3g} MB"
    if size >= 1024:
        return f"{size / 1024:.3g} KB"
    return f"{size} bytes"


def duration_label(seconds: float) -> str:
    """3600 -> "1 hour", 300 -> "5 minutes", 0.5 -> "0.5 seconds"."""
    for size, unit in ((3600, "hour"), (60, "minute")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds:g} second{'s' if seconds != 1 else ''}"


# A JSON string literal, or an unterminated one up to the end: every attempt that starts at a quote
# succeeds without backtracking, so a hostile text is read in one pass. Then anything not a bracket.
_STRING = re.compile(r'"(?:[^"\\]++|\\.?)*+(?:"|\Z)', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]++")
# Openers step +1, closers -1, as signed bytes, so the running depth is summed in C.
_STEPS = str.maketrans({"[": "\x01", "{": "\x01", "]": "\xff", "}": "\xff"})


def json_text_depth(text: str) -> int:
    """How deeply a JSON text nests, read from its brackets without parsing it (strings skipped).

    For invalid JSON the answer is approximate; parsing rejects such a text anyway.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    steps = memoryview(brackets.translate(_STEPS).encode("latin-1")).cast("b")
    return max(0, max(accumulate(steps)))


def exceeds_depth(value: Any, max_depth: int) -> bool:
    """Whether a decoded JSON value nests more than ``max_depth`` containers deep (no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        if depth > max_depth:
            return True
        for child in children:
            if isinstance(child, dict | list | tuple):
                push((child, depth + 1))
    return False


def json_key(value: Any) -> Any:
    """A hashable form, equal for values JSON calls equal: 1 and 1.0 alike, true and 1 not."""
    if value is True or value is False:
        return ("b", value)
    if isinstance(value, dict):
        return ("o", frozenset((key, json_key(item)) for key, item in value.items()))
    if isinstance(value, list | tuple):
        return ("a", tuple(json_key(item) for item in value))
    if isinstance(value, int | float):
        return ("n", value)
    return ("v", value)


def walk(value: Any) -> Iterator[tuple[Any, int]]:
    """Every node of a decoded JSON value with its depth (the root is 1), without recursion."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        if isinstance(node, dict):
            stack.extend((child, depth + 1) for child in node.values())
        elif isinstance(node, list | tuple):
            stack.extend((child, depth + 1) for child in node)


def safe_link(url: Any) -> str | None:
    """``url`` when it is an absolute http(s) link to show in a page, else None.

    Anything an agent names as a link (``identity.documentationUrl``, a grounding source) goes
    through here: ``javascript:``, ``data:`` and relative or malformed URLs are dropped.
    """
    if not isinstance(url, str):
        return None
    url = url.strip()
    if not url or len(url) > MAX_LINK_LENGTH or any(ch <= " " or ch == "\x7f" for ch in url):
        return None
    scheme, sep, rest = url.partition(":")
    if not sep or scheme.lower() not in {"http", "https"} or not rest.startswith("//"):
        return None
    host = rest[2:].split("/", 1)[0].split("?", 1)[0].split("#", 1)[0].rsplit("@", 1)[-1]
    if not host or host.startswith(":"):
        return None
    return url

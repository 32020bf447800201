"""Checking a value against an agent's JSON Schema, bounded in what it reaches, its size and its time.

The schemas come from agents (an interrupt's ``responseSchema``, a policy tool's ``inputSchema``), so
each is untrusted input like anything else an agent sends. jsonschema does the checking, with:

- references resolved only inside the schema itself: the registry refuses to retrieve anything, so
  no ``http://`` or ``file://`` reference is ever fetched or read, and references to the JSON Schema
  meta-schemas are refused too (their validators are not the bounded ones below);
- the schema and the value bounded in size and depth before any validator sees them;
- ``pattern`` and ``patternProperties`` matched by the ``regex`` engine with a timeout on each
  match, which also lets other threads run while it matches, never by ``re`` (which backtracks
  without end and holds the GIL while it does);
- every keyword checking a deadline, so a schema whose references multiply the work ends with
  "too complex" instead of running on;
- :func:`validate_against_async` running the check in a worker thread, off the event loop, within
  an overall time limit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import logging
import re
import time
from collections.abc import Callable, Iterable
from itertools import islice
from typing import Any

import jsonschema
import referencing
import referencing.exceptions
import regex
from jsonschema import _keywords, _legacy_keywords, _utils, validators
from jsonschema.exceptions import SchemaError, ValidationError

from .errors import validation_problem
from .limits import (
    MAX_JSON_DEPTH,
    MAX_SCHEMA_NODES,
    MAX_SCHEMA_PATTERN_LENGTH,
    MAX_VALUE_NODES,
    SCHEMA_PATTERN_TIME_LIMIT,
    SCHEMA_TIME_LIMIT,
    json_key,
    walk,
)

__all__ = ["TOO_COMPLEX", "validate_against", "validate_against_async"]

logger = logging.getLogger(__name__)

TOO_COMPLEX = "The agent's schema is too complex to check in time."
# At most this many problems are reported for one value: the first ones say what to fix.
MAX_MESSAGES = 5
_MAX_MESSAGE_LENGTH = 300
_REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
_META_SCHEMA_HOST = "json-schema.org"
# How long the async wrapper waits past the check's own deadline (a regex timeout can overrun it).
_GRACE = 1.0

_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("schema_deadline", default=None)


class _TooComplex(Exception):
    pass


class _InvalidPattern(Exception):
    pass


# --- the bounded engine, behind one seam ------------------------------------------------------------


class _BoundedRe:
    """``re`` as jsonschema's keyword modules see it: inside a bounded check, ``search`` runs on the
    ``regex`` engine with a timeout (a small slice of the time left); everywhere else it is ``re``.

    jsonschema matches ``pattern`` and ``patternProperties`` with ``re.search`` in three modules
    (the keywords, and the helpers for ``additionalProperties`` and ``unevaluatedProperties``), so
    the name is replaced there rather than each keyword rewritten.
    """

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)

    @staticmethod
    def search(pattern: str, string: str, flags: int = 0) -> Any:
        deadline = _DEADLINE.get()
        if deadline is None:
            return re.search(pattern, string, flags)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise _TooComplex
        timeout = min(remaining, SCHEMA_PATTERN_TIME_LIMIT)
        try:
            return regex.search(pattern, string, flags, timeout=timeout, concurrent=True)
        except TimeoutError as exc:
            raise _TooComplex from exc
        except regex.error as exc:
            raise _InvalidPattern(pattern) from exc


_BOUNDED_RE = _BoundedRe()
for _module in (_keywords, _legacy_keywords, _utils):
    _module.re = _BOUNDED_RE  # type: ignore[attr-defined]


def _refuse(uri: str) -> referencing.Resource:
    raise referencing.exceptions.NoSuchResource(ref=uri)


# Nothing is ever retrieved: a reference resolves inside the schema, or not at all.
_INSIDE_ONLY: referencing.Registry = referencing.Registry(retrieve=_refuse)  # type: ignore[call-arg]


def _with_deadline(keyword: Callable[..., Any]) -> Callable[..., Any]:
    def bounded(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        deadline = _DEADLINE.get()
        if deadline is not None and time.monotonic() > deadline:
            raise _TooComplex
        return keyword(validator, value, instance, schema)

    return bounded


def _unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterable[ValidationError]:
    # jsonschema compares unhashable items pairwise; this is one pass over the items.
    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = json_key(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


_BOUNDED_CLASSES: dict[type, type] = {}


def _bounded_class(cls: type) -> Any:
    bounded = _BOUNDED_CLASSES.get(cls)
    if bounded is None:
        keywords = {name: _with_deadline(fn) for name, fn in cls.VALIDATORS.items()}  # type: ignore[attr-defined]
        keywords["uniqueItems"] = _with_deadline(_unique_items)
        bounded = _BOUNDED_CLASSES[cls] = validators.extend(cls, keywords)
    return bounded


# --- before any validator: size, depth, and what the schema names -----------------------------------


def _short(text: str, length: int = _MAX_MESSAGE_LENGTH) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


def _schema_refusal(schema: Any) -> str | None:
    """Why this schema is not checked at all, or None."""
    if not isinstance(schema, dict | bool):
        return "The agent's schema is not a JSON Schema (it is not an object)."
    for count, (node, depth) in enumerate(walk(schema), 1):
        if count > MAX_SCHEMA_NODES:
            return f"The agent's schema is too large to check (more than {MAX_SCHEMA_NODES:,} parts)."
        if depth > MAX_JSON_DEPTH:
            return f"The agent's schema is nested more than {MAX_JSON_DEPTH} levels deep, too deep to check."
        if not isinstance(node, dict):
            continue
        for key, value in node.items():
            if isinstance(value, str):
                names_meta_schema = _META_SCHEMA_HOST in value
                if key in _REFERENCE_KEYWORDS and names_meta_schema:
                    return (
                        "The agent's schema refers to a JSON Schema meta-schema; only references "
                        "inside the schema are followed, so the answer cannot be checked."
                    )
                if names_meta_schema and (key in ("$id", "id") or (key == "$schema" and node is not schema)):
                    return (
                        "The agent's schema names a JSON Schema meta-schema inside itself, "
                        "so the answer cannot be checked."
                    )
                if key == "pattern" and len(value) > MAX_SCHEMA_PATTERN_LENGTH:
                    return _pattern_too_long()
            elif key == "patternProperties" and isinstance(value, dict):
                if any(len(pattern) > MAX_SCHEMA_PATTERN_LENGTH for pattern in value):
                    return _pattern_too_long()
    return None


def _pattern_too_long() -> str:
    return (
        f"The agent's schema has a pattern longer than {MAX_SCHEMA_PATTERN_LENGTH:,} characters, "
        "too long to check."
    )


def _value_refusal(value: Any) -> str | None:
    for count, (_, depth) in enumerate(walk(value), 1):
        if count > MAX_VALUE_NODES:
            return f"The answer is too large to check (more than {MAX_VALUE_NODES:,} values)."
        if depth > MAX_JSON_DEPTH:
            return f"The answer is nested more than {MAX_JSON_DEPTH} levels deep, too deep to check."
    return None


# --- the check -------------------------------------------------------------------------------------


def validate_against(value: Any, schema: Any, *, time_limit: float = SCHEMA_TIME_LIMIT) -> list[str]:
    """What is wrong with ``value`` for the agent's ``schema``, as sentences for a person; [] if nothing.

    A schema that cannot be checked (too large or deep, a reference outside itself, an invalid or
    over-long pattern, more work than ``time_limit`` allows) is reported the same way, as one
    sentence: the product never pretends it checked. The messages quote the value and the schema,
    never anything read from elsewhere. Blocking: from async code use :func:`validate_against_async`.
    """
    refusal = _schema_refusal(schema) or _value_refusal(value)
    if refusal is not None:
        return [refusal]
    token = _DEADLINE.set(time.monotonic() + time_limit)
    try:
        return _check(value, schema)
    except (_TooComplex, RecursionError):
        return [TOO_COMPLEX]
    except _InvalidPattern as exc:
        pattern = _short(str(exc), 100)
        return [f"The agent's schema has a pattern that is not a valid regular expression: {pattern}"]
    except referencing.exceptions.Unresolvable as exc:
        return [_unresolvable(exc)]
    except Exception:
        logger.warning("an agent's JSON Schema could not be applied", exc_info=True)
        return ["The agent's schema could not be applied to the answer."]
    finally:
        _DEADLINE.reset(token)


def _check(value: Any, schema: dict[str, Any] | bool) -> list[str]:
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    if isinstance(schema, dict) and "$schema" in schema:
        # Chosen once, here: left in, a reference back to the root would pick the stock class again.
        schema = {key: item for key, item in schema.items() if key != "$schema"}
    try:
        cls.check_schema(schema)
    except SchemaError as exc:
        return [f"The agent's schema is not a valid JSON Schema: {_short(exc.message)}"]
    validator = _bounded_class(cls)(schema, registry=_INSIDE_ONLY)
    return [_message(error) for error in islice(validator.iter_errors(value), MAX_MESSAGES)]


def _message(error: ValidationError) -> str:
    return _short(validation_problem(error.absolute_path, error.message, separator="/"))


def _unresolvable(exc: referencing.exceptions.Unresolvable) -> str:
    cause = exc.__cause__ if isinstance(exc.__cause__, referencing.exceptions.Unresolvable) else exc
    ref = _short(str(getattr(cause, "ref", "")), 100)
    if isinstance(cause, referencing.exceptions.PointerToNowhere):
        return f"The agent's schema refers to {'#' + ref!r}, which it does not contain."
    return (
        f"The agent's schema refers to {ref!r}, outside itself; such references are never fetched, "
        "so the answer cannot be checked."
    )


# One or two checks at a time: a flood of hostile schemas waits its turn instead of taking every core.
_WORKERS = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="agent-schema")


async def validate_against_async(
    value: Any, schema: Any, *, time_limit: float = SCHEMA_TIME_LIMIT
) -> list[str]:
    """:func:`validate_against` in a worker thread: the event loop goes on serving while it runs,
    and an answer comes within ``time_limit`` (plus a little), "too complex" when the check ran out."""
    loop = asyncio.get_running_loop()
    check = functools.partial(validate_against, value, schema, time_limit=time_limit)
    try:
        return await asyncio.wait_for(loop.run_in_executor(_WORKERS, check), time_limit + _GRACE)
    except TimeoutError:
        return [TOO_COMPLEX]

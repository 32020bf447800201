"""Dynamic values of A2UI components: data bindings, the catalogue's functions, formatting."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import datetime
from typing import Any

import regex

from .. import pointer
from .catalog import (
    CATALOGS_1,
    EMAIL,
    FUNCTIONS,
    INTERPOLATION,
    MAX_CALL_DEPTH,
    MAX_CHILDREN,
    MAX_PATTERN,
    MAX_TEXT,
    MISSING,
    PATTERN_TIMEOUT,
    VERSION,
    VERSION_1,
    note,
)
from .surfaces import absolute

# --- Binding and functions -------------------------------------------------------------------------


class Values:
    """Resolves dynamic values against a data model, in a scope, with the catalogue's functions.

    v0.9 binds with `{"path"}` and calls with `{"call"}`; v1.0 with `{"@path"}` and `{"@call"}`,
    so that an object without them is a literal (a v1.0 object with a `path` key is only data)."""

    def __init__(self, data: Any, notes: list[str], version: str = VERSION, catalog_id: str = "") -> None:
        self.data = data
        self.notes = notes
        self.version = version
        self.catalog_id = catalog_id  # a v1.0 surface's default catalogue for function calls
        self.path_key, self.call_key = ("@path", "@call") if version == VERSION_1 else ("path", "call")

    def binding(self, raw: Any) -> str | None:
        """The path a data binding names, or None when `raw` is not one."""
        if isinstance(raw, Mapping) and isinstance(raw.get(self.path_key), str):
            return raw[self.path_key]
        return None

    def call_name(self, raw: Any) -> str | None:
        """The function a call names, or None when `raw` is not one."""
        if isinstance(raw, Mapping) and isinstance(raw.get(self.call_key), str):
            return raw[self.call_key]
        return None

    def value(self, raw: Any, scope: str = "/", depth: int = 0) -> Any:
        if isinstance(raw, Mapping):
            path = self.binding(raw)
            if path is not None:
                found = pointer.get(self.data, pointer.tokens(absolute(path, scope)))
                return None if found is MISSING else found
            if self.call_name(raw) is not None:
                return self.call(raw, scope, depth + 1)
        return raw

    def text(self, raw: Any, scope: str = "/") -> str:
        return stringify(self.value(raw, scope))[:MAX_TEXT]

    def number(self, raw: Any, scope: str = "/", default: float | None = None) -> float | None:
        value = self.value(raw, scope)
        if isinstance(value, bool):
            return default
        if isinstance(value, int | float) and math.isfinite(value):
            return value
        if isinstance(value, str):
            try:
                number = float(value)
            except ValueError:
                return default
            return number if math.isfinite(number) else default
        return default

    def flag(self, raw: Any, scope: str = "/") -> bool:
        value = self.value(raw, scope)
        return value is True or (isinstance(value, str) and value.lower() == "true")

    def call(self, raw: Mapping[str, Any], scope: str, depth: int) -> Any:
        if depth > MAX_CALL_DEPTH:
            note(self.notes, f"Functions nested more than {MAX_CALL_DEPTH} deep were not evaluated.")
            return None
        name = raw[self.call_key]
        args = raw.get("args") if isinstance(raw.get("args"), Mapping) else {}
        if self.version == VERSION_1 and name == "@index":
            # v1.0's system function: the item's 0-based index in a list template, plus an offset.
            last = scope.rstrip("/").rsplit("/", 1)[-1]
            offset = self.number(args.get("offset"), scope, 0)
            return int(last) + int(offset or 0) if last.isdigit() else None
        if self.version == VERSION_1:
            catalog = raw.get("catalogId") or self.catalog_id
            if catalog not in CATALOGS_1:
                note(
                    self.notes,
                    f"The function {name[:40]!r} is from a catalogue this page does not know: left out.",
                )
                return None
            if FUNCTIONS.get(name, ("", False))[1]:
                # requiresUserActivation: only a person's click runs it (a Button's action), never drawing.
                note(
                    self.notes, f"The function {name[:40]!r} runs only when a person clicks: it was not run."
                )
                return None

        def arg(key: str) -> Any:
            return self.value(args.get(key), scope, depth)

        if name == "required":
            value = arg("value")
            return value not in (None, "", [], {})
        if name == "regex":
            return matches(arg("pattern"), stringify(arg("value")), self.notes)
        if name == "length":
            size = len(stringify(arg("value")))
            low, high = arg("min"), arg("max")
            return (not isinstance(low, int) or size >= low) and (not isinstance(high, int) or size <= high)
        if name == "numeric":
            number = self.number(args.get("value"), scope)
            if number is None:
                return False
            low, high = arg("min"), arg("max")
            return (not is_number(low) or number >= low) and (not is_number(high) or number <= high)
        if name == "email":
            return bool(EMAIL.fullmatch(stringify(arg("value"))[:320]))
        if name in ("and", "or"):
            values = args.get("values") if isinstance(args.get("values"), list) else []
            results = [self.value(v, scope, depth) is True for v in values[:MAX_CHILDREN]]
            return all(results) if name == "and" else any(results)
        if name == "not":
            return arg("value") is not True
        if name == "formatString":
            return self.format_string(
                stringify(args.get("value"))
                if not isinstance(args.get("value"), Mapping)
                else self.text(args.get("value"), scope),
                scope,
            )
        if name == "formatNumber":
            return _format_number(
                self.number(args.get("value"), scope), arg("decimals"), arg("grouping") is not False
            )
        if name == "formatCurrency":
            number = self.number(args.get("value"), scope)
            code = stringify(arg("currency"))[:3].upper()
            decimals = arg("decimals")
            amount = _format_number(number, 2 if decimals is None else decimals, True)
            return f"{_CURRENCIES.get(code, code + ' ')}{amount}"
        if name == "formatDate":
            return _format_date(arg("value"), stringify(arg("format")))
        if name == "pluralize":
            count = self.number(args.get("value"), scope, 0)
            key = "zero" if count == 0 and "zero" in args else "one" if count == 1 else "other"
            return self.text(args.get(key, args.get("other")), scope)
        note(self.notes, f"The function {name[:40]!r} is not part of the Basic Catalog: left out.")
        return None

    def format_string(self, template: str, scope: str) -> str:
        def one(match: re.Match[str]) -> str:
            inner = match.group(1).strip()
            if "(" in inner:
                return ""  # functions inside a template string are not evaluated
            found = pointer.get(self.data, pointer.tokens(absolute(inner, scope)))
            return stringify(None if found is MISSING else found)

        return INTERPOLATION.sub(one, template[:MAX_TEXT]).replace("\\${", "${")


_CURRENCIES = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "INR ", "CHF": "CHF "}


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def stringify(value: Any) -> str:
    """A2UI's type conversion: numbers and booleans as written, null as "", objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
    try:
        return json.dumps(value, ensure_ascii=False)[:MAX_TEXT]
    except (TypeError, ValueError):
        return ""


def _format_number(number: float | None, decimals: Any, grouping: bool) -> str:
    if number is None:
        return ""
    places = (
        int(decimals)
        if is_number(decimals) and 0 <= decimals <= 10
        else (0 if float(number).is_integer() else 2)
    )
    return f"{number:{',' if grouping else ''}.{places}f}"


_DATE_TOKENS = re.compile(r"yyyy|yy|MMMM|MMM|MM|M|dd|d|EEEE|E+|HH|H|hh|h|mm|ss|a|'[^']*'")


def _format_date(value: Any, pattern: str) -> str:
    if not isinstance(value, str):
        return stringify(value)
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return value[:MAX_TEXT]
    if not pattern:
        return moment.isoformat()
    table = {
        "yyyy": "%Y", "yy": "%y", "MMMM": "%B", "MMM": "%b", "MM": "%m", "dd": "%d", "EEEE": "%A",
        "HH": "%H", "hh": "%I", "mm": "%M", "ss": "%S", "a": "%p",
    }  # fmt: skip

    def one(match: re.Match[str]) -> str:
        token = match.group(0)
        if token.startswith("'"):
            return token[1:-1]
        if token == "M":
            return str(moment.month)
        if token == "d":
            return str(moment.day)
        if token == "H":
            return str(moment.hour)
        if token == "h":
            return str(moment.hour % 12 or 12)
        if token.startswith("E") and token != "EEEE":
            return moment.strftime("%a")
        return moment.strftime(table[token])

    return _DATE_TOKENS.sub(one, pattern[:100])


def matches(pattern: Any, text: str, notes: list[str]) -> bool:
    """An agent's pattern against a person's text, bounded in length and time (never backtracks
    without end)."""
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        note(notes, "A validation pattern was too long or not text: it was not checked.")
        return True
    try:
        return regex.search(pattern, text[:MAX_TEXT], timeout=PATTERN_TIMEOUT) is not None
    except (regex.error, TimeoutError):
        note(notes, "A validation pattern could not be checked in time: it was not checked.")
        return True

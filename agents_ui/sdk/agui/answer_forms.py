"""Answer forms for tool calls the client did not offer, drawn from the call's own arguments.

A call of an unknown tool is answered with the person's edited version of its arguments: arrays of
items with a status or a boolean become checklists, strings text inputs, the rest a read-only view;
the answer has the same shape. A confirmation whose framework convention is known gets Approve and
Reject, sending exactly what that framework reads (docs/PROTOCOLS.md, "Confirmations asked as a tool
call"). Everything is bounded: fields, items, depth, string length.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AnswerForm", "ShapeField", "answer_form", "read_shaped"]

MAX_FIELDS = 30
MAX_ITEMS = 50
MAX_DEPTH = 4
MAX_TEXT = 2000
MAX_VIEW = 4000

# Confirmations by convention: (framework, how the tool is named, approve, reject).
_CONFIRMS = (
    (
        "Agno",
        re.compile(r"^(confirm|confirmation|request_confirmation|get_user_confirmation)$"),
        {"accepted": True},
        {"accepted": False},
    ),
)
_ON, _OFF = "enabled", "disabled"


@dataclass(frozen=True)
class ShapeField:
    """One input of a form drawn from arguments: where its value sits, and how it is drawn."""

    path: tuple[str | int, ...]
    label: str
    kind: str  # "checklist" | "text" | "textarea" | "view"
    value: str = ""
    # A checklist's items: (label, checked); ``flag`` is the key each item's state is kept in.
    items: tuple[tuple[str, bool], ...] = ()
    flag: str = ""

    @property
    def name(self) -> str:
        return "shape:" + json.dumps(list(self.path))


@dataclass(frozen=True)
class AnswerForm:
    """How to answer an unknown tool's call: a confirmation by convention, or a shaped form."""

    kind: str  # "confirm" | "shape"
    framework: str = ""
    approve: Any = None
    reject: Any = None
    fields: list[ShapeField] = field(default_factory=list)
    args: Any = None

    @property
    def question(self) -> str:
        """What a confirmation asks, where its arguments say it in a known field ("" otherwise)."""
        if isinstance(self.args, dict):
            for key in ("question", "message", "summary", "prompt", "description"):
                if isinstance(self.args.get(key), str):
                    return self.args[key][:MAX_TEXT]
        return ""


def _label(key: str | int) -> str:
    return str(key).replace("_", " ").capitalize()[:200] if isinstance(key, str) else f"Item {key + 1}"


def _flag(item: Any) -> str:
    """The key an item keeps its state in: "status" (enabled/disabled) or its one boolean."""
    if not isinstance(item, dict):
        return ""
    if item.get("status") in (_ON, _OFF):
        return "status"
    flags = [k for k, v in item.items() if isinstance(v, bool)]
    return flags[0] if len(flags) == 1 else ""


def _item_label(item: dict[str, Any], flag: str) -> str:
    for key in ("description", "label", "title", "name", "text"):
        if isinstance(item.get(key), str):
            return item[key][:MAX_TEXT]
    rest = {k: v for k, v in item.items() if k != flag}
    return json.dumps(rest, ensure_ascii=False)[:MAX_TEXT]


def _checked(item: dict[str, Any], flag: str) -> bool:
    return item[flag] is True or item[flag] == _ON


def _view(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_VIEW else text[:MAX_VIEW] + "\n…"


def _add(found: list[ShapeField], value: Any, path: tuple[str | int, ...], depth: int) -> None:
    if len(found) >= MAX_FIELDS:
        return
    label = _label(path[-1]) if path else "Answer"
    if isinstance(value, str) and len(value) <= MAX_TEXT:
        kind = "textarea" if len(value) > 80 or "\n" in value else "text"
        found.append(ShapeField(path, label, kind, value=value))
    elif isinstance(value, list) and value and len(value) <= MAX_ITEMS:
        flags = {_flag(item) for item in value}
        if len(flags) == 1 and "" not in flags:
            flag = flags.pop()
            items = tuple((_item_label(i, flag), _checked(i, flag)) for i in value)
            found.append(ShapeField(path, label, "checklist", items=items, flag=flag))
        else:
            found.append(ShapeField(path, label, "view", value=_view(value)))
    elif isinstance(value, dict) and depth < MAX_DEPTH:
        for key, child in list(value.items())[:MAX_FIELDS]:
            _add(found, child, (*path, str(key)[:200]), depth + 1)
    else:
        found.append(ShapeField(path, label, "view", value=_view(value)))


def answer_form(name: str, args: Any) -> AnswerForm | None:
    """The form answering a call of a tool the client did not offer (None: the free-text box)."""
    for framework, named, approve, reject in _CONFIRMS:
        if named.match(name or ""):
            return AnswerForm("confirm", framework=framework, approve=approve, reject=reject, args=args)
    if not isinstance(args, dict) or not args:
        return None
    found: list[ShapeField] = []
    _add(found, args, (), 0)
    if not any(f.kind != "view" for f in found):
        return None
    return AnswerForm("shape", fields=found, args=args)


def read_shaped(form: AnswerForm, data: Mapping[str, str], getlist: Any = None) -> tuple[Any, str]:
    """The answer a submitted form gives: the approve or reject value of a confirmation, or the
    arguments as the person edited them; and why it cannot be sent ("" when it can)."""
    if form.kind == "confirm":
        choice = data.get("confirmed")
        if choice not in ("true", "false"):
            return None, "Approve or reject."
        return copy.deepcopy(form.approve if choice == "true" else form.reject), ""
    answer = copy.deepcopy(form.args)
    for item in form.fields:
        target = answer
        for key in item.path[:-1]:
            target = target[key]
        if item.kind in ("text", "textarea"):
            text = data.get(item.name)
            if text is None:
                continue
            if len(text) > MAX_TEXT:
                return None, f"{item.label}: too long."
            target[item.path[-1]] = text
        elif item.kind == "checklist":
            picked = set(getlist(item.name) if getlist else [])
            for index, entry in enumerate(target[item.path[-1]]):
                on = str(index) in picked
                entry[item.flag] = (_ON if on else _OFF) if item.flag == "status" else on
    return answer, ""

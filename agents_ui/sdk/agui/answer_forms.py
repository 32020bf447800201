"""Answer forms for tool calls the client did not offer, drawn from the call's own arguments.

A call of an unknown tool is answered with the person's edited version of its arguments: arrays of
items with a status or a boolean become checklists, strings text inputs, values from a closed set
choices, the rest a read-only view; the answer has the same shape. A closed set is read from the
tool's JSON Schema where the agent declared one (``enum``, ``oneOf``/``anyOf`` of ``const``), or
from a status vocabulary a framework fixes (LangChain's todos). A framework's own way of asking
through a tool call, where it can be recognised, gets its own form sending exactly what that
framework reads (docs/PROTOCOLS.md, "Confirmations asked as a tool call"). Everything is bounded:
fields, items, options, depth, string length.
"""

from __future__ import annotations

import copy
import json
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents_ui.sdk import pointer
from agents_ui.sdk.agui.client_tools import bounded_schema

__all__ = ["AGNO_CONFIRMATION", "AnswerForm", "ShapeField", "answer_form", "read_shaped"]

MAX_FIELDS = 30
MAX_ITEMS = 50
MAX_DEPTH = 4
MAX_TEXT = 2000
MAX_VIEW = 4000
MAX_OPTIONS = 20
# Radio buttons up to this many options, a select beyond.
MAX_RADIOS = 5
MAX_NOTE = 2000

# What Agno's AG-UI interface says, as the text of the message holding the calls, when a run pauses
# for calls of its `requires_confirmation` tools (agno/utils/response.py, get_paused_content). The
# call itself carries the tool's own name and arguments; nothing else in the stream marks it.
AGNO_CONFIRMATION = "I have tools to execute, but I need confirmation."
_ON, _OFF = "enabled", "disabled"
# Status vocabularies fixed by a framework, so a status from one of them is a closed set without a
# schema: LangChain's todo list (langchain/agents/middleware/todo.py, `write_todos`).
_STATUSES = (("pending", "in_progress", "completed"),)
_SCALARS = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class ShapeField:
    """One input of a form drawn from arguments: where its value sits, and how it is drawn."""

    path: tuple[str | int, ...]
    label: str
    # "checklist" | "text" | "textarea" | "view" | "choice" | "multichoice" | "choicelist"
    kind: str
    value: str = ""
    # A checklist's items: (label, checked); ``flag`` is the key each item's state is kept in.
    items: tuple[tuple[str, bool], ...] = ()
    flag: str = ""
    # A choice's options, (JSON of the value, label), and the JSON of those chosen now.
    options: tuple[tuple[str, str], ...] = ()
    # What the agent says of each option, in the same order ("" for none).
    notes: tuple[str, ...] = ()
    chosen: tuple[str, ...] = ()
    # A choicelist: one choice per item of the array, each with its own path.
    rows: tuple[ShapeField, ...] = ()
    # Where the options come from: "schema" (declared) or "convention" (a framework's vocabulary).
    source: str = ""

    @property
    def name(self) -> str:
        return "shape:" + json.dumps(list(self.path))

    @property
    def slug(self) -> str:
        """A short id for the field's inputs, unique within a card."""
        return f"s{zlib.crc32(self.name.encode()):08x}"

    @property
    def listed(self) -> list[tuple[str, str, str]]:
        """The options as the template lists them: (JSON of the value, label, note)."""
        notes = self.notes or ("",) * len(self.options)
        return [(value, label, note) for (value, label), note in zip(self.options, notes, strict=True)]

    @property
    def radios(self) -> bool:
        return len(self.options) <= MAX_RADIOS

    @property
    def required(self) -> bool:
        """A single choice must be made when its value is not one of the options (nothing to keep)."""
        return self.kind == "choice" and not self.chosen


@dataclass(frozen=True)
class AnswerForm:
    """How to answer an unknown tool's call: a confirmation by convention, Agno's questions with
    options (``feedback``), or a form shaped like the arguments."""

    kind: str  # "confirm" | "feedback" | "shape"
    framework: str = ""
    approve: Any = None
    reject: Any = None
    fields: list[ShapeField] = field(default_factory=list)
    args: Any = None
    # The key a rejection's reason goes in ("" when the framework reads none).
    note_key: str = ""

    @property
    def question(self) -> str:
        """What a confirmation asks: its arguments' words in a known field, or a general question."""
        if isinstance(self.args, dict):
            for key in ("question", "message", "summary", "prompt", "description"):
                if isinstance(self.args.get(key), str):
                    return self.args[key][:MAX_TEXT]
        return "The agent asks you to approve this call."


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
    for key in ("description", "label", "title", "name", "content", "text"):
        if isinstance(item.get(key), str):
            return item[key][:MAX_TEXT]
    rest = {k: v for k, v in item.items() if k != flag}
    return json.dumps(rest, ensure_ascii=False)[:MAX_TEXT]


def _checked(item: dict[str, Any], flag: str) -> bool:
    return item[flag] is True or item[flag] == _ON


def _view(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_VIEW else text[:MAX_VIEW] + "\n…"


# --- Reading the schema -----------------------------------------------------------------------------


class _Schema:
    """The declared schema of a tool's input, read along the arguments: local ``$ref``s resolved."""

    def __init__(self, root: Any) -> None:
        self.root = root if isinstance(root, dict) and not bounded_schema(root) else None

    def at(self, spec: Any) -> dict[str, Any] | None:
        """``spec`` with its local ``$ref`` (and a lone ``allOf``, as pydantic writes them) followed."""
        for _ in range(8):
            if not isinstance(spec, dict):
                return None
            ref = spec.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                spec = pointer.resolve(self.root, ref[1:])
                continue
            both = spec.get("allOf")
            if isinstance(both, list) and len(both) == 1:
                spec = {**{k: v for k, v in spec.items() if k != "allOf"}, **(both[0] or {})}
                continue
            return spec
        return None

    def child(self, spec: dict[str, Any] | None, key: str | int) -> dict[str, Any] | None:
        """The schema of one property (a key) or one item (an index) of what ``spec`` describes."""
        if spec is None:
            return None
        if isinstance(key, int):
            prefix = spec.get("prefixItems")
            if isinstance(prefix, list):
                return self.at(prefix[key]) if key < len(prefix) else None
            return self.at(spec.get("items"))
        properties = spec.get("properties")
        if isinstance(properties, dict) and key in properties:
            return self.at(properties[key])
        extra = spec.get("additionalProperties")
        return self.at(extra) if isinstance(extra, dict) else None

    def choices(self, spec: dict[str, Any] | None) -> tuple[tuple[Any, str], ...]:
        """The closed set ``spec`` allows, (value, label): its ``enum``, or the ``const`` of every
        branch of its ``oneOf``/``anyOf`` (a ``{"type": "null"}`` branch allows null); () when it
        allows more, or only one value."""
        if spec is None:
            return ()
        found: list[tuple[Any, str]] = []
        if isinstance(spec.get("enum"), list):
            found = [(value, _option_label(value)) for value in spec["enum"]]
        else:
            branches = spec.get("oneOf") if isinstance(spec.get("oneOf"), list) else spec.get("anyOf")
            if not isinstance(branches, list) or not branches:
                return ()
            for raw in branches:
                branch = self.at(raw)
                if branch is None:
                    return ()
                if "const" in branch:
                    title = branch.get("title")
                    named = isinstance(title, str) and title
                    found.append((branch["const"], title[:200] if named else _option_label(branch["const"])))
                elif branch.get("type") == "null" and len(branch) == 1:
                    found.append((None, "—"))
                elif isinstance(branch.get("enum"), list):
                    found += [(value, _option_label(value)) for value in branch["enum"]]
                else:
                    return ()
        if not all(isinstance(value, _SCALARS) for value, _ in found):
            return ()
        unique = {json.dumps(value): (value, label) for value, label in found}
        if len(unique) < 2 or len(unique) > MAX_OPTIONS:
            return ()
        return tuple(unique.values())


def _option_label(value: Any) -> str:
    return value[:200] if isinstance(value, str) else "—" if value is None else json.dumps(value)


def _choice(path: tuple[str | int, ...], label: str, value: Any, options: Any, source: str) -> ShapeField:
    drawn = tuple((json.dumps(v), text) for v, text in options)
    now = json.dumps(value)
    chosen = (now,) if any(now == v for v, _ in drawn) else ()
    return ShapeField(path, label, "choice", options=drawn, chosen=chosen, source=source)


def _convention(items: list[Any], key: str) -> tuple[tuple[Any, str], ...]:
    """The status vocabulary every item's ``key`` is from, when one is (no schema needed)."""
    if key != "status":
        return ()
    for vocabulary in _STATUSES:
        if all(isinstance(i, dict) and i.get(key) in vocabulary for i in items):
            return tuple((v, v.replace("_", " ")) for v in vocabulary)
    return ()


def _choicelist(
    items: list[Any], path: tuple[str | int, ...], label: str, spec: dict[str, Any] | None, schema: _Schema
) -> ShapeField | None:
    """An array of objects whose items each hold a value from one closed set: a choice per item."""
    if not all(isinstance(item, dict) for item in items):
        return None
    keys = [k for k in items[0] if all(k in item and isinstance(item[k], _SCALARS) for item in items)]
    keys.sort(key=lambda k: k != "status")
    for key in keys:
        options = [schema.choices(schema.child(schema.child(spec, i), key)) for i in range(len(items))]
        source = "schema"
        if not all(options):
            options, source = [_convention(items, key)] * len(items), "convention"
        if not all(options):
            continue
        rows = tuple(
            _choice((*path, i, key), _item_label(item, key), item[key], options[i], source)
            for i, item in enumerate(items)
        )
        return ShapeField(path, label, "choicelist", rows=rows, flag=key, source=source)
    return None


# --- Drawing the form -------------------------------------------------------------------------------


def _add(
    found: list[ShapeField],
    value: Any,
    path: tuple[str | int, ...],
    depth: int,
    spec: dict[str, Any] | None,
    schema: _Schema,
) -> None:
    if len(found) >= MAX_FIELDS:
        return
    label = _label(path[-1]) if path else "Answer"
    if isinstance(spec, dict) and isinstance(spec.get("title"), str) and spec["title"]:
        label = spec["title"][:200]
    options = schema.choices(spec) if isinstance(value, _SCALARS) else ()
    if options:
        found.append(_choice(path, label, value, options, "schema"))
    elif isinstance(value, str) and len(value) <= MAX_TEXT:
        kind = "textarea" if len(value) > 80 or "\n" in value else "text"
        found.append(ShapeField(path, label, kind, value=value))
    elif isinstance(value, list) and value and len(value) <= MAX_ITEMS:
        found.append(_array(value, path, label, spec, schema))
    elif isinstance(value, dict) and depth < MAX_DEPTH:
        for key, child in list(value.items())[:MAX_FIELDS]:
            key = str(key)[:200]
            _add(found, child, (*path, key), depth + 1, schema.child(spec, key), schema)
    else:
        found.append(ShapeField(path, label, "view", value=_view(value)))


def _array(
    value: list[Any], path: tuple[str | int, ...], label: str, spec: dict[str, Any] | None, schema: _Schema
) -> ShapeField:
    flags = {_flag(item) for item in value}
    if len(flags) == 1 and "" not in flags:
        flag = flags.pop()
        items = tuple((_item_label(i, flag), _checked(i, flag)) for i in value)
        return ShapeField(path, label, "checklist", items=items, flag=flag)
    # An array of values from one closed set: as many choices as the person likes.
    options = schema.choices(schema.child(spec, 0)) if spec is not None and "items" in spec else ()
    if options and all(isinstance(v, _SCALARS) for v in value):
        drawn = tuple((json.dumps(v), text) for v, text in options)
        now = {json.dumps(v) for v in value}
        chosen = tuple(v for v, _ in drawn if v in now)
        return ShapeField(path, label, "multichoice", options=drawn, chosen=chosen, source="schema")
    return _choicelist(value, path, label, spec, schema) or ShapeField(
        path, label, "view", value=_view(value)
    )


def _agno_questions(args: Any) -> list[ShapeField] | None:
    """Agno's ``ask_user`` (UserFeedbackTools): ``{questions: [{question, header?, options: [{label,
    description?}], multi_select?}]}``, one choice per question (None when the arguments differ)."""
    questions = args.get("questions") if isinstance(args, dict) else None
    if not isinstance(questions, list) or not questions or len(questions) > MAX_FIELDS:
        return None
    found = []
    for index, asked in enumerate(questions):
        if not isinstance(asked, dict) or not isinstance(asked.get("question"), str):
            return None
        options = asked.get("options")
        if not isinstance(options, list) or not 0 < len(options) <= MAX_OPTIONS:
            return None
        labels = [o.get("label") if isinstance(o, dict) else None for o in options]
        if not all(isinstance(text, str) for text in labels) or len(set(labels)) != len(labels):
            return None
        drawn = tuple((json.dumps(text), text[:200]) for text in labels)
        notes = tuple(str(o.get("description") or "")[:MAX_TEXT] for o in options)
        kind = "multichoice" if asked.get("multi_select") is True else "choice"
        label = asked["question"][:MAX_TEXT]
        found.append(ShapeField((index,), label, kind, options=drawn, notes=notes, source="convention"))
    return found


def answer_form(name: str, args: Any, *, schema: Any = None, said: str = "") -> AnswerForm | None:
    """The form answering a call of a tool the client did not offer (None: the free-text box).

    ``schema`` is the tool's input schema where the agent declared the tool; ``said`` the text of
    the agent's message that holds the call."""
    if said.strip() == AGNO_CONFIRMATION:
        # agno/os/interfaces/agui/resume.py: `accepted` exactly true confirms, anything else
        # rejects, with `note` as the reason.
        return AnswerForm(
            "confirm",
            framework="Agno",
            approve={"accepted": True},
            reject={"accepted": False},
            args=args,
            note_key="note",
        )
    if name == "ask_user" and (questions := _agno_questions(args)):
        return AnswerForm("feedback", framework="Agno", fields=questions, args=args)
    if not isinstance(args, dict) or not args:
        return None
    declared = _Schema(schema)
    found: list[ShapeField] = []
    _add(found, args, (), 0, declared.at(declared.root), declared)
    if not any(f.kind != "view" for f in found):
        return None
    return AnswerForm("shape", fields=found, args=args)


# --- Reading the answer -----------------------------------------------------------------------------


def _chosen(item: ShapeField, data: Mapping[str, str], getlist: Any) -> tuple[list[Any], str]:
    """The values picked for a choice, each checked against its options (a tampered one refused)."""
    raw = list(getlist(item.name) if getlist else []) if item.kind == "multichoice" else []
    if item.kind == "choice":
        one = data.get(item.name)
        raw = [one] if one not in (None, "") else []
    allowed = {v for v, _ in item.options}
    for text in raw:
        if text not in allowed:
            names = ", ".join(label for _, label in item.options)
            return [], f"{item.label}: not one of the choices ({names})."
    if item.kind == "choice" and not raw:
        if not item.chosen:
            return [], f"{item.label}: choose one."
        raw = list(item.chosen)  # not sent: the value stays as the agent gave it
    return [json.loads(v) for v, _ in item.options if v in raw], ""


def _confirm(form: AnswerForm, data: Mapping[str, str]) -> tuple[Any, str]:
    choice = data.get("confirmed")
    if choice not in ("true", "false"):
        return None, "Approve or reject."
    answer = copy.deepcopy(form.approve if choice == "true" else form.reject)
    note = (data.get("note") or "").strip()
    if choice == "false" and form.note_key and note:
        if len(note) > MAX_NOTE:
            return None, "Reason: too long."
        answer[form.note_key] = note
    return answer, ""


def read_shaped(form: AnswerForm, data: Mapping[str, str], getlist: Any = None) -> tuple[Any, str]:
    """The answer a submitted form gives: the approve or reject value of a confirmation, Agno's
    selections, or the arguments as the person edited them; and why it cannot be sent ("" when it
    can)."""
    if form.kind == "confirm":
        return _confirm(form, data)
    if form.kind == "feedback":
        # agno/os/interfaces/agui/resume.py: {"selections": {question: [labels]}}.
        selections = {}
        for item in form.fields:
            picked, problem = _chosen(item, data, getlist)
            if problem:
                return None, problem
            selections[form.args["questions"][item.path[0]]["question"]] = picked
        return {"selections": selections}, ""
    answer = copy.deepcopy(form.args)
    for item in form.fields:
        for one in item.rows or (item,):
            problem = _read_field(answer, one, data, getlist)
            if problem:
                return None, problem
    return answer, ""


def _read_field(answer: Any, item: ShapeField, data: Mapping[str, str], getlist: Any) -> str:
    target = answer
    for key in item.path[:-1]:
        target = target[key]
    if item.kind in ("text", "textarea"):
        text = data.get(item.name)
        if text is None:
            return ""
        if len(text) > MAX_TEXT:
            return f"{item.label}: too long."
        target[item.path[-1]] = text
    elif item.kind == "checklist":
        picked = set(getlist(item.name) if getlist else [])
        for index, entry in enumerate(target[item.path[-1]]):
            on = str(index) in picked
            entry[item.flag] = (_ON if on else _OFF) if item.flag == "status" else on
    elif item.kind in ("choice", "multichoice"):
        picked, problem = _chosen(item, data, getlist)
        if problem:
            return problem
        target[item.path[-1]] = picked[0] if item.kind == "choice" else picked
    return ""

"""What changed between two answers of an agent's discovery route, field by field.

The walk is over the declaration as received (camelCase dot paths such as `tools.items[search]`).
Lists of named things (AG-UI `tools.items` and `multiAgent.subagents` by `name`, external
`domainTools` by `publicName`) are compared by name, so a tool added or removed is one line, not a
shifted index.

Whether a change is breaking is not guessed from the field: both declarations go through the
decision module (`decide()`, with the endpoint's overrides), and a control that was on the page
before and is hidden after is a breaking change. A field change is marked breaking when it removes
something or turns it off (false, empty, gone) and the decision of a newly hidden control read that
field (a declared or inferred link of its provenance, in the declaration's own names, so a
non-standard shape such as AWS Strands' is marked too). No Django here: the admin passes plain values.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from agents_ui.capabilities import Kind, read_card
from agents_ui.decisions import CONTROL_LABELS, CONTROL_NAMES, Plan, decide
from agents_ui.sdk import AgentError, PublicExternalAgentPolicy, parse_capabilities
from agents_ui.sdk.a2a.client import normalised_card
from agents_ui.sdk.agui.client import normalize_capabilities

ChangeKind = Literal["added", "removed", "changed"]

# List path -> (the key that names an item, what an item is called).
NAMED_LISTS: dict[str, tuple[str, str]] = {
    "tools.items": ("name", "tool"),
    "multiAgent.subagents": ("name", "sub-agent"),
    "domainTools": ("publicName", "domain tool"),
    "skills": ("id", "skill"),
}

_MISSING: Any = object()


@dataclass(frozen=True)
class Declaration:
    """One snapshot as the diff needs it."""

    protocol: str  # "agui" | "external" | "a2a"
    status: str  # declared | none | invalid | unreachable
    payload: Mapping[str, Any] | None


@dataclass(frozen=True)
class FieldChange:
    path: str
    kind: ChangeKind
    old: Any = None
    new: Any = None
    # Set for an item of a named list: ("tool", "search").
    item: tuple[str, str] | None = None
    breaking: bool = False
    # Labels of the controls this change hides (when breaking).
    hides: tuple[str, ...] = ()

    @property
    def old_text(self) -> str:
        return "" if self.kind == "added" else show(self.old)

    @property
    def new_text(self) -> str:
        return "" if self.kind == "removed" else show(self.new)


@dataclass(frozen=True)
class ControlChange:
    name: str
    before: str  # shown | hidden | disabled
    after: str

    @property
    def label(self) -> str:
        return CONTROL_LABELS[self.name]

    @property
    def breaking(self) -> bool:
        return self.before != "hidden" and self.after == "hidden"


@dataclass(frozen=True)
class DeclarationDiff:
    old: Declaration
    new: Declaration
    changes: tuple[FieldChange, ...]
    controls: tuple[ControlChange, ...] = field(default=())

    @property
    def status_changed(self) -> bool:
        return self.old.status != self.new.status

    @property
    def breaking(self) -> bool:
        return any(control.breaking for control in self.controls)

    @property
    def hidden_controls(self) -> tuple[ControlChange, ...]:
        return tuple(c for c in self.controls if c.breaking)

    @property
    def shown_controls(self) -> tuple[ControlChange, ...]:
        return tuple(c for c in self.controls if c.before == "hidden" and c.after != "hidden")

    @property
    def items_added(self) -> tuple[FieldChange, ...]:
        return tuple(c for c in self.changes if c.item and c.kind == "added")

    @property
    def items_removed(self) -> tuple[FieldChange, ...]:
        return tuple(c for c in self.changes if c.item and c.kind == "removed")

    @property
    def unchanged(self) -> bool:
        return not self.changes and not self.controls and not self.status_changed


def show(value: Any) -> str:
    """A value as one short line: JSON for structures, true/false for booleans."""
    if value is _MISSING:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


# ------------------------------------------------------------------------------------------------
# The field walk


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _named(items: Any, key: str) -> dict[str, Any] | None:
    """{name: item} when every item is an object carrying a distinct string name, else None."""
    if not isinstance(items, list):
        return None
    named: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, Mapping) or not isinstance(item.get(key), str) or item[key] in named:
            return None
        named[item[key]] = item
    return named


def _walk(old: Any, new: Any, path: str, out: list[FieldChange]) -> None:
    if old is _MISSING and new is _MISSING:
        return
    if isinstance(old, Mapping) or isinstance(new, Mapping):
        old_map = old if isinstance(old, Mapping) else None
        new_map = new if isinstance(new, Mapping) else None
        if (old_map is not None or old is _MISSING) and (new_map is not None or new is _MISSING):
            # An object added or removed as a whole is shown leaf by leaf, like any other change.
            old_map = old_map if old_map is not None else {}
            new_map = new_map if new_map is not None else {}
            if not old_map and not new_map:
                if old is _MISSING or new is _MISSING:
                    out.append(_leaf(old, new, path))
                return
            for key in [*old_map, *(k for k in new_map if k not in old_map)]:
                _walk(old_map.get(key, _MISSING), new_map.get(key, _MISSING), _join(path, key), out)
            return
    if path in NAMED_LISTS:
        key, noun = NAMED_LISTS[path]
        old_items = {} if old is _MISSING else _named(old, key)
        new_items = {} if new is _MISSING else _named(new, key)
        if old_items is not None and new_items is not None and (old_items or new_items):
            for name in [*old_items, *(n for n in new_items if n not in old_items)]:
                item_path = f"{path}[{name}]"
                before, after = old_items.get(name, _MISSING), new_items.get(name, _MISSING)
                if before is _MISSING or after is _MISSING:
                    out.append(_leaf(before, after, item_path, item=(noun, name)))
                else:
                    _walk(before, after, item_path, out)
            return
    if old is _MISSING or new is _MISSING or old != new or type(old) is not type(new):
        out.append(_leaf(old, new, path))


def _leaf(old: Any, new: Any, path: str, item: tuple[str, str] | None = None) -> FieldChange:
    if old is _MISSING:
        return FieldChange(path, "added", None, new, item)
    if new is _MISSING:
        return FieldChange(path, "removed", old, None, item)
    return FieldChange(path, "changed", old, new, item)


def field_changes(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> list[FieldChange]:
    """Every field that differs between two declarations, in the order they appear."""
    changes: list[FieldChange] = []
    _walk(old if old is not None else {}, new if new is not None else {}, "", changes)
    return changes


# ------------------------------------------------------------------------------------------------
# What the page would show


def _normalized(declaration: Declaration) -> Mapping[str, Any] | None:
    payload = declaration.payload
    if payload is None or declaration.status != "declared":
        return None
    if declaration.protocol == "agui":
        return normalize_capabilities(payload)
    if declaration.protocol == "a2a":
        try:
            return normalised_card(payload)  # a 0.3 card compared in 1.0 names
        except AgentError:
            return payload
    return payload


def plan_for(declaration: Declaration, overrides: Mapping[str, str] | None = None) -> Plan:
    """The workspace this declaration gives (every permission granted, nothing observed)."""
    if declaration.protocol == "a2a":
        return _card_plan(declaration, overrides)
    payload = _normalized(declaration)
    capabilities = policy = None
    if payload is not None:
        try:
            if declaration.protocol == "agui":
                capabilities = parse_capabilities(payload)
            else:
                policy = PublicExternalAgentPolicy.model_validate(payload)
        except (AgentError, ValidationError):  # stored as declared, so it validated once
            capabilities = policy = None
    return decide(capabilities=capabilities, policy=policy, overrides=overrides or {})


def _card_plan(declaration: Declaration, overrides: Mapping[str, str] | None) -> Plan:
    """An A2A Agent Card's workspace, the card read in the SDK's 1.0 names (so its paths are too)."""
    card = _normalized(declaration)
    if card is None:
        return decide(overrides=overrides or {})
    return decide(profile=read_card(card, declaration.payload), overrides=overrides or {})


def _generic(path: str) -> str:
    """tools.items[search].description -> tools.items[].description"""
    return re.sub(r"\[[^\]]*\]", "[]", path)


def _reads(reason_field: str, path: str) -> bool:
    """Whether a decision that read `reason_field` depends on the field at `path`."""
    reason = _generic(reason_field)
    generic = _generic(path)
    # Either one inside the other: "tools.items" covers "tools.items[search]", and a removed
    # "domainTools[refund]" covers the decision's "domainTools[].operation.approvalRequired".
    return any(
        a == b or a.startswith(f"{b}.") or a.startswith(f"{b}[")
        for a, b in ((generic, reason), (reason, generic))
    )


def _turns_off(change: FieldChange) -> bool:
    return change.kind == "removed" or change.new in (False, None, [], {})


def diff_declarations(
    old: Declaration, new: Declaration, *, overrides: Mapping[str, str] | None = None
) -> DeclarationDiff:
    """Field by field, and control by control, what changed from `old` to `new`."""
    before, after = plan_for(old, overrides), plan_for(new, overrides)
    controls = tuple(
        ControlChange(name, before[name].decision.value, after[name].decision.value)
        for name in CONTROL_NAMES
        if before[name].decision != after[name].decision
    )
    newly_hidden = [c.name for c in controls if c.breaking]
    marked: list[FieldChange] = []
    for change in field_changes(_normalized(old) or old.payload, _normalized(new) or new.payload):
        hides = tuple(
            CONTROL_LABELS[name]
            for name in newly_hidden
            if _turns_off(change)
            and any(
                _reads(link.path, change.path)
                for plan in (before, after)
                for reason in plan[name].reasons
                for link in reason.provenance
                if link.path and link.kind in (Kind.DECLARED, Kind.INFERRED)
            )
        )
        if hides:
            change = FieldChange(
                change.path, change.kind, change.old, change.new, change.item, breaking=True, hides=hides
            )
        marked.append(change)
    return DeclarationDiff(old, new, tuple(marked), controls)

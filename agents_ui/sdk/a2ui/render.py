"""A surface resolved into the tree of components the product draws (bounded in nodes and depth)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .. import pointer
from ..limits import safe_link
from .catalog import (
    ALIGN,
    BUTTON_VARIANTS,
    CATALOGS_1,
    COMPONENTS,
    DATA_URL,
    FIELD_VARIANTS,
    IMAGE_FITS,
    IMAGE_VARIANTS,
    JUSTIFY,
    MAX_CHILDREN,
    MAX_DATA_URL,
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_NODES,
    MAX_OPTIONS,
    MAX_PATTERN,
    MAX_SVG_PATH,
    MAX_TABS,
    MAX_TEXT,
    SURFACE,
    SVG_PATH,
    TEXT_VARIANTS,
    UNALLOWED_CHILD,
    UNALLOWED_PARENT,
    VALIDATION_FAILED,
    VERSION_1,
    name_of,
    node_key,
    note,
    renderer_error,
)
from .icons import ICON_PATHS, icon_words
from .surfaces import Surface, absolute
from .values import Values, is_number, stringify

LIVE = frozenset({"off", "polite", "assertive"})
# What v1.0's accessibility.hidden may hide: what holds nothing a person can focus or use.
HIDEABLE = frozenset({"Text", "Image", "Icon", "Divider"})

# --- The rendered tree -----------------------------------------------------------------------------


@dataclass
class Node:
    """One component of the resolved tree: its kind, its resolved properties, its children."""

    kind: str  # a Basic Catalog component, or "missing" | "refused" | "unknown"
    id: str
    props: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    weight: int = 0  # flex-grow inside a Row or Column, 1..6


@dataclass
class SurfaceTree:
    """A surface ready to render: its root, what inputs write to, and the actions it offers."""

    surface: Surface
    root: Node | None
    # Absolute data path -> the component kind of the input bound to it.
    inputs: dict[str, str] = field(default_factory=dict)
    # Action key (the submit button's value) -> (component id, scope, the event).
    actions: dict[str, tuple[str, str, Mapping[str, Any]]] = field(default_factory=dict)
    # Component checks, to evaluate at submit: (component id, scope, checks).
    checks: list[tuple[str, str, list[Any]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    truncated: bool = False
    # v1.0 renderer-to-agent errors of what could not be drawn as sent (UNALLOWED_PARENT, ...).
    errors: list[dict[str, Any]] = field(default_factory=list)


def render(surface: Surface, values: Mapping[str, Any] | None = None) -> SurfaceTree:
    """The tree of a surface's components from its `root`, its data model overlaid with `values`
    (absolute path -> what the person entered)."""
    data = json.loads(json.dumps(surface.data)) if values else surface.data
    for path, value in (values or {}).items():
        parts = pointer.tokens(path)
        if parts:
            if not isinstance(data, dict | list):
                data = {}
            pointer.upsert(data, parts, value)
    builder = _Builder(surface, data)
    root = builder.build("root", "/", 0, frozenset()) if "root" in surface.components else None
    tree = builder.tree
    tree.root = root
    if root is None and surface.components:
        note(tree.notes, "The surface has no component with the id root yet: nothing to show.")
    return tree


class _Builder:
    def __init__(self, surface: Surface, data: Any) -> None:
        self.surface = surface
        self.tree = SurfaceTree(surface, None, notes=list(surface.notes))
        self.v1 = surface.version == VERSION_1
        self.values = Values(data, self.tree.notes, surface.version, surface.catalog_id)
        self.count = 0
        self.checked: set[tuple[str, str]] = set()
        self.parents: list[tuple[str, str]] = [(SURFACE, surface.catalog_id)]  # (kind, catalogue) above

    def note(self, text: str) -> None:
        note(self.tree.notes, text)

    def error(self, code: str, component_id: str, text: str) -> None:
        self.note(text)
        if len(self.tree.errors) < 20:
            self.tree.errors.append(
                renderer_error(code, self.surface.id, f"/components/{component_id}", text)
            )

    def _composed(self, ref: str, kind: str, catalog_id: str) -> str:
        """Why a v1.0 catalogue's composition rules refuse `kind` here ("" when they allow it)."""
        parent, parent_catalog = self.parents[-1]
        own = CATALOGS_1[catalog_id]
        parents = own.allowed_parents.get(kind)
        if parents is not None and parent not in parents:
            where = "anywhere" if not parents else f"only inside {', '.join(parents)}"
            self.error(
                UNALLOWED_PARENT, ref, f"Component {ref!r} ({kind}) may appear {where}, not in {parent}."
            )
            return "not allowed here"
        above = CATALOGS_1.get(parent_catalog)
        children = above.allowed_children.get(parent) if above is not None else None
        if children is not None and kind not in children:
            self.error(UNALLOWED_CHILD, ref, f"{parent} may not contain {kind} (component {ref!r}).")
            return "not allowed here"
        return ""

    def build(self, component_id: Any, scope: str, depth: int, ancestors: frozenset[str]) -> Node:
        ref = name_of(component_id)
        if ref is None:
            return Node("missing", "", {"reason": "A child reference is not a valid id."})
        if ref in ancestors:
            self.note(f"Component {ref!r} contains itself: the loop was cut.")
            return Node("refused", ref, {"reason": "contains itself"})
        if depth >= MAX_DEPTH:
            self.note(f"Components nest more than {MAX_DEPTH} levels deep: the deeper ones are not shown.")
            return Node("refused", ref, {"reason": "nested too deep"})
        self.count += 1
        if self.count > MAX_NODES:
            if not self.tree.truncated:
                self.tree.truncated = True
                self.note(
                    f"The surface has more than {MAX_NODES:,} components to show: the rest are not shown."
                )
            return Node("refused", ref, {"reason": "too many components"})
        component = self.surface.components.get(ref)
        if component is None:
            return Node("missing", ref, {"reason": "not defined yet"})
        kind = component.get("component")
        catalog_id = ""
        if self.v1:
            # v1.0 mixes catalogues: a component's own catalogId overrides the surface's.
            own = component.get("catalogId")
            catalog_id = own[:300] if isinstance(own, str) and own else self.surface.catalog_id
            catalog = CATALOGS_1.get(catalog_id)
            if kind == SURFACE:
                # The reserved container is the surface itself, parent of root: no parent has it.
                self.error(
                    UNALLOWED_PARENT, ref, f"Component {ref!r} is a Surface: it may not be inside another."
                )
                return Node("refused", ref, {"reason": "not allowed here"})
            if catalog is None or kind not in catalog.components:
                where = f"the catalogue {catalog_id}" if catalog_id else "no catalogue"
                self.error(
                    VALIDATION_FAILED,
                    ref,
                    f"Component {ref!r} ({str(kind)[:40]}) is from {where}, which this page does not draw.",
                )
                return Node("unknown", ref, {"type": str(kind)[:60], "json": stringify(component)[:MAX_TEXT]})
            refused = self._composed(ref, kind, catalog_id)
            if refused:
                return Node("refused", ref, {"reason": refused})
        if kind not in COMPONENTS:
            return Node("unknown", ref, {"type": str(kind)[:60], "json": stringify(component)[:MAX_TEXT]})
        inside = ancestors | {ref}
        node = Node(kind, ref)
        weight = component.get("weight")
        if is_number(weight) and weight > 0:
            node.weight = max(1, min(6, round(weight)))
        accessibility = component.get("accessibility")
        if isinstance(accessibility, Mapping):
            node.props["a11y_label"] = self.values.text(accessibility.get("label"), scope)[:200]
            if self.v1:
                # v1.0's ARIA: a live region's politeness, and hiding from assistive technologies.
                if accessibility.get("live") in LIVE:
                    node.props["a11y_live"] = accessibility["live"]
                if self.values.flag(accessibility.get("hidden"), scope):
                    if kind in HIDEABLE:
                        node.props["a11y_hidden"] = True
                    else:  # hidden from a screen reader, yet reachable by keyboard: never both
                        self.note(f"{kind} {ref!r} is not hidden from screen readers: it may hold controls.")
        self.parents.append((kind, catalog_id))
        try:
            getattr(self, f"_{kind}")(node, component, scope, depth + 1, inside)
        finally:
            self.parents.pop()
        if isinstance(component.get("checks"), list) and (ref, scope) not in self.checked:
            self.checked.add((ref, scope))  # a component shown twice is checked once
            self.tree.checks.append((ref, scope, component["checks"][:20]))
        return node

    # Layout

    def _children(self, node: Node, raw: Any, scope: str, depth: int, inside: frozenset[str]) -> None:
        if isinstance(raw, list):
            if len(raw) > MAX_CHILDREN:
                self.note(f"A container has {len(raw):,} children: the first {MAX_CHILDREN} are shown.")
            node.children = [self.build(child, scope, depth, inside) for child in raw[:MAX_CHILDREN]]
        elif isinstance(raw, Mapping) and isinstance(raw.get("path"), str):
            base = absolute(raw["path"], scope)
            items = pointer.get(self.values.data, pointer.tokens(base))
            template = raw.get("componentId")
            if isinstance(items, Mapping):
                keys = list(items)
            elif isinstance(items, list):
                keys = [str(i) for i in range(len(items))]
            else:
                keys = []
            if len(keys) > MAX_ITEMS:
                self.note(f"A list has {len(keys):,} items: the first {MAX_ITEMS} are shown.")
                node.props["more"] = len(keys) - MAX_ITEMS
            prefix = base.rstrip("/")
            for key in keys[:MAX_ITEMS]:
                item_scope = f"{prefix}/{pointer.escape(key)}"
                node.children.append(self.build(template, item_scope, depth, inside))
        else:
            node.children = []

    def _Row(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        node.props["justify"] = c.get("justify") if c.get("justify") in JUSTIFY else "start"
        node.props["align"] = c.get("align") if c.get("align") in ALIGN else "stretch"
        self._children(node, c.get("children"), scope, depth, inside)

    _Column = _Row

    def _List(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        node.props["direction"] = "horizontal" if c.get("direction") == "horizontal" else "vertical"
        node.props["align"] = c.get("align") if c.get("align") in ALIGN else "stretch"
        self._children(node, c.get("children"), scope, depth, inside)

    def _Card(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        node.children = [self.build(c.get("child"), scope, depth, inside)]

    def _Tabs(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        node.props["key"] = node_key(node.id, scope)
        tabs = c.get("tabs") if isinstance(c.get("tabs"), list) else []
        if len(tabs) > MAX_TABS:
            self.note(f"Tabs has {len(tabs)} tabs: the first {MAX_TABS} are shown.")
        node.props["tabs"] = [
            {
                "title": self.values.text(t.get("title"), scope)[:120],
                "node": self.build(t.get("child"), scope, depth, inside),
            }
            for t in tabs[:MAX_TABS]
            if isinstance(t, Mapping)
        ]

    def _Modal(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        trigger = self.build(c.get("trigger"), scope, depth, inside)
        # The trigger opens the dialog: a button's own action does not run from there.
        node.props["trigger"] = inline(
            trigger.children[0] if trigger.kind == "Button" and trigger.children else trigger
        )
        node.props["content"] = self.build(c.get("content"), scope, depth, inside)
        node.props["key"] = node_key(node.id, scope)

    def _Divider(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        node.props["axis"] = "vertical" if c.get("axis") == "vertical" else "horizontal"

    # Display

    def _Text(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        node.props["text"] = self.values.text(c.get("text"), scope)
        node.props["variant"] = c.get("variant") if c.get("variant") in TEXT_VARIANTS else "body"

    def _Icon(self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]) -> None:
        raw = c.get("name")
        if isinstance(raw, Mapping) and isinstance(raw.get("svgPath"), str):
            path = raw["svgPath"]
            if len(path) <= MAX_SVG_PATH and SVG_PATH.fullmatch(path):
                node.props.update(svg_path=path, name="icon", label="")
                return
            self.note(
                f"Icon {node.id!r} has an SVG path that is not plain path data: a placeholder is shown."
            )
            raw = ""
        name = self.values.text(raw, scope)[:40]
        # Drawn where the catalogue's name has a drawing, else said in words: no font-dependent glyph.
        node.props.update(name=name, label=name, svg_path=ICON_PATHS.get(name, ""), words=icon_words(name))

    def _media(self, node: Node, c: Mapping[str, Any], scope: str, family: str) -> None:
        # Not cut to the text bound: a cut data: URL could still look whole.
        url = stringify(self.values.value(c.get("url"), scope)).strip()
        node.props["description"] = self.values.text(c.get("description"), scope)[:300]
        if url.startswith("data:"):
            if len(url) <= MAX_DATA_URL and DATA_URL.fullmatch(url) and url[5:].startswith(family + "/"):
                node.props["src"] = url
            else:
                self.note(f"{node.kind} {node.id!r}: a data: URL that is not a small {family} was refused.")
                node.props["refused"] = True
            return
        link = safe_link(url)
        if link is None:
            self.note(f"{node.kind} {node.id!r}: a URL that is not http(s) was refused.")
            node.props["refused"] = True
        else:
            node.props["link"] = link

    def _Image(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._media(node, c, scope, "image")
        node.props["fit"] = c.get("fit") if c.get("fit") in IMAGE_FITS else "fill"
        node.props["variant"] = c.get("variant") if c.get("variant") in IMAGE_VARIANTS else "mediumFeature"

    def _Video(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._media(node, c, scope, "video")

    def _AudioPlayer(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._media(node, c, scope, "audio")

    # Interaction

    def _Button(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        node.children = [inline(self.build(c.get("child"), scope, depth, inside))]
        node.props["variant"] = c.get("variant") if c.get("variant") in BUTTON_VARIANTS else "default"
        action = c.get("action") if isinstance(c.get("action"), Mapping) else {}
        event = action.get("event")
        call = action.get("functionCall")
        if isinstance(event, Mapping) and name_of(event.get("name")):
            key = f"{node.id}|{scope}"
            self.tree.actions[key] = (node.id, scope, event)
            node.props["action"] = key
        elif self.values.call_name(call) == "openUrl":
            # openUrl requires a person's click (v1.0's requiresUserActivation): a link they follow.
            args = call.get("args") if isinstance(call.get("args"), Mapping) else {}
            url = self.values.text(args.get("url"), scope).strip()
            link = safe_link(url)
            if link is None:
                self.note(f"Button {node.id!r} opens a URL that is not http(s): it was refused.")
            node.props["href"] = link or ""
        else:
            node.props["inert"] = True

    def _bound(self, node: Node, raw: Any, scope: str) -> str:
        """The absolute path an input writes to ("" when its value is not bound)."""
        bound = self.values.binding(raw)
        if bound is not None:
            path = absolute(bound, scope)
            if len(path) <= 400:
                self.tree.inputs[path] = node.kind
                return path
        return ""

    def _label(self, node: Node, c: Mapping[str, Any], scope: str) -> None:
        node.props["label"] = self.values.text(c.get("label"), scope)[:300]

    def _TextField(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._label(node, c, scope)
        node.props["value"] = self.values.text(c.get("value"), scope)
        node.props["variant"] = c.get("variant") if c.get("variant") in FIELD_VARIANTS else "shortText"
        node.props["name"] = self._bound(node, c.get("value"), scope)
        pattern = c.get("validationRegexp")
        if isinstance(pattern, str) and len(pattern) <= MAX_PATTERN:
            self.tree.checks.append((node.id, scope, [{"pattern": pattern, "path": node.props["name"]}]))

    def _CheckBox(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._label(node, c, scope)
        node.props["checked"] = self.values.flag(c.get("value"), scope)
        node.props["name"] = self._bound(node, c.get("value"), scope)

    def _ChoicePicker(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._label(node, c, scope)
        chosen = self.values.value(c.get("value"), scope)
        chosen = {str(v) for v in chosen} if isinstance(chosen, list) else {str(chosen)} if chosen else set()
        options = c.get("options") if isinstance(c.get("options"), list) else []
        if len(options) > MAX_OPTIONS:
            self.note(
                f"ChoicePicker {node.id!r} has {len(options)} options: the first {MAX_OPTIONS} are shown."
            )
        node.props["options"] = [
            {
                "label": self.values.text(o.get("label"), scope)[:200],
                "value": o["value"][:200],
                "checked": o["value"] in chosen,
            }
            for o in options[:MAX_OPTIONS]
            if isinstance(o, Mapping) and isinstance(o.get("value"), str)
        ]
        node.props["multiple"] = c.get("variant") == "multipleSelection"
        node.props["chips"] = c.get("displayStyle") == "chips"
        node.props["name"] = self._bound(node, c.get("value"), scope)

    def _Slider(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._label(node, c, scope)
        low = c.get("min") if is_number(c.get("min")) else 0
        high = c.get("max") if is_number(c.get("max")) and c.get("max") > low else low + 100
        value = self.values.number(c.get("value"), scope, low)
        node.props.update(min=low, max=high, value=min(max(value, low), high))
        node.props["name"] = self._bound(node, c.get("value"), scope)

    def _DateTimeInput(
        self, node: Node, c: Mapping[str, Any], scope: str, depth: int, inside: frozenset[str]
    ) -> None:
        self._label(node, c, scope)
        date, time = c.get("enableDate") is True, c.get("enableTime") is True
        if not date and not time:
            date = True
        kind = "datetime-local" if date and time else "date" if date else "time"
        node.props["type"] = kind
        node.props["value"] = input_moment(self.values.text(c.get("value"), scope), kind)
        node.props["min"] = input_moment(self.values.text(c.get("min"), scope), kind)
        node.props["max"] = input_moment(self.values.text(c.get("max"), scope), kind)
        node.props["name"] = self._bound(node, c.get("value"), scope)


def inline(node: Node) -> Node:
    """A button's label: its Text is drawn as a phrase (a button holds no paragraphs)."""
    if node.kind == "Text":
        node.props["inline"] = True
    return node


def input_moment(value: str, kind: str) -> str:
    """An ISO 8601 value in the form an HTML date/time input takes; "" when it is none."""
    value = value.strip()
    if not value:
        return ""
    try:
        if kind == "time":
            return datetime.fromisoformat(f"2000-01-01T{value.split('T')[-1]}").strftime("%H:%M")
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return moment.strftime("%Y-%m-%dT%H:%M") if kind == "datetime-local" else moment.strftime("%Y-%m-%d")

"""A2UI v0.9 (Google's Agent-to-UI protocol) as it arrives in AG-UI activities, read and bounded.

AG-UI's A2UI middleware carries surfaces as `ACTIVITY_SNAPSHOT` events of type `a2ui-surface`
whose content is `{"a2ui_operations": [{"version": "v0.9", <one message>}, ...]}` (or, while the
agent builds it, `{"status": "building" | "retrying" | "failed"}`). This module reads those
messages (createSurface, updateComponents, updateDataModel, deleteSurface) into surfaces, resolves
the Basic Catalog's components and their data bindings (JSON Pointers into the surface's data
model, relative inside list templates) into a tree the templates render, and turns a person's
action into the `userAction` the middleware expects in `forwardedProps.a2uiAction`.

Everything here is agent-supplied and untrusted: counts, depth, sizes and text lengths are bounded,
URLs are http(s) (media inline only as small `data:` URLs of a media type), patterns run with a
timeout, and anything refused leaves a note that the page shows. Pure Python: no Django.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import regex

from .a2ui_icons import ICON_PATHS, icon_words
from .limits import safe_link

__all__ = [
    "A2A_MIME_TYPE",
    "ACTIVITY_TYPE",
    "BASIC_CATALOG_ID",
    "COMPONENTS",
    "EXTENSION_URI",
    "SCHEMA_CONTEXT_DESCRIPTION",
    "Activity",
    "Node",
    "Submission",
    "Surface",
    "SurfaceTree",
    "action_messages",
    "catalogue_context",
    "client_capabilities",
    "client_data_model",
    "read_activity",
    "render",
    "resolve_pointer",
    "submit",
    "thread_surfaces",
]

VERSION = "v0.9"
ACTIVITY_TYPE = "a2ui-surface"
OPERATIONS_KEY = "a2ui_operations"
BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
# The same catalogue under the id AG-UI's A2UI toolkit stamps on surfaces it builds.
CATALOG_IDS = frozenset({BASIC_CATALOG_ID, "https://a2ui.org/specification/v0_9/basic_catalog.json"})
# A2UI as an A2A extension (an agent card's `capabilities.extensions[].uri`).
EXTENSION_URI = "https://a2ui.org/a2a-extension/a2ui/v0.9"
# An A2A DataPart of A2UI messages says so in `metadata.mimeType` (the v0.9 extension's type; A2UI's
# agent SDK names later versions' parts with the second, read too).
A2A_MIME_TYPE = "application/json+a2ui"
A2A_MIME_TYPES = frozenset({A2A_MIME_TYPE, "application/a2ui+json"})
# The A2A message metadata that carries what the client renders, and a surface's data model.
CLIENT_CAPABILITIES_KEY = "a2uiClientCapabilities"
CLIENT_DATA_MODEL_KEY = "a2uiClientDataModel"
# The description of the `RunAgentInput.context` entry that carries the catalogue the client
# renders: byte-identical to `A2UI_SCHEMA_CONTEXT_DESCRIPTION` of `@ag-ui/a2ui-middleware`.
SCHEMA_CONTEXT_DESCRIPTION = (
    "A2UI Component Schema — available components for generating UI surfaces. "
    "Use these component names and properties when creating A2UI operations."
)
MESSAGE_TYPES = ("createSurface", "updateComponents", "updateDataModel", "deleteSurface")

# Bounds on what one activity may make the page show.
MAX_OPERATIONS = 200
MAX_SURFACES = 8
MAX_COMPONENTS = 400
MAX_DEPTH = 24  # nesting of rendered components (the A2UI agent SDK refuses past 50)
MAX_NODES = 1_500  # rendered components per surface, list templates expanded
MAX_ITEMS = 60  # items a list template expands
MAX_CHILDREN = 100  # children of one container
MAX_TEXT = 4_000
MAX_ID = 120
MAX_OPTIONS = 60
MAX_TABS = 12
MAX_DATA_URL = 256 * 1024
MAX_SVG_PATH = 2_000
MAX_PATTERN = 200
MAX_CALL_DEPTH = 8
MAX_CONTEXT_BYTES = 32 * 1024
MAX_NOTES = 12
PATTERN_TIMEOUT = 0.05  # seconds

# The Basic Catalog's components and the properties this product renders of each (besides `id`,
# `component`, `weight` and `accessibility`), the required ones first: what it advertises.
COMPONENTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Text": (("text",), ("variant",)),
    "Image": (("url",), ("description", "fit", "variant")),
    "Icon": (("name",), ()),
    "Video": (("url",), ()),
    "AudioPlayer": (("url",), ("description",)),
    "Row": (("children",), ("justify", "align")),
    "Column": (("children",), ("justify", "align")),
    "List": (("children",), ("direction", "align")),
    "Card": (("child",), ()),
    "Tabs": (("tabs",), ()),
    "Modal": (("trigger", "content"), ()),
    "Divider": ((), ("axis",)),
    "Button": (("child", "action"), ("variant", "checks")),
    "TextField": (("label",), ("value", "variant", "validationRegexp", "checks")),
    "CheckBox": (("label", "value"), ("checks",)),
    "ChoicePicker": (("options", "value"), ("label", "variant", "displayStyle", "filterable", "checks")),
    "Slider": (("value", "max"), ("label", "min", "checks")),
    "DateTimeInput": (("value",), ("enableDate", "enableTime", "min", "max", "label", "checks")),
}
INPUTS = frozenset({"TextField", "CheckBox", "ChoicePicker", "Slider", "DateTimeInput"})

TEXT_VARIANTS = frozenset({"h1", "h2", "h3", "h4", "h5", "caption", "body"})
IMAGE_FITS = frozenset({"contain", "cover", "fill", "none", "scaleDown"})
IMAGE_VARIANTS = frozenset({"icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header"})
JUSTIFY = frozenset({"center", "end", "spaceAround", "spaceBetween", "spaceEvenly", "start", "stretch"})
ALIGN = frozenset({"start", "center", "end", "stretch"})
BUTTON_VARIANTS = frozenset({"default", "primary", "borderless"})
FIELD_VARIANTS = frozenset({"longText", "number", "shortText", "obscured"})


_SVG_PATH = re.compile(r"[MmLlHhVvCcSsQqTtAaZz0-9eE ,.\-+]+")
_DATA_URL = re.compile(
    r"data:(?:image/(?:png|jpeg|gif|webp|avif)|video/(?:mp4|webm|ogg)|audio/(?:mpeg|mp4|ogg|wav|webm))"
    r";base64,[A-Za-z0-9+/=]+"
)
_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_INTERPOLATION = re.compile(r"(?<!\\)\$\{([^{}]*)\}")
_MISSING: Any = object()


def _note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES:
        notes.append(text)
    elif len(notes) == MAX_NOTES:
        notes.append("Further problems with this interface were left out.")


def _key(component_id: str, scope: str) -> str:
    """A short stable token for one component in one scope (DOM ids of tabs and dialogs)."""
    return hashlib.blake2s(f"{component_id}@{scope}".encode(), digest_size=5).hexdigest()


def _name(value: Any) -> str | None:
    """An agent-chosen id: a short string, or None."""
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID else None


# --- Surfaces --------------------------------------------------------------------------------------


@dataclass
class Surface:
    """One surface after the messages of an activity: its catalogue, components and data model."""

    id: str
    catalog_id: str = BASIC_CATALOG_ID
    theme: dict[str, Any] = field(default_factory=dict)
    send_data_model: bool = False
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: Any = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        """Whether its catalogue is the one this product renders."""
        return self.catalog_id in CATALOG_IDS

    @property
    def agent_name(self) -> str:
        name = self.theme.get("agentDisplayName")
        return name[:80] if isinstance(name, str) else ""


@dataclass
class Activity:
    """What one `a2ui-surface` activity shows: its surfaces, or the agent's progress on them."""

    surfaces: list[Surface] = field(default_factory=list)
    status: str = ""  # building | retrying | failed, before a surface is painted
    error: str = ""
    deleted: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def surface(self, surface_id: str) -> Surface | None:
        return next((s for s in self.surfaces if s.id == surface_id), None)


def read_activity(content: Any, prior: Mapping[str, Surface] | None = None) -> Activity:
    """The surfaces an `a2ui-surface` activity's content describes, within the bounds.

    `prior` are the thread's surfaces as earlier activities left them (`thread_surfaces`): an update
    for one of them, without a createSurface here, goes on from there (an agent updates a surface
    it created in an earlier turn, as AG-UI's A2UI middleware tells it to)."""
    activity = Activity()
    if not isinstance(content, Mapping):
        _note(activity.notes, "The interface is not an object: nothing to show.")
        return activity
    status = content.get("status")
    if status in ("building", "retrying", "failed"):
        activity.status = status
        error = content.get("error")
        activity.error = error[:MAX_TEXT] if isinstance(error, str) else ""
    operations = content.get(OPERATIONS_KEY)
    if operations is None:
        if not activity.status:
            _note(activity.notes, f"The interface has no {OPERATIONS_KEY}: nothing to show.")
        return activity
    if not isinstance(operations, list):
        _note(activity.notes, f"{OPERATIONS_KEY} is not a list: nothing to show.")
        return activity
    if len(operations) > MAX_OPERATIONS:
        _note(
            activity.notes,
            f"The interface has {len(operations):,} messages: only the first {MAX_OPERATIONS} were read.",
        )
        operations = operations[:MAX_OPERATIONS]
    surfaces: dict[str, Surface] = {}
    for number, operation in enumerate(operations):
        _apply(activity, surfaces, number, operation, prior or {})
    activity.surfaces = list(surfaces.values())
    if activity.surfaces:
        activity.status = ""  # a painted surface supersedes the progress it replaces
    return activity


def _apply(
    activity: Activity,
    surfaces: dict[str, Surface],
    number: int,
    operation: Any,
    prior: Mapping[str, Surface],
) -> None:
    notes = activity.notes
    if not isinstance(operation, Mapping):
        _note(notes, f"Message {number + 1} is not an object: left out.")
        return
    version = operation.get("version", VERSION)
    if version != VERSION:
        _note(notes, f"Message {number + 1} is A2UI {str(version)[:20]}, not {VERSION}: left out.")
        return
    kinds = [kind for kind in MESSAGE_TYPES if kind in operation]
    if len(kinds) != 1:
        _note(notes, f"Message {number + 1} is not exactly one of {', '.join(MESSAGE_TYPES)}: left out.")
        return
    kind = kinds[0]
    body = operation[kind]
    surface_id = _name(body.get("surfaceId")) if isinstance(body, Mapping) else None
    if surface_id is None:
        _note(notes, f"Message {number + 1} ({kind}) names no valid surfaceId: left out.")
        return
    surface = surfaces.get(surface_id)
    if kind == "deleteSurface":
        surfaces.pop(surface_id, None)
        activity.deleted.append(surface_id)
        return
    if kind == "createSurface":
        if surface is not None:
            _note(notes, f"Surface {surface_id!r} was created twice: the second createSurface was left out.")
            return
        if len(surfaces) >= MAX_SURFACES:
            _note(notes, f"More than {MAX_SURFACES} surfaces: {surface_id!r} was left out.")
            return
        catalog = body.get("catalogId")
        theme = body.get("theme")
        surfaces[surface_id] = Surface(
            surface_id,
            catalog_id=catalog[:300] if isinstance(catalog, str) else "",
            theme=dict(theme) if isinstance(theme, Mapping) else {},
            # `attachDataModel` is the middleware's older name for the same flag.
            send_data_model=body.get("sendDataModel", body.get("attachDataModel")) is True,
        )
        return
    if surface is None:
        if len(surfaces) >= MAX_SURFACES:
            _note(notes, f"More than {MAX_SURFACES} surfaces: {surface_id!r} was left out.")
            return
        earlier = prior.get(surface_id)
        if earlier is not None:
            surface = surfaces[surface_id] = _copy(earlier)
        else:
            # An agent may update a surface it knows exists: the Basic Catalog is assumed.
            surface = surfaces[surface_id] = Surface(surface_id)
    if kind == "updateComponents":
        _update_components(surface, body.get("components"), number)
    else:
        _update_data(surface, body, number)


def _copy(surface: Surface) -> Surface:
    return Surface(
        surface.id,
        catalog_id=surface.catalog_id,
        theme=dict(surface.theme),
        send_data_model=surface.send_data_model,
        components=dict(surface.components),
        data=json.loads(json.dumps(surface.data)),
    )


def thread_surfaces(
    contents: Iterable[Any], prior: Mapping[str, Surface] | None = None
) -> dict[str, Surface]:
    """The thread's surfaces after these activities' contents, oldest first (deleted ones gone)."""
    state = dict(prior or {})
    for content in contents:
        activity = read_activity(content, state)
        for surface_id in activity.deleted:
            state.pop(surface_id, None)
        state.update((surface.id, surface) for surface in activity.surfaces)
    return state


def _update_components(surface: Surface, components: Any, number: int) -> None:
    if not isinstance(components, list):
        _note(surface.notes, f"Message {number + 1} (updateComponents) has no list of components: left out.")
        return
    for component in components:
        if not isinstance(component, Mapping):
            continue
        component_id = _name(component.get("id"))
        if component_id is None or not isinstance(component.get("component"), str):
            _note(surface.notes, "A component without a valid id or type was left out.")
            continue
        if component_id not in surface.components and len(surface.components) >= MAX_COMPONENTS:
            _note(
                surface.notes,
                f"The surface has more than {MAX_COMPONENTS} components: the rest were left out.",
            )
            return
        surface.components[component_id] = dict(component)


def _update_data(surface: Surface, body: Mapping[str, Any], number: int) -> None:
    path = body.get("path", "/")
    if not isinstance(path, str) or (path and not path.startswith("/")):
        _note(surface.notes, f"Message {number + 1} (updateDataModel) has an invalid path: left out.")
        return
    parts = _parts(path)
    if "value" not in body:
        if parts:
            _remove(surface.data, parts)
        else:
            surface.data = {}
        return
    value = body["value"]
    if not parts:
        surface.data = value if isinstance(value, dict | list) else {}
        return
    if not isinstance(surface.data, dict | list):
        surface.data = {}
    if not _set(surface.data, parts, value):
        _note(surface.notes, f"Message {number + 1} (updateDataModel) could not write {path[:80]}: left out.")


# --- JSON Pointers ---------------------------------------------------------------------------------


def _parts(path: str) -> list[str]:
    if path in ("", "/"):
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in path.lstrip("/").split("/")]


def _pointer(parts: Sequence[str]) -> str:
    return "/" + "/".join(p.replace("~", "~0").replace("/", "~1") for p in parts) if parts else "/"


def _index(part: str, length: int, *, append: bool = False) -> int | None:
    if part == "-" and append:
        return length
    if not part.isdigit() or (len(part) > 1 and part[0] == "0"):
        return None
    index = int(part)
    return index if index < length + (1 if append else 0) else None


def resolve_pointer(data: Any, path: str) -> Any:
    """The value at an absolute JSON Pointer, or None when nothing is there."""
    value = _get(data, _parts(path))
    return None if value is _MISSING else value


def _get(data: Any, parts: Sequence[str]) -> Any:
    for part in parts:
        if isinstance(data, Mapping):
            data = data.get(part, _MISSING)
        elif isinstance(data, list):
            index = _index(part, len(data))
            data = data[index] if index is not None else _MISSING
        else:
            return _MISSING
        if data is _MISSING:
            return _MISSING
    return data


def _set(data: Any, parts: Sequence[str], value: Any) -> bool:
    """Upsert: missing objects on the way are created (A2UI's updateDataModel)."""
    for part in parts[:-1]:
        if isinstance(data, dict):
            nxt = data.get(part)
            if not isinstance(nxt, dict | list):
                nxt = data[part] = {}
            data = nxt
        elif isinstance(data, list):
            index = _index(part, len(data))
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
        index = _index(last, len(data), append=True)
        if index is None:
            return False
        if index == len(data):
            data.append(value)
        else:
            data[index] = value
        return True
    return False


def _remove(data: Any, parts: Sequence[str]) -> None:
    parent = _get(data, parts[:-1])
    if isinstance(parent, dict):
        parent.pop(parts[-1], None)
    elif isinstance(parent, list):
        index = _index(parts[-1], len(parent))
        if index is not None:
            parent[index] = None  # arrays keep their length


def absolute(path: str, scope: str) -> str:
    """A binding's path from the root: relative paths resolve inside the template's item."""
    if path.startswith("/"):
        return path
    base = scope.rstrip("/")
    return f"{base}/{path}" if path else (scope or "/")


# --- Binding and functions -------------------------------------------------------------------------


class _Values:
    """Resolves dynamic values against a data model, in a scope, with the catalogue's functions."""

    def __init__(self, data: Any, notes: list[str]) -> None:
        self.data = data
        self.notes = notes

    def value(self, raw: Any, scope: str = "/", depth: int = 0) -> Any:
        if isinstance(raw, Mapping):
            if "path" in raw and isinstance(raw["path"], str):
                found = _get(self.data, _parts(absolute(raw["path"], scope)))
                return None if found is _MISSING else found
            if isinstance(raw.get("call"), str):
                return self.call(raw, scope, depth + 1)
        return raw

    def text(self, raw: Any, scope: str = "/") -> str:
        return _stringify(self.value(raw, scope))[:MAX_TEXT]

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
            _note(self.notes, f"Functions nested more than {MAX_CALL_DEPTH} deep were not evaluated.")
            return None
        name = raw["call"]
        args = raw.get("args") if isinstance(raw.get("args"), Mapping) else {}

        def arg(key: str) -> Any:
            return self.value(args.get(key), scope, depth)

        if name == "required":
            value = arg("value")
            return value not in (None, "", [], {})
        if name == "regex":
            return _matches(arg("pattern"), _stringify(arg("value")), self.notes)
        if name == "length":
            size = len(_stringify(arg("value")))
            low, high = arg("min"), arg("max")
            return (not isinstance(low, int) or size >= low) and (not isinstance(high, int) or size <= high)
        if name == "numeric":
            number = self.number(args.get("value"), scope)
            if number is None:
                return False
            low, high = arg("min"), arg("max")
            return (not _is_number(low) or number >= low) and (not _is_number(high) or number <= high)
        if name == "email":
            return bool(_EMAIL.fullmatch(_stringify(arg("value"))[:320]))
        if name in ("and", "or"):
            values = args.get("values") if isinstance(args.get("values"), list) else []
            results = [self.value(v, scope, depth) is True for v in values[:MAX_CHILDREN]]
            return all(results) if name == "and" else any(results)
        if name == "not":
            return arg("value") is not True
        if name == "formatString":
            return self.format_string(
                _stringify(args.get("value"))
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
            code = _stringify(arg("currency"))[:3].upper()
            decimals = arg("decimals")
            amount = _format_number(number, 2 if decimals is None else decimals, True)
            return f"{_CURRENCIES.get(code, code + ' ')}{amount}"
        if name == "formatDate":
            return _format_date(arg("value"), _stringify(arg("format")))
        if name == "pluralize":
            count = self.number(args.get("value"), scope, 0)
            key = "zero" if count == 0 and "zero" in args else "one" if count == 1 else "other"
            return self.text(args.get(key, args.get("other")), scope)
        _note(self.notes, f"The function {name[:40]!r} is not part of the Basic Catalog: left out.")
        return None

    def format_string(self, template: str, scope: str) -> str:
        def one(match: re.Match[str]) -> str:
            inner = match.group(1).strip()
            if "(" in inner:
                return ""  # functions inside a template string are not evaluated
            found = _get(self.data, _parts(absolute(inner, scope)))
            return _stringify(None if found is _MISSING else found)

        return _INTERPOLATION.sub(one, template[:MAX_TEXT]).replace("\\${", "${")


_CURRENCIES = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥", "INR": "INR ", "CHF": "CHF "}


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _stringify(value: Any) -> str:
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
        if _is_number(decimals) and 0 <= decimals <= 10
        else (0 if float(number).is_integer() else 2)
    )
    return f"{number:{',' if grouping else ''}.{places}f}"


_DATE_TOKENS = re.compile(r"yyyy|yy|MMMM|MMM|MM|M|dd|d|EEEE|E+|HH|H|hh|h|mm|ss|a|'[^']*'")


def _format_date(value: Any, pattern: str) -> str:
    if not isinstance(value, str):
        return _stringify(value)
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


def _matches(pattern: Any, text: str, notes: list[str]) -> bool:
    """An agent's pattern against a person's text, bounded in length and time (never backtracks
    without end)."""
    if not isinstance(pattern, str) or len(pattern) > MAX_PATTERN:
        _note(notes, "A validation pattern was too long or not text: it was not checked.")
        return True
    try:
        return regex.search(pattern, text[:MAX_TEXT], timeout=PATTERN_TIMEOUT) is not None
    except (regex.error, TimeoutError):
        _note(notes, "A validation pattern could not be checked in time: it was not checked.")
        return True


# --- The rendered tree -----------------------------------------------------------------------------


@dataclass
class Node:
    """One component as the templates render it: its kind, its resolved properties, its children."""

    kind: str  # a Basic Catalog component, or "missing" | "refused" | "unknown"
    id: str
    props: dict[str, Any] = field(default_factory=dict)
    children: list[Node] = field(default_factory=list)
    weight: int = 0  # flex-grow inside a Row or Column, 1..6

    @property
    def template(self) -> str:
        return f"agents_ui/a2ui/{self.kind.lower()}.html"


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


def render(surface: Surface, values: Mapping[str, Any] | None = None) -> SurfaceTree:
    """The tree of a surface's components from its `root`, its data model overlaid with `values`
    (absolute path -> what the person entered)."""
    data = json.loads(json.dumps(surface.data)) if values else surface.data
    for path, value in (values or {}).items():
        parts = _parts(path)
        if parts:
            if not isinstance(data, dict | list):
                data = {}
            _set(data, parts, value)
    builder = _Builder(surface, data)
    root = builder.build("root", "/", 0, frozenset()) if "root" in surface.components else None
    tree = builder.tree
    tree.root = root
    if root is None and surface.components:
        _note(tree.notes, "The surface has no component with the id root yet: nothing to show.")
    return tree


class _Builder:
    def __init__(self, surface: Surface, data: Any) -> None:
        self.surface = surface
        self.tree = SurfaceTree(surface, None, notes=list(surface.notes))
        self.values = _Values(data, self.tree.notes)
        self.count = 0
        self.checked: set[tuple[str, str]] = set()

    def note(self, text: str) -> None:
        _note(self.tree.notes, text)

    def build(self, component_id: Any, scope: str, depth: int, ancestors: frozenset[str]) -> Node:
        ref = _name(component_id)
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
        if kind not in COMPONENTS:
            return Node("unknown", ref, {"type": str(kind)[:60], "json": _stringify(component)[:MAX_TEXT]})
        inside = ancestors | {ref}
        node = Node(kind, ref)
        weight = component.get("weight")
        if _is_number(weight) and weight > 0:
            node.weight = max(1, min(6, round(weight)))
        accessibility = component.get("accessibility")
        if isinstance(accessibility, Mapping):
            node.props["a11y_label"] = self.values.text(accessibility.get("label"), scope)[:200]
        getattr(self, f"_{kind}")(node, component, scope, depth + 1, inside)
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
            items = _get(self.values.data, _parts(base))
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
                item_scope = f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}"
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
        node.props["key"] = _key(node.id, scope)
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
        node.props["trigger"] = _inline(
            trigger.children[0] if trigger.kind == "Button" and trigger.children else trigger
        )
        node.props["content"] = self.build(c.get("content"), scope, depth, inside)
        node.props["key"] = _key(node.id, scope)

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
            if len(path) <= MAX_SVG_PATH and _SVG_PATH.fullmatch(path):
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
        url = _stringify(self.values.value(c.get("url"), scope)).strip()
        node.props["description"] = self.values.text(c.get("description"), scope)[:300]
        if url.startswith("data:"):
            if len(url) <= MAX_DATA_URL and _DATA_URL.fullmatch(url) and url[5:].startswith(family + "/"):
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
        node.children = [_inline(self.build(c.get("child"), scope, depth, inside))]
        node.props["variant"] = c.get("variant") if c.get("variant") in BUTTON_VARIANTS else "default"
        action = c.get("action") if isinstance(c.get("action"), Mapping) else {}
        event = action.get("event")
        call = action.get("functionCall")
        if isinstance(event, Mapping) and _name(event.get("name")):
            key = f"{node.id}|{scope}"
            self.tree.actions[key] = (node.id, scope, event)
            node.props["action"] = key
        elif isinstance(call, Mapping) and call.get("call") == "openUrl":
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
        if isinstance(raw, Mapping) and isinstance(raw.get("path"), str):
            path = absolute(raw["path"], scope)
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
        low = c.get("min") if _is_number(c.get("min")) else 0
        high = c.get("max") if _is_number(c.get("max")) and c.get("max") > low else low + 100
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
        node.props["value"] = _input_moment(self.values.text(c.get("value"), scope), kind)
        node.props["min"] = _input_moment(self.values.text(c.get("min"), scope), kind)
        node.props["max"] = _input_moment(self.values.text(c.get("max"), scope), kind)
        node.props["name"] = self._bound(node, c.get("value"), scope)


def _inline(node: Node) -> Node:
    """A button's label: its Text is drawn as a phrase (a button holds no paragraphs)."""
    if node.kind == "Text":
        node.props["inline"] = True
    return node


def _input_moment(value: str, kind: str) -> str:
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


# --- A person's action -----------------------------------------------------------------------------


@dataclass
class Submission:
    """What a press of a surface's button gives: the action for the agent, or why not."""

    values: dict[str, Any]  # absolute path -> what the person entered
    user_action: dict[str, Any] | None = None
    data_model: Any = None  # the surface's data model, when it asked for it (sendDataModel)
    problems: list[str] = field(default_factory=list)


def read_inputs(tree: SurfaceTree, posted: Mapping[str, list[str]]) -> dict[str, Any]:
    """The person's values for the inputs the surface binds, read from a form post (`name` is
    `a2ui:<path>`); fields the surface does not bind are ignored."""
    values: dict[str, Any] = {}
    options = _options_by_path(tree.root)
    for path, kind in tree.inputs.items():
        key = f"a2ui:{path}"
        given = [v[:MAX_TEXT] for v in posted.get(key, [])][:MAX_OPTIONS]
        if key not in posted and kind not in ("CheckBox", "ChoicePicker"):
            continue  # a browser posts every enabled field: absent, the value stays the agent's
        if kind == "CheckBox":
            values[path] = bool(given) and given[-1] == "on"
        elif kind == "ChoicePicker":
            allowed = options.get(path, set())
            values[path] = [v for v in dict.fromkeys(given) if v in allowed]
        elif kind == "Slider" or (kind == "TextField" and options.get(path) == {"number"}):
            number = _number_or_none(given[-1] if given else "")
            values[path] = number if number is not None else (given[-1] if given else "")
        elif given:
            values[path] = given[-1]
        else:
            values[path] = ""
    return values


def _number_or_none(text: str) -> float | int | None:
    try:
        number = float(text)
    except ValueError:
        return None
    if not math.isfinite(number):
        return None
    return int(number) if number.is_integer() else number


def _options_by_path(node: Node | None) -> dict[str, set[str]]:
    """Each ChoicePicker's path -> its option values; a number TextField's path -> {"number"}."""
    found: dict[str, set[str]] = {}
    stack = [node] if node is not None else []
    while stack:
        current = stack.pop()
        name = current.props.get("name")
        if current.kind == "ChoicePicker" and name:
            found.setdefault(name, set()).update(o["value"] for o in current.props["options"])
        elif current.kind == "TextField" and name and current.props.get("variant") == "number":
            found[name] = {"number"}
        stack.extend(current.children)
        for key in ("trigger", "content"):
            if isinstance(current.props.get(key), Node):
                stack.append(current.props[key])
        stack.extend(tab["node"] for tab in current.props.get("tabs", ()))
    return found


def submit(surface: Surface, action_key: str, posted: Mapping[str, list[str]], timestamp: str) -> Submission:
    """The `userAction` a button press sends (A2UI's client-to-server `action`), its context
    resolved against the data model as the person filled it in; refused when a check fails."""
    first = render(surface)
    values = read_inputs(first, posted)
    tree = render(surface, values)
    submission = Submission(values)
    spot = tree.actions.get(action_key)
    if spot is None:
        submission.problems.append("This button does not send anything to the agent.")
        return submission
    component_id, scope, event = spot
    resolver = _Values(_data_with(surface, values), tree.notes)
    for checked_id, check_scope, checks in tree.checks:
        for check in checks:
            if not isinstance(check, Mapping):
                continue
            if "pattern" in check:
                text = _stringify(values.get(check["path"])) if check["path"] else ""
                if text and not _matches(check["pattern"], text, tree.notes):
                    submission.problems.append(
                        f"{_label_of(surface, checked_id)}: the value is not in the expected form."
                    )
                continue
            if resolver.value(check.get("condition"), check_scope) is not True:
                message = check.get("message")
                submission.problems.append(
                    message[:300] if isinstance(message, str) else f"{checked_id}: a check failed."
                )
    if submission.problems:
        return submission
    raw_context = event.get("context") if isinstance(event.get("context"), Mapping) else {}
    context = {str(k)[:MAX_ID]: resolver.value(v, scope) for k, v in list(raw_context.items())[:MAX_CHILDREN]}
    if len(json.dumps(context, default=str)) > MAX_CONTEXT_BYTES:
        submission.problems.append("What this button would send is too large.")
        return submission
    submission.user_action = {
        "name": event["name"],
        "surfaceId": surface.id,
        "sourceComponentId": component_id,
        "timestamp": timestamp,
        "context": context,
    }
    if surface.send_data_model:
        submission.data_model = resolver.data
    return submission


def _data_with(surface: Surface, values: Mapping[str, Any]) -> Any:
    data = json.loads(json.dumps(surface.data))
    for path, value in values.items():
        parts = _parts(path)
        if parts:
            if not isinstance(data, dict | list):
                data = {}
            _set(data, parts, value)
    return data


def _label_of(surface: Surface, component_id: str) -> str:
    label = surface.components.get(component_id, {}).get("label")
    return label[:80] if isinstance(label, str) else component_id


# --- Capabilities ----------------------------------------------------------------------------------


def catalogue_context() -> dict[str, str]:
    """The `RunAgentInput.context` entry that tells an agent which catalogue this client renders,
    as AG-UI's A2UI middleware reads it: `{catalogId, components}` as JSON text."""
    components = {}
    for name, (required, optional) in COMPONENTS.items():
        properties: dict[str, Any] = {"id": {"type": "string"}, "component": {"const": name}}
        properties.update({prop: {} for prop in (*required, *optional)})
        components[name] = {
            "type": "object",
            "properties": properties,
            "required": ["id", "component", *required],
        }
    return {
        "description": SCHEMA_CONTEXT_DESCRIPTION,
        "value": json.dumps({"catalogId": BASIC_CATALOG_ID, "components": components}, separators=(",", ":")),
    }


def client_capabilities() -> dict[str, Any]:
    """`a2uiClientCapabilities`, as A2UI's A2A extension sends it in message metadata."""
    return {VERSION: {"supportedCatalogIds": [BASIC_CATALOG_ID]}}


def action_messages(user_action: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The client-to-server message list of one action: the `data` of the DataPart that takes a
    person's action to an A2A agent."""
    return [{"version": VERSION, "action": dict(user_action)}]


def client_data_model(surface_id: str, data_model: Any) -> dict[str, Any]:
    """`a2uiClientDataModel`: a surface's data model as the person left it (sendDataModel)."""
    return {"version": VERSION, "surfaces": {surface_id: data_model}}

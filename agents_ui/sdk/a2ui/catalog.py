"""A2UI's Basic Catalog as this client renders it, in v0.9 and v1.0: its ids, components, functions
(who may call each, which need a person's click), bounds, and what the client tells an agent it
renders (the catalogue context, the client capabilities, action messages)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

VERSION = "v0.9"
VERSION_1 = "v1.0"
VERSIONS = (VERSION, VERSION_1)
ACTIVITY_TYPE = "a2ui-surface"
OPERATIONS_KEY = "a2ui_operations"
BASIC_CATALOG_ID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
# The same catalogue under the id AG-UI's A2UI toolkit stamps on surfaces it builds.
CATALOG_IDS = frozenset({BASIC_CATALOG_ID, "https://a2ui.org/specification/v0_9/basic_catalog.json"})
# v1.0's Basic Catalog (a surface's `catalogId`, or a component's or a function call's own).
BASIC_CATALOG_ID_1 = "https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"
# The catalogues this client renders, per version: v1.0 mixes them in one surface, component by component.
SUPPORTED = {VERSION: CATALOG_IDS, VERSION_1: frozenset({BASIC_CATALOG_ID_1})}
# A2UI as an A2A extension (an agent card's `capabilities.extensions[].uri`), per version.
EXTENSION_URI = "https://a2ui.org/a2a-extension/a2ui/v0.9"
EXTENSION_URI_1 = "https://a2ui.org/a2a-extension/a2ui/v1.0"
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
# v1.0 adds the agent's calls of the renderer's functions, and its answers to the renderer's calls.
MESSAGE_TYPES_1 = (*MESSAGE_TYPES, "callRendererFunction", "agentFunctionResponse")
# v1.0's renderer-to-agent error codes this client sends.
INVALID_FUNCTION_CALL = "INVALID_FUNCTION_CALL"
UNALLOWED_PARENT = "UNALLOWED_PARENT"
UNALLOWED_CHILD = "UNALLOWED_CHILD"
VALIDATION_FAILED = "VALIDATION_FAILED"

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

# The Basic Catalog's functions, as v1.0's catalogue declares them: (allowedCallers,
# requiresUserActivation). Absent `allowedCallers` means "rendererOnly": the page calls them while
# drawing or on a click; an agent's `callRendererFunction` of one is refused.
FUNCTIONS: dict[str, tuple[str, bool]] = {
    name: ("rendererOnly", name == "openUrl")
    for name in (
        "required", "regex", "length", "numeric", "email", "formatString", "formatNumber",
        "formatCurrency", "formatDate", "pluralize", "openUrl", "and", "or", "not",
    )
}  # fmt: skip
# Composition rules of a v1.0 catalogue: component -> (allowedParents, allowedChildren), None where
# any is allowed. The Basic Catalog restricts none of its own components; the reserved `Surface`
# container (the parent of `root`) has no parent and is never a component an agent sends.
SURFACE = "Surface"


@dataclass(frozen=True)
class Catalog:
    """One v1.0 catalogue this client renders: its components, functions and composition rules."""

    id: str
    components: frozenset[str]
    functions: Mapping[str, tuple[str, bool]]
    allowed_parents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    allowed_children: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


CATALOGS_1: dict[str, Catalog] = {
    BASIC_CATALOG_ID_1: Catalog(
        BASIC_CATALOG_ID_1, frozenset(COMPONENTS), FUNCTIONS, allowed_parents={SURFACE: ()}
    ),
}

TEXT_VARIANTS = frozenset({"h1", "h2", "h3", "h4", "h5", "caption", "body"})
IMAGE_FITS = frozenset({"contain", "cover", "fill", "none", "scaleDown"})
IMAGE_VARIANTS = frozenset({"icon", "avatar", "smallFeature", "mediumFeature", "largeFeature", "header"})
JUSTIFY = frozenset({"center", "end", "spaceAround", "spaceBetween", "spaceEvenly", "start", "stretch"})
ALIGN = frozenset({"start", "center", "end", "stretch"})
BUTTON_VARIANTS = frozenset({"default", "primary", "borderless"})
FIELD_VARIANTS = frozenset({"longText", "number", "shortText", "obscured"})


SVG_PATH = re.compile(r"[MmLlHhVvCcSsQqTtAaZz0-9eE ,.\-+]+")
DATA_URL = re.compile(
    r"data:(?:image/(?:png|jpeg|gif|webp|avif)|video/(?:mp4|webm|ogg)|audio/(?:mpeg|mp4|ogg|wav|webm))"
    r";base64,[A-Za-z0-9+/=]+"
)
EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
INTERPOLATION = re.compile(r"(?<!\\)\$\{([^{}]*)\}")
MISSING: Any = object()


def note(notes: list[str], text: str) -> None:
    if len(notes) < MAX_NOTES:
        notes.append(text)
    elif len(notes) == MAX_NOTES:
        notes.append("Further problems with this interface were left out.")


def node_key(component_id: str, scope: str) -> str:
    """A short stable token for one component in one scope (DOM ids of tabs and dialogs)."""
    return hashlib.blake2s(f"{component_id}@{scope}".encode(), digest_size=5).hexdigest()


def name_of(value: Any) -> str | None:
    """An agent-chosen id: a short string, or None."""
    return value if isinstance(value, str) and 0 < len(value) <= MAX_ID else None


# --- Capabilities ----------------------------------------------------------------------------------


def catalogue_context() -> dict[str, str]:
    """The `RunAgentInput.context` entry that tells an agent which catalogue this client renders,
    as AG-UI's A2UI middleware reads it: `{catalogId, components}` as JSON text (v0.9's id there,
    where the middleware looks), with `versions` naming each version's catalogue ids."""
    components = {}
    for name, (required, optional) in COMPONENTS.items():
        properties: dict[str, Any] = {"id": {"type": "string"}, "component": {"const": name}}
        properties.update({prop: {} for prop in (*required, *optional)})
        components[name] = {
            "type": "object",
            "properties": properties,
            "required": ["id", "component", *required],
        }
    value = {
        "catalogId": BASIC_CATALOG_ID,
        "components": components,
        "versions": {version: {"supportedCatalogIds": sorted(ids)} for version, ids in SUPPORTED.items()},
    }
    return {"description": SCHEMA_CONTEXT_DESCRIPTION, "value": json.dumps(value, separators=(",", ":"))}


def client_capabilities() -> dict[str, Any]:
    """`a2uiClientCapabilities`, as A2UI's A2A extension sends it in message metadata: both versions."""
    return {
        VERSION: {"supportedCatalogIds": [BASIC_CATALOG_ID]},
        VERSION_1: {"supportedCatalogIds": sorted(CATALOGS_1)},
    }


def action_messages(user_action: Mapping[str, Any], version: str = VERSION) -> list[dict[str, Any]]:
    """The client-to-server message list of one action: the `data` of the DataPart that takes a
    person's action to an A2A agent, in the surface's version."""
    return [{"version": version, "action": dict(user_action)}]


def client_data_model(surface_id: str, data_model: Any, version: str = VERSION) -> dict[str, Any]:
    """`a2uiClientDataModel`: a surface's data model as the person left it (sendDataModel)."""
    return {"version": version, "surfaces": {surface_id: data_model}}


def function_error(call_id: str, message: str, version: str = VERSION_1) -> dict[str, Any]:
    """v1.0's `rendererFunctionResponse` refusing an agent's `callRendererFunction`."""
    return {
        "version": version,
        "rendererFunctionResponse": {
            "functionCallId": call_id,
            "error": {"code": INVALID_FUNCTION_CALL, "message": message[:300]},
        },
    }


def renderer_error(code: str, surface_id: str, path: str, message: str) -> dict[str, Any]:
    """v1.0's renderer-to-agent `error` of a surface it could not draw as sent."""
    return {
        "version": VERSION_1,
        "error": {"code": code, "surfaceId": surface_id, "path": path[:400], "message": message[:300]},
    }

"""A2UI v0.9's Basic Catalog as this client renders it: its ids, components, bounds, and what the
client tells an agent it renders (the catalogue context, the client capabilities, action messages)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

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

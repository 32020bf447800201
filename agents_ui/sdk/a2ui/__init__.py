"""A2UI v0.9 (Google's Agent-to-UI protocol): surfaces an agent builds, read, resolved and acted on.

``catalog`` (the Basic Catalog this client renders and what it tells agents), ``surfaces`` (A2UI
messages read into bounded surfaces), ``values`` (data bindings and the catalogue's functions),
``render`` (a surface resolved into a tree of components), ``actions`` (a person's action back as
a ``userAction``). The names below are the package's public surface. Which template draws a
component is the product's business (agents_ui/display/a2ui.py), never the SDK's.
"""

from .actions import Submission, read_inputs, submit
from .catalog import (
    A2A_MIME_TYPE,
    A2A_MIME_TYPES,
    ACTIVITY_TYPE,
    BASIC_CATALOG_ID,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_DATA_MODEL_KEY,
    COMPONENTS,
    EXTENSION_URI,
    MAX_CHILDREN,
    MAX_COMPONENTS,
    MAX_DATA_URL,
    MAX_DEPTH,
    MAX_ITEMS,
    MAX_OPERATIONS,
    OPERATIONS_KEY,
    SCHEMA_CONTEXT_DESCRIPTION,
    VERSION,
    action_messages,
    catalogue_context,
    client_capabilities,
    client_data_model,
)
from .render import Node, SurfaceTree, render
from .surfaces import Activity, Surface, absolute, read_activity, thread_surfaces

__all__ = [
    "A2A_MIME_TYPE",
    "A2A_MIME_TYPES",
    "ACTIVITY_TYPE",
    "BASIC_CATALOG_ID",
    "CLIENT_CAPABILITIES_KEY",
    "CLIENT_DATA_MODEL_KEY",
    "COMPONENTS",
    "EXTENSION_URI",
    "MAX_CHILDREN",
    "MAX_COMPONENTS",
    "MAX_DATA_URL",
    "MAX_DEPTH",
    "MAX_ITEMS",
    "MAX_OPERATIONS",
    "OPERATIONS_KEY",
    "SCHEMA_CONTEXT_DESCRIPTION",
    "VERSION",
    "Activity",
    "Node",
    "Submission",
    "Surface",
    "SurfaceTree",
    "absolute",
    "action_messages",
    "catalogue_context",
    "client_capabilities",
    "client_data_model",
    "read_activity",
    "read_inputs",
    "render",
    "submit",
    "thread_surfaces",
]

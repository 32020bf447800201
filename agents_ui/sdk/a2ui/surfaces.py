"""A2UI v0.9 and v1.0 (Google's Agent-to-UI protocol) as they arrive in AG-UI activities, read and bounded.

AG-UI's A2UI middleware carries surfaces as `ACTIVITY_SNAPSHOT` events of type `a2ui-surface`
whose content is `{"a2ui_operations": [{"version": "v0.9", <one message>}, ...]}` (or, while the
agent builds it, `{"status": "building" | "retrying" | "failed"}`). This module reads those
messages (createSurface, updateComponents, updateDataModel, deleteSurface) into surfaces; `render`
resolves them into a tree, `actions` turns a person's action into the `userAction` the middleware
expects in `forwardedProps.a2uiAction`.

A surface keeps the version it was created in, and every later message for it must say the same.
v1.0's differences read here: createSurface may carry the components and the data model inline;
its `catalogId` is the default for components that name none of their own; updateDataModel's
`value` is required, and null deletes; the agent may call one of the renderer's functions
(callRendererFunction), which this client never runs for it: it answers INVALID_FUNCTION_CALL
(`Activity.responses`, sent back with the thread's next run).

Everything here is agent-supplied and untrusted: counts, depth, sizes and text lengths are bounded,
and anything refused leaves a note that the page shows. Pure Python: no Django.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import pointer
from .catalog import (
    BASIC_CATALOG_ID,
    CATALOGS_1,
    MAX_COMPONENTS,
    MAX_OPERATIONS,
    MAX_SURFACES,
    MAX_TEXT,
    MESSAGE_TYPES,
    MESSAGE_TYPES_1,
    OPERATIONS_KEY,
    SUPPORTED,
    VERSION,
    VERSION_1,
    VERSIONS,
    function_error,
    name_of,
    note,
)

# --- Surfaces --------------------------------------------------------------------------------------


@dataclass
class Surface:
    """One surface after the messages of an activity: its catalogue, components and data model."""

    id: str
    catalog_id: str = BASIC_CATALOG_ID
    theme: dict[str, Any] = field(default_factory=dict)
    version: str = VERSION
    send_data_model: bool = False
    components: dict[str, dict[str, Any]] = field(default_factory=dict)
    data: Any = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def supported(self) -> bool:
        """Whether its catalogue is one this product renders (a v1.0 surface may name none and
        leave it to each component)."""
        if self.version == VERSION_1 and not self.catalog_id:
            return True
        return self.catalog_id in SUPPORTED[self.version]

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
    # v1.0 renderer-to-agent messages this activity calls for (refused function calls).
    responses: list[dict[str, Any]] = field(default_factory=list)

    def surface(self, surface_id: str) -> Surface | None:
        return next((s for s in self.surfaces if s.id == surface_id), None)


def read_activity(content: Any, prior: Mapping[str, Surface] | None = None) -> Activity:
    """The surfaces an `a2ui-surface` activity's content describes, within the bounds.

    `prior` are the thread's surfaces as earlier activities left them (`thread_surfaces`): an update
    for one of them, without a createSurface here, goes on from there (an agent updates a surface
    it created in an earlier turn, as AG-UI's A2UI middleware tells it to)."""
    activity = Activity()
    if not isinstance(content, Mapping):
        note(activity.notes, "The interface is not an object: nothing to show.")
        return activity
    status = content.get("status")
    if status in ("building", "retrying", "failed"):
        activity.status = status
        error = content.get("error")
        activity.error = error[:MAX_TEXT] if isinstance(error, str) else ""
    operations = content.get(OPERATIONS_KEY)
    if operations is None:
        if not activity.status:
            note(activity.notes, f"The interface has no {OPERATIONS_KEY}: nothing to show.")
        return activity
    if not isinstance(operations, list):
        note(activity.notes, f"{OPERATIONS_KEY} is not a list: nothing to show.")
        return activity
    if len(operations) > MAX_OPERATIONS:
        note(
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
        note(notes, f"Message {number + 1} is not an object: left out.")
        return
    version = operation.get("version", VERSION)
    if version not in VERSIONS:
        note(
            notes, f"Message {number + 1} is A2UI {str(version)[:20]}, not {' or '.join(VERSIONS)}: left out."
        )
        return
    types = MESSAGE_TYPES_1 if version == VERSION_1 else MESSAGE_TYPES
    kinds = [kind for kind in types if kind in operation]
    if len(kinds) != 1:
        note(notes, f"Message {number + 1} is not exactly one of {', '.join(types)}: left out.")
        return
    kind = kinds[0]
    body = operation[kind]
    if kind == "callRendererFunction":
        _refuse_call(activity, body, number)
        return
    if kind == "agentFunctionResponse":
        note(notes, f"Message {number + 1} answers a function call this page never made: left out.")
        return
    surface_id = name_of(body.get("surfaceId")) if isinstance(body, Mapping) else None
    if surface_id is None:
        note(notes, f"Message {number + 1} ({kind}) names no valid surfaceId: left out.")
        return
    surface = surfaces.get(surface_id)
    if kind == "deleteSurface":
        surfaces.pop(surface_id, None)
        activity.deleted.append(surface_id)
        return
    if kind == "createSurface":
        if surface is not None:
            note(notes, f"Surface {surface_id!r} was created twice: the second createSurface was left out.")
            return
        if len(surfaces) >= MAX_SURFACES:
            note(notes, f"More than {MAX_SURFACES} surfaces: {surface_id!r} was left out.")
            return
        catalog = body.get("catalogId")
        theme = body.get("theme") if version == VERSION else None
        surface = surfaces[surface_id] = Surface(
            surface_id,
            catalog_id=catalog[:300] if isinstance(catalog, str) else "",
            theme=dict(theme) if isinstance(theme, Mapping) else {},
            version=version,
            # `attachDataModel` is the middleware's older name for the same flag.
            send_data_model=body.get("sendDataModel", body.get("attachDataModel")) is True,
        )
        if version == VERSION_1:
            # v1.0 may create the surface whole: its components and initial data model inline.
            if "components" in body:
                _update_components(surface, body.get("components"), number)
            if isinstance(body.get("dataModel"), Mapping):
                _update_data(surface, {"value": body["dataModel"]}, number)
        return
    if surface is None:
        if len(surfaces) >= MAX_SURFACES:
            note(notes, f"More than {MAX_SURFACES} surfaces: {surface_id!r} was left out.")
            return
        earlier = prior.get(surface_id)
        if earlier is not None:
            surface = surfaces[surface_id] = _copy(earlier)
        elif version == VERSION_1:
            note(notes, f"Message {number + 1} ({kind}) updates {surface_id!r}, never created: left out.")
            return
        else:
            # An agent may update a surface it knows exists: the Basic Catalog is assumed.
            surface = surfaces[surface_id] = Surface(surface_id)
    if surface.version != version:
        note(
            notes,
            f"Message {number + 1} is A2UI {version}, but {surface_id!r} is {surface.version}: left out.",
        )
        return
    if kind == "updateComponents":
        _update_components(surface, body.get("components"), number)
    elif version == VERSION_1 and "value" not in body:
        note(
            surface.notes,
            f"Message {number + 1} (updateDataModel) has no value (v1.0 requires one): left out.",
        )
    else:
        _update_data(surface, body, number)


def _refuse_call(activity: Activity, body: Any, number: int) -> None:
    """An agent's callRendererFunction: this page runs no function for an agent. Every function of
    the catalogues it renders is renderer-only, so each call is answered INVALID_FUNCTION_CALL, as
    A2UI v1.0 says a renderer answers a call its caller may not make."""
    call_id = name_of(body.get("functionCallId")) if isinstance(body, Mapping) else None
    call = body.get("callFunction") if isinstance(body, Mapping) else None
    if call_id is None or not isinstance(call, Mapping) or not isinstance(call.get("@call"), str):
        note(activity.notes, f"Message {number + 1} (callRendererFunction) is malformed: left out.")
        if call_id is not None:
            activity.responses.append(function_error(call_id, "Malformed callRendererFunction."))
        return
    name = call["@call"][:60]
    catalog = CATALOGS_1.get(call.get("catalogId") if isinstance(call.get("catalogId"), str) else "")
    rule = catalog.functions.get(name) if catalog is not None else None
    if catalog is None:
        reason = f"Catalog not found: {str(call.get('catalogId'))[:200]}"
    elif rule is None:
        reason = f"Function {name!r} is not in catalog {catalog.id}."
    elif rule[0] not in ("agentOnly", "rendererOrAgent"):
        reason = f"Function {name!r} cannot be called by agent (allowedCallers is {rule[0]})."
    else:  # pragma: no cover - no catalogue this page renders lets an agent call a function
        reason = f"Function {name!r} is not run for an agent by this renderer."
    if rule is not None and rule[1]:
        reason += " It requires user activation."
    # The person reads why in words; the agent gets the spec's reason (the response).
    note(
        activity.notes,
        f"The agent asked this page to run {name!r} itself: refused. This page runs its functions"
        " only for the person using it, never on an agent's word.",
    )
    if len(activity.responses) < MAX_OPERATIONS:
        activity.responses.append(function_error(call_id, reason))


def _copy(surface: Surface) -> Surface:
    return Surface(
        surface.id,
        catalog_id=surface.catalog_id,
        theme=dict(surface.theme),
        version=surface.version,
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
        note(surface.notes, f"Message {number + 1} (updateComponents) has no list of components: left out.")
        return
    for component in components:
        if not isinstance(component, Mapping):
            continue
        component_id = name_of(component.get("id"))
        if component_id is None or not isinstance(component.get("component"), str):
            note(surface.notes, "A component without a valid id or type was left out.")
            continue
        if component_id not in surface.components and len(surface.components) >= MAX_COMPONENTS:
            note(
                surface.notes,
                f"The surface has more than {MAX_COMPONENTS} components: the rest were left out.",
            )
            return
        surface.components[component_id] = dict(component)


def _update_data(surface: Surface, body: Mapping[str, Any], number: int) -> None:
    path = body.get("path", "/")
    if not isinstance(path, str) or (path and not path.startswith("/")):
        note(surface.notes, f"Message {number + 1} (updateDataModel) has an invalid path: left out.")
        return
    parts = pointer.tokens(path)
    # v0.9 deletes with an absent value; v1.0 with an explicit null.
    deletes = "value" not in body or (surface.version == VERSION_1 and body["value"] is None)
    if deletes:
        if parts:
            pointer.remove(surface.data, parts)
        else:
            surface.data = {}
        return
    value = body["value"]
    if not parts:
        surface.data = value if isinstance(value, dict | list) else {}
        return
    if not isinstance(surface.data, dict | list):
        surface.data = {}
    if not pointer.upsert(surface.data, parts, value):
        note(surface.notes, f"Message {number + 1} (updateDataModel) could not write {path[:80]}: left out.")


def absolute(path: str, scope: str) -> str:
    """A binding's path from the root: relative paths resolve inside the template's item."""
    if path.startswith("/"):
        return path
    base = scope.rstrip("/")
    return f"{base}/{path}" if path else (scope or "/")

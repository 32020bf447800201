"""A2UI v1.0 messages for tests: built with the a2ui-agent-sdk's own v1.0 models where it has them,
by hand in v1.0's schema where it has none, and every one checked against the JSON schema the SDK
publishes for v1.0 (agent_to_renderer.json, common_types.json, the Basic Catalog) with jsonschema."""

from __future__ import annotations

from functools import cache
from typing import Any

import jsonschema
import referencing
from a2ui.core.basic_catalog.v1_0 import (
    BasicCatalog,
    ButtonComponent,
    ColumnComponent,
    TextComponent,
    TextFieldComponent,
)
from a2ui.core.schema import ProtocolVersion
from a2ui.core.schema.agent_to_renderer_schema import get_agent_to_renderer_schema_map
from a2ui.core.schema.common_types_schema import get_common_types_schema_map
from a2ui.core.schema.v1_0 import (
    ActionEvent,
    ActionEventWrapper,
    CreateSurface,
    CreateSurfaceMessage,
    DataBinding,
    UpdateDataModel,
    UpdateDataModelMessage,
)
from referencing.jsonschema import DRAFT202012

__all__ = ["BASIC", "booking_surface", "op", "schema_errors", "valid"]

BASIC = "https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"


@cache
def _validator() -> jsonschema.Draft202012Validator:
    messages = get_agent_to_renderer_schema_map(ProtocolVersion.V1_0)
    base = messages["$id"].rsplit("/", 1)[0]
    registry = referencing.Registry().with_resources(
        [
            (messages["$id"], DRAFT202012.create_resource(messages)),
            (
                f"{base}/common_types.json",
                DRAFT202012.create_resource(get_common_types_schema_map(ProtocolVersion.V1_0)),
            ),
            (f"{base}/catalog.json", DRAFT202012.create_resource(BasicCatalog().to_json())),
        ]
    )
    return jsonschema.Draft202012Validator(messages, registry=registry)


def schema_errors(message: dict[str, Any]) -> list[str]:
    """What v1.0's published JSON schema finds wrong with one agent-to-renderer message."""
    return [error.message[:200] for error in _validator().iter_errors(message)]


def valid(*messages: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages, each asserted valid in v1.0's schema."""
    for message in messages:
        assert not schema_errors(message), (message, schema_errors(message))
    return list(messages)


def op(kind: str, **body: Any) -> dict[str, Any]:
    """A hand-built v1.0 message for surface "s" (checked with `valid` where it must be valid)."""
    return {"version": "v1.0", kind: {"surfaceId": "s", **body}}


def _dump(model: Any) -> dict[str, Any]:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


def booking_surface(surface_id: str = "booking") -> list[dict[str, Any]]:
    """A v1.0 surface made whole by one createSurface (inline components and data model, built
    with the SDK's models), then a data model update: a live greeting, a field, a button."""
    components = [
        ColumnComponent(id="root", children=["greeting", "name", "send"]),
        TextComponent(
            id="greeting",
            text=DataBinding(path="/greeting"),
            accessibility={"live": "polite", "label": "Greeting"},
        ),
        TextFieldComponent(id="name", label="Your name", value=DataBinding(path="/form/name")),
        ButtonComponent(
            id="send",
            child="send-label",
            variant="primary",
            action=ActionEventWrapper(
                event=ActionEvent(
                    name="book", context={"name": DataBinding(path="/form/name"), "room": "focus"}
                )
            ),
        ),
        TextComponent(id="send-label", text="Book the room"),
    ]
    create = CreateSurfaceMessage(
        create_surface=CreateSurface(
            surface_id=surface_id,
            catalog_id=BASIC,
            send_data_model=True,
            components=[_dump(c) for c in components],
            data_model={"greeting": "A room, in v1.0", "form": {"name": "", "draft": "gone soon"}},
        )
    )
    delete_draft = UpdateDataModelMessage(
        update_data_model=UpdateDataModel(surface_id=surface_id, path="/form/draft", value=None)
    )
    create_json = _dump(create)
    # exclude_none drops the null that deletes: v1.0 needs it written.
    delete_json = _dump(delete_draft) | {
        "updateDataModel": {"surfaceId": surface_id, "path": "/form/draft", "value": None}
    }
    return valid(create_json, delete_json)

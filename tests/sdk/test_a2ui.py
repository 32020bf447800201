"""A2UI v0.9 read from AG-UI activities (agents_ui/sdk/a2ui/): the four messages, data binding by
JSON Pointer, the Basic Catalog's functions, a person's action, the catalogue offered to agents,
and surfaces built with Google's own A2UI agent SDK (`a2ui-agent-sdk`)."""

from __future__ import annotations

import json
import time
from datetime import date, timedelta
from typing import Any

import pytest
from a2ui.builder import v0_9 as sdk
from a2ui.core.schema.v0_9 import server_to_client as wire
from a2ui.parser.messages import to_message_dicts, to_message_models
from ag_ui.core import ActivityDeltaEvent, ActivitySnapshotEvent, MessagesSnapshotEvent, TextMessageStartEvent

from agents_ui.demo.agui.booking import confirmation_operations, form_operations
from agents_ui.sdk import a2ui, fold, pointer

CATALOG = a2ui.BASIC_CATALOG_ID


def op(kind: str, **body: Any) -> dict[str, Any]:
    return {"version": "v0.9", kind: {"surfaceId": "s", **body}}


def one(*ops: dict[str, Any]) -> a2ui.Surface:
    [surface] = a2ui.read_activity({"a2ui_operations": list(ops)}).surfaces
    return surface


# --- Messages ---------------------------------------------------------------------------------------


def test_the_four_messages_create_update_and_delete_surfaces():
    activity = a2ui.read_activity(
        {
            "a2ui_operations": [
                op(
                    "createSurface",
                    catalogId=CATALOG,
                    theme={"agentDisplayName": "Weather"},
                    sendDataModel=True,
                ),
                op("updateComponents", components=[{"id": "root", "component": "Text", "text": "hi"}]),
                op("updateComponents", components=[{"id": "root", "component": "Text", "text": "hello"}]),
                op("updateDataModel", path="/user/name", value="Ada"),
                op("updateDataModel", path="/user/age", value=36),
                op("updateDataModel", path="/user/age"),
                {"version": "v0.9", "createSurface": {"surfaceId": "gone", "catalogId": CATALOG}},
                {"version": "v0.9", "deleteSurface": {"surfaceId": "gone"}},
            ]
        }
    )
    [surface] = activity.surfaces
    assert surface.components["root"]["text"] == "hello" and surface.send_data_model
    assert surface.data == {"user": {"name": "Ada"}} and surface.agent_name == "Weather"
    assert activity.deleted == ["gone"] and not activity.notes


def test_messages_that_are_not_v0_9_or_not_one_message_are_left_out_with_notes():
    activity = a2ui.read_activity(
        {
            "a2ui_operations": [
                {"version": "v0.8", "beginRendering": {"surfaceId": "s"}},
                {
                    "version": "v0.9",
                    "createSurface": {"surfaceId": "s", "catalogId": CATALOG},
                    "deleteSurface": {},
                },
                "text",
                op("createSurface", catalogId=CATALOG),
                op("createSurface", catalogId=CATALOG),
            ]
        }
    )
    assert len(activity.surfaces) == 1
    assert any("v0.8" in n for n in activity.notes) and any("exactly one" in n for n in activity.notes)
    assert any("not an object" in n for n in activity.notes) and any(
        "created twice" in n for n in activity.notes
    )


def test_an_update_for_a_surface_not_created_here_assumes_the_basic_catalog():
    surface = one(op("updateComponents", components=[{"id": "root", "component": "Text", "text": "x"}]))
    assert surface.supported and a2ui.render(surface).root.kind == "Text"


def test_progress_before_a_surface_is_painted():
    assert a2ui.read_activity({"status": "building"}).status == "building"
    failed = a2ui.read_activity({"status": "failed", "error": "no JSON"})
    assert (failed.status, failed.error) == ("failed", "no JSON")


# --- Binding ----------------------------------------------------------------------------------------


def test_json_pointers_absolute_relative_escaped_and_missing():
    data = {"a/b": {"m~n": [10, 20]}, "list": [{"x": 1}, {"x": 2}]}
    assert pointer.resolve(data, "/a~1b/m~0n/1") == 20
    assert pointer.resolve(data, "/list/01") is None and pointer.resolve(data, "/nope") is None
    assert a2ui.absolute("x", "/list/1") == "/list/1/x" and a2ui.absolute("/top", "/list/1") == "/top"


def test_a_template_binds_each_item_relatively_and_the_root_absolutely():
    surface = one(
        op("createSurface", catalogId=CATALOG),
        op(
            "updateComponents",
            components=[
                {
                    "id": "root",
                    "component": "List",
                    "children": {"path": "/employees", "componentId": "card"},
                },
                {"id": "card", "component": "Column", "children": ["name", "company"]},
                {"id": "name", "component": "Text", "text": {"path": "name"}},
                {"id": "company", "component": "Text", "text": {"path": "/company"}},
            ],
        ),
        op("updateDataModel", value={"company": "Acme", "employees": [{"name": "Alice"}, {"name": "Bob"}]}),
    )
    tree = a2ui.render(surface)
    texts = [[t.props["text"] for t in card.children] for card in tree.root.children]
    assert texts == [["Alice", "Acme"], ["Bob", "Acme"]]


def test_type_conversion_and_functions_of_the_basic_catalog():
    def text(value: Any, data: Any = None) -> str:
        surface = one(
            op("createSurface", catalogId=CATALOG),
            op("updateComponents", components=[{"id": "root", "component": "Text", "text": value}]),
            op("updateDataModel", value=data or {}),
        )
        return a2ui.render(surface).root.props["text"]

    data = {
        "n": 3,
        "ok": True,
        "none": None,
        "obj": {"a": 1},
        "when": "2026-02-02T15:17:00Z",
        "price": 1234.5,
    }
    assert [text({"path": f"/{k}"}, data) for k in ("n", "ok", "none", "obj")] == [
        "3",
        "true",
        "",
        '{"a": 1}',
    ]
    fmt = {"call": "formatString", "args": {"value": "Hi ${/n} and \\${literal} ${now()}"}}
    assert text(fmt, data) == "Hi 3 and ${literal} "
    assert (
        text({"call": "formatNumber", "args": {"value": {"path": "/price"}, "decimals": 1}}, data)
        == "1,234.5"
    )
    assert text({"call": "formatCurrency", "args": {"value": 5, "currency": "EUR"}}) == "€5.00"
    assert text(
        {"call": "formatDate", "args": {"value": {"path": "/when"}, "format": "E MMM d, yyyy h:mm a"}}, data
    ) == ("Mon Feb 2, 2026 3:17 PM")
    plural = {
        "call": "pluralize",
        "args": {"value": {"path": "/n"}, "one": "one item", "other": "many items"},
    }
    assert text(plural, data) == "many items"
    assert text({"call": "launchMissiles"}) == ""


def test_checks_block_an_action_with_their_messages_and_patterns_run_bounded_in_time():
    surface = one(
        op("createSurface", catalogId=CATALOG),
        op(
            "updateComponents",
            components=[
                {"id": "root", "component": "Column", "children": ["mail", "zip", "go"]},
                {
                    "id": "mail",
                    "component": "TextField",
                    "label": "Email",
                    "value": {"path": "/f/mail"},
                    "checks": [
                        {
                            "condition": {"call": "email", "args": {"value": {"path": "/f/mail"}}},
                            "message": "Not an email.",
                        }
                    ],
                },
                {
                    "id": "zip",
                    "component": "TextField",
                    "label": "Zip",
                    "value": {"path": "/f/zip"},
                    "validationRegexp": "^(a+)+$",
                },
                {
                    "id": "go",
                    "component": "Button",
                    "child": "mail",
                    "action": {
                        "event": {"name": "send", "context": {"mail": {"path": "/f/mail"}, "fixed": 1}}
                    },
                    "checks": [
                        {
                            "condition": {
                                "call": "and",
                                "args": {
                                    "values": [
                                        {"call": "required", "args": {"value": {"path": "/f/mail"}}},
                                        True,
                                    ]
                                },
                            },
                            "message": "An email is needed.",
                        }
                    ],
                },
            ],
        ),
    )
    refused = a2ui.submit(surface, "go|/", {"a2ui:/f/mail": ["nope"]}, "t")
    assert refused.user_action is None and refused.problems == ["Not an email."]
    started = time.monotonic()
    hostile = a2ui.submit(
        surface, "go|/", {"a2ui:/f/mail": ["a@b.org"], "a2ui:/f/zip": ["a" * 40 + "!"]}, "t"
    )
    assert time.monotonic() - started < 2
    assert (
        hostile.problems == ["Zip: the value is not in the expected form."] or hostile.user_action is not None
    )
    sent = a2ui.submit(
        surface, "go|/", {"a2ui:/f/mail": ["a@b.org"], "a2ui:/f/zip": ["aaa"]}, "2026-01-01T00:00:00Z"
    )
    assert sent.user_action == {
        "name": "send",
        "surfaceId": "s",
        "sourceComponentId": "go",
        "timestamp": "2026-01-01T00:00:00Z",
        "context": {"mail": "a@b.org", "fixed": 1},
    }


def test_posted_values_are_read_only_for_bound_inputs_and_in_their_types():
    surface = one(
        op("createSurface", catalogId=CATALOG),
        op(
            "updateComponents",
            components=[
                {"id": "root", "component": "Column", "children": ["n", "c", "p", "s", "b"]},
                {
                    "id": "n",
                    "component": "TextField",
                    "label": "N",
                    "value": {"path": "/n"},
                    "variant": "number",
                },
                {"id": "c", "component": "CheckBox", "label": "C", "value": {"path": "/c"}},
                {
                    "id": "p",
                    "component": "ChoicePicker",
                    "options": [{"label": "A", "value": "a"}],
                    "value": {"path": "/p"},
                },
                {"id": "s", "component": "Slider", "max": 10, "value": {"path": "/s"}},
                {"id": "b", "component": "Button", "child": "n", "action": {"event": {"name": "x"}}},
            ],
        ),
        op("updateDataModel", value={"c": True}),
    )
    posted = {"a2ui:/n": ["4.5"], "a2ui:/p": ["a", "evil"], "a2ui:/s": ["7"], "a2ui:/other": ["x"]}
    submission = a2ui.submit(surface, "b|/", posted, "t")
    assert submission.values == {"/n": 4.5, "/c": False, "/p": ["a"], "/s": 7}


# --- The fold --------------------------------------------------------------------------------------


def test_activities_keep_their_place_are_replaced_by_snapshots_and_patched_by_deltas():
    content = {"a2ui_operations": form_operations("booking", {"date": "", "room": "", "guests": 2})}
    t = fold(
        [
            TextMessageStartEvent(message_id="m1", role="assistant"),
            ActivitySnapshotEvent(
                message_id="a1", activity_type="a2ui-surface", content={"status": "building"}
            ),
            ActivitySnapshotEvent(
                message_id="a1", activity_type="a2ui-surface", content=content, replace=True
            ),
            ActivityDeltaEvent(
                message_id="a1",
                activity_type="a2ui-surface",
                patch=[
                    {
                        "op": "replace",
                        "path": "/a2ui_operations/2/updateDataModel/value/booking/guests",
                        "value": 5,
                    }
                ],
            ),
            ActivitySnapshotEvent(message_id="a2", activity_type="PLAN", content={"x": 1}),
            ActivitySnapshotEvent(message_id="a2", activity_type="PLAN", content={"x": 2}, replace=False),
        ]
    )
    first, second = t.activities.values()
    assert (first.position, second.position) == (2, 5)
    assert a2ui.read_activity(first.content).surfaces[0].data["booking"]["guests"] == 5
    assert second.content == {"x": 1}
    assert t.observed.a2ui and t.observed.activities


def test_an_activity_listed_only_in_a_messages_snapshot_is_kept():
    t = fold(
        [
            MessagesSnapshotEvent(
                messages=[{"id": "act", "role": "activity", "activityType": "PLAN", "content": {"a": 1}}]
            )
        ]
    )
    assert t.activities["act"].content == {"a": 1} and not t.observed.a2ui


# --- The catalogue offered -------------------------------------------------------------------------


def test_the_catalogue_goes_in_the_context_entry_the_a2ui_middleware_reads():
    entry = a2ui.catalogue_context()
    # Byte-identical to @ag-ui/a2ui-middleware's A2UI_SCHEMA_CONTEXT_DESCRIPTION.
    assert entry["description"] == (
        "A2UI Component Schema — available components for generating UI surfaces. "
        "Use these component names and properties when creating A2UI operations."
    )
    value = json.loads(entry["value"])
    assert value["catalogId"] == CATALOG
    assert value["components"]["Button"]["required"] == ["id", "component", "child", "action"]
    # Both versions are offered, each with its catalogues.
    assert value["versions"] == {
        "v0.9": {
            "supportedCatalogIds": sorted({CATALOG, "https://a2ui.org/specification/v0_9/basic_catalog.json"})
        },
        "v1.0": {"supportedCatalogIds": [a2ui.BASIC_CATALOG_ID_1]},
    }
    assert a2ui.client_capabilities() == {
        "v0.9": {"supportedCatalogIds": [CATALOG]},
        "v1.0": {"supportedCatalogIds": [a2ui.BASIC_CATALOG_ID_1]},
    }


# --- Google's A2UI agent SDK -----------------------------------------------------------------------


def sdk_surface() -> list[dict[str, Any]]:
    """Every Basic Catalog component, built with the A2UI agent SDK's own builder."""
    label = sdk.Text(id="label", text="Send")
    name = sdk.TextField(id="name", label="Name", value=sdk.DataBinding(path="/form/name"))
    item = sdk.Text(id="item", text=sdk.DataBinding(path="title"))
    root = sdk.Column(
        id="root",
        children=[
            sdk.Row(
                id="head",
                children=[
                    sdk.Icon(id="icon", name="star"),
                    sdk.Text(id="title", text="# Title", variant="h1"),
                ],
            ),
            sdk.Image(id="image", url="https://example.org/a.png", description="A"),
            sdk.Video(id="video", url="https://example.org/a.mp4"),
            sdk.AudioPlayer(id="audio", url="https://example.org/a.mp3"),
            sdk.List(id="list", children=sdk.DynamicChildList(path="/items", componentId=item)),
            sdk.Card(id="card", child=name),
            sdk.Tabs(id="tabs", tabs=[sdk.TabItem(title="One", child=sdk.Text(id="one", text="1"))]),
            sdk.Modal(
                id="modal", trigger=sdk.Text(id="open", text="Open"), content=sdk.Text(id="inside", text="In")
            ),
            sdk.Divider(id="divider"),
            sdk.CheckBox(id="agree", label="Agree", value=sdk.DataBinding(path="/form/agree")),
            sdk.ChoicePicker(
                id="size",
                options=[sdk.ChoicePickerOption(label="S", value="s")],
                value=sdk.DataBinding(path="/form/size"),
            ),
            sdk.Slider(id="volume", max=10, value=sdk.DataBinding(path="/form/volume")),
            sdk.DateTimeInput(id="when", enableDate=True, value=sdk.DataBinding(path="/form/when")),
            sdk.Button(
                id="send",
                child=label,
                variant="primary",
                action=sdk.Action(event={"name": "submit", "context": {"name": {"path": "/form/name"}}}),
            ),
        ],
    )
    components = sdk.flatten_component_tree(root)
    return to_message_dicts(
        [
            wire.CreateSurfaceMessage(createSurface=wire.CreateSurface(surfaceId="sdk", catalogId=CATALOG)),
            wire.UpdateComponentsMessage(
                updateComponents=wire.UpdateComponents(surfaceId="sdk", components=components)
            ),
            wire.UpdateDataModelMessage(
                updateDataModel=wire.UpdateDataModel(
                    surfaceId="sdk",
                    path="/",
                    value={"items": [{"title": "a"}, {"title": "b"}], "form": {"name": "Ada"}},
                )
            ),
        ]
    )


def kinds(node: a2ui.Node) -> set[str]:
    found = {node.kind}
    for child in node.children:
        found |= kinds(child)
    for key in ("trigger", "content"):
        if isinstance(node.props.get(key), a2ui.Node):
            found |= kinds(node.props[key])
    for tab in node.props.get("tabs", ()):
        found |= kinds(tab["node"])
    return found


def test_a_surface_built_with_googles_a2ui_sdk_renders_every_component():
    activity = a2ui.read_activity({"a2ui_operations": sdk_surface()})
    assert not activity.notes
    [surface] = activity.surfaces
    tree = a2ui.render(surface)
    assert kinds(tree.root) == set(a2ui.COMPONENTS) and not tree.notes
    # The SDK names each component after its place in the tree.
    submission = a2ui.submit(surface, "root__send|/", {"a2ui:/form/name": ["Grace"]}, "t")
    assert submission.user_action["context"] == {"name": "Grace"}


@pytest.mark.parametrize(
    "operations",
    [
        form_operations("booking", {"date": "", "room": "", "guests": 2}),
        form_operations("booking", {"date": "", "room": "", "guests": 2}, warning="Too small"),
        confirmation_operations(
            "booking-confirmed",
            {
                "date": (date.today() + timedelta(days=1)).isoformat(),
                "room": "garden",
                "guests": 3,
                "notes": "",
            },
        ),
    ],
)
def test_the_booking_desks_messages_are_valid_for_googles_a2ui_sdk(operations):
    assert len(to_message_models(operations)) == len(operations)
    tree = a2ui.render(a2ui.read_activity({"a2ui_operations": operations}).surfaces[0])
    assert tree.root is not None and not tree.notes


def test_a_later_turn_updates_a_surface_an_earlier_one_created_and_a_deleted_one_is_gone():
    created = {
        "a2ui_operations": [
            op("createSurface", catalogId=CATALOG, sendDataModel=True),
            op("updateComponents", components=[{"id": "root", "component": "Text", "text": {"path": "/s"}}]),
            op("updateDataModel", value={"s": "holding"}),
        ]
    }
    later = {"a2ui_operations": [op("updateDataModel", path="/s", value="confirmed")]}
    state = a2ui.thread_surfaces([created])
    [surface] = a2ui.read_activity(later, state).surfaces
    assert a2ui.render(surface).root.props["text"] == "confirmed" and surface.send_data_model
    assert state["s"].data == {"s": "holding"}  # the earlier surface is not changed by the later turn
    gone = a2ui.thread_surfaces([created, {"a2ui_operations": [op("deleteSurface")]}])
    assert gone == {} and a2ui.read_activity(later, gone).surfaces[0].components == {}

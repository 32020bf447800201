"""A2UI v1.0 beside v0.9, from messages in v1.0's schema (built with the a2ui-agent-sdk's v1.0
models, or by hand and checked against the JSON schema it publishes): inline createSurface,
@path/@call bindings, null deleting, mixable catalogues and their composition rules, renderer-only
functions refused with INVALID_FUNCTION_CALL, openUrl only on a click, ARIA live and hidden, and
the same bounds as v0.9."""

from __future__ import annotations

from typing import Any

import pytest
from a2ui.core.basic_catalog.v1_0 import BasicCatalog
from a2ui.core.schema.v1_0 import (
    A2uiRendererActionMessage,
    A2uiRendererErrorMessage,
    CatalogDefinition,
    RendererFunctionResponseMessage,
)
from ag_ui.core import ActivitySnapshotEvent

from agents_ui.sdk import TranscriptBuilder, a2ui
from agents_ui.sdk.a2ui import catalog as catalog_module
from tests.support.a2ui_v1 import BASIC, booking_surface, op, schema_errors, valid

V09 = a2ui.BASIC_CATALOG_ID


def activity(*messages: dict[str, Any]) -> a2ui.Activity:
    return a2ui.read_activity({"a2ui_operations": list(messages)})


def surface_of(*messages: dict[str, Any]) -> a2ui.Surface:
    [surface] = activity(*messages).surfaces
    return surface


def texts(node: a2ui.Node | None) -> list[str]:
    found, stack = [], [node] if node else []
    while stack:
        current = stack.pop(0)
        if current.kind == "Text":
            found.append(current.props["text"])
        stack[:0] = current.children
    return found


def created(*components: dict[str, Any], **body: Any) -> dict[str, Any]:
    return op("createSurface", catalogId=BASIC, components=list(components), **body)


# --- Messages ---------------------------------------------------------------------------------------


def test_a_surface_made_whole_by_createsurface_renders_with_its_inline_data_and_null_deletes():
    surface = surface_of(*booking_surface())
    assert surface.version == "v1.0" and surface.supported and surface.send_data_model
    # updateDataModel's explicit null deleted the draft; the rest of the inline data model stays.
    assert surface.data == {"greeting": "A room, in v1.0", "form": {"name": ""}}
    tree = a2ui.render(surface)
    assert texts(tree.root) == ["A room, in v1.0", "Book the room"]
    greeting = tree.root.children[0]
    assert greeting.props["a11y_live"] == "polite" and greeting.props["a11y_label"] == "Greeting"
    assert tree.inputs == {"/form/name": "TextField"} and list(tree.actions) == ["send|/"]


def test_v1_binds_with_at_path_and_a_v0_9_path_object_is_only_a_literal_there():
    surface = surface_of(
        *valid(
            created(
                {
                    "id": "root",
                    "component": "Button",
                    "child": "t",
                    "action": {
                        "event": {
                            "name": "go",
                            "context": {
                                "bound": {"@path": "/x"},
                                "literal": {"path": "/x"},
                                "called": {"@call": "formatString", "args": {"value": "x is ${/x}"}},
                            },
                        }
                    },
                },
                {
                    "id": "t",
                    "component": "Text",
                    "text": {"@call": "formatString", "args": {"value": "Go ${/x}"}},
                },
                dataModel={"x": "now"},
            )
        )
    )
    assert texts(a2ui.render(surface).root) == ["Go now"]
    sent = a2ui.submit(surface, "root|/", {}, "2026-12-02T05:00:00Z")
    assert sent.user_action["context"] == {"bound": "now", "literal": {"path": "/x"}, "called": "x is now"}
    # The same binding in v0.9's form is no binding in v1.0: the schema refuses it, the page shows no value.
    wrong = op(
        "createSurface",
        catalogId=BASIC,
        components=[{"id": "root", "component": "Text", "text": {"path": "/x"}}],
    )
    assert schema_errors(wrong)


def test_v0_9_and_v1_0_surfaces_live_side_by_side_and_a_message_of_the_other_version_is_left_out():
    both = activity(
        {"version": "v0.9", "createSurface": {"surfaceId": "old", "catalogId": V09}},
        {
            "version": "v0.9",
            "updateComponents": {
                "surfaceId": "old",
                "components": [{"id": "root", "component": "Text", "text": {"path": "/w"}}],
            },
        },
        {"version": "v0.9", "updateDataModel": {"surfaceId": "old", "value": {"w": "v0.9 words"}}},
        *booking_surface("new"),
        {"version": "v0.9", "updateDataModel": {"surfaceId": "new", "path": "/greeting", "value": "hijack"}},
    )
    old, new = both.surfaces
    assert (old.version, new.version) == ("v0.9", "v1.0")
    assert texts(a2ui.render(old).root) == ["v0.9 words"]
    assert new.data["greeting"] == "A room, in v1.0"
    assert any("is A2UI v0.9, but 'new' is v1.0" in note for note in both.notes)


def test_v1_requires_create_before_update_and_a_value_on_updatedatamodel():
    orphan = activity(op("updateComponents", components=[{"id": "root", "component": "Text", "text": "x"}]))
    assert not orphan.surfaces and "never created" in orphan.notes[0]
    surface = surface_of(
        *valid(
            created({"id": "root", "component": "Text", "text": {"@path": "/a/b"}}, dataModel={"a": {"b": 1}})
        ),
        {"version": "v1.0", "updateDataModel": {"surfaceId": "s", "path": "/a"}},  # no value: not v1.0
    )
    assert surface.data == {"a": {"b": 1}} and "v1.0 requires one" in surface.notes[0]
    whole = surface_of(
        *valid(
            created({"id": "root", "component": "Text", "text": "x"}, dataModel={"a": 1}),
            op("updateDataModel", value=None),
        ),
    )
    assert whole.data == {}


# --- Functions: who may call them --------------------------------------------------------------------


def test_the_function_table_is_the_sdks_basic_catalog_and_every_function_is_renderer_only():
    sdk = BasicCatalog()
    assert {
        name: (f.allowed_callers, bool(f.requires_user_activation))
        for name, f in sdk.functions.items()
        if not name.startswith("@")  # system functions: @index, below
    } == {name: rule for name, rule in a2ui.FUNCTIONS.items()}
    assert {c.name for c in sdk.components.values()} == set(a2ui.COMPONENTS)
    assert sdk.catalog_id == BASIC and list(a2ui.CATALOGS_1) == [BASIC]


@pytest.mark.parametrize("name", ["formatString", "openUrl"])
def test_an_agents_callrendererfunction_is_refused_with_invalid_function_call(name):
    call = {
        "@call": name,
        "args": {"value": "x"} if name != "openUrl" else {"url": "https://example.com"},
        "catalogId": BASIC,
    }
    message = valid(
        {"version": "v1.0", "callRendererFunction": {"functionCallId": "call-1", "callFunction": call}}
    )
    seen = activity(*message)
    [reply] = seen.responses
    RendererFunctionResponseMessage.model_validate(reply)  # in v1.0's renderer-to-agent schema
    response = reply["rendererFunctionResponse"]
    assert response["functionCallId"] == "call-1"
    assert response["error"]["code"] == "INVALID_FUNCTION_CALL"
    assert "allowedCallers is rendererOnly" in response["error"]["message"]
    if name == "openUrl":
        assert "requires user activation" in response["error"]["message"]
    assert any(f"run {name!r} itself: refused" in note for note in seen.notes)
    assert a2ui.replies([{"a2ui_operations": message}]) == [reply]


def test_a_call_of_an_unknown_catalogue_or_function_is_refused_too():
    unknown = activity(
        {
            "version": "v1.0",
            "callRendererFunction": {
                "functionCallId": "a",
                "callFunction": {"@call": "x", "catalogId": "urn:other"},
            },
        },
        {
            "version": "v1.0",
            "callRendererFunction": {
                "functionCallId": "b",
                "callFunction": {"@call": "launch", "catalogId": BASIC},
            },
        },
        {"version": "v1.0", "callRendererFunction": {"functionCallId": "c"}},
    )
    messages = [r["rendererFunctionResponse"]["error"]["message"] for r in unknown.responses]
    assert messages == [
        "Catalog not found: urn:other",
        f"Function 'launch' is not in catalog {BASIC}.",
        "Malformed callRendererFunction.",
    ]


def test_open_url_runs_only_from_a_click_never_while_drawing():
    surface = surface_of(
        *valid(
            created(
                {"id": "root", "component": "Column", "children": ["link", "sneaky", "evil"]},
                {
                    "id": "link",
                    "component": "Button",
                    "child": "l",
                    "action": {
                        "functionCall": {"@call": "openUrl", "args": {"url": "https://example.com/a"}}
                    },
                },
                {"id": "l", "component": "Text", "text": "Open"},
                {
                    "id": "sneaky",
                    "component": "Text",
                    "text": {"@call": "openUrl", "args": {"url": "https://example.com/b"}},
                },
                {
                    "id": "evil",
                    "component": "Button",
                    "child": "l",
                    "action": {"functionCall": {"@call": "openUrl", "args": {"url": "javascript:alert(1)"}}},
                },
            )
        )
    )
    tree = a2ui.render(surface)
    link, sneaky, evil = tree.root.children
    assert link.props["href"] == "https://example.com/a"  # a link the person follows: a click
    assert sneaky.props["text"] == "" and any("runs only when a person clicks" in n for n in tree.notes)
    assert evil.props["href"] == "" and any("not http(s)" in n for n in tree.notes)


# --- Catalogues: mixed, and their composition rules --------------------------------------------------

CARDS = "https://example.com/a2ui/cards.json"


@pytest.fixture
def cards_catalogue(monkeypatch):
    """A second catalogue beside the Basic Catalog (its components drawn with the same templates),
    with composition rules, declared in v1.0's catalogue schema."""
    definition = CatalogDefinition.model_validate(
        {
            "catalogId": CARDS,
            "protocolVersion": "1.0",
            "components": {
                "Card": {"allowedChildren": ["Text"]},
                "Text": {"allowedParents": ["Card"]},
            },
        }
    )
    spec = a2ui.Catalog(
        CARDS,
        frozenset(definition.components),
        {},
        allowed_parents={
            k: tuple(v.allowed_parents) for k, v in definition.components.items() if v.allowed_parents
        },
        allowed_children={
            k: tuple(v.allowed_children) for k, v in definition.components.items() if v.allowed_children
        },
    )
    monkeypatch.setitem(catalog_module.CATALOGS_1, CARDS, spec)
    return spec


def test_components_of_two_catalogues_mix_in_one_surface_under_their_rules(cards_catalogue):
    messages = valid(
        created(
            {"id": "root", "component": "Column", "children": ["card", "loose", "bad-card"]},
            {"id": "card", "component": "Card", "catalogId": CARDS, "child": "inside"},
            {"id": "inside", "component": "Text", "catalogId": CARDS, "text": "in a card"},
            {"id": "loose", "component": "Text", "catalogId": CARDS, "text": "outside any card"},
            {"id": "bad-card", "component": "Card", "catalogId": CARDS, "child": "basic"},
            {"id": "basic", "component": "Divider"},
        )
    )
    tree = a2ui.render(surface_of(*messages))
    card, loose, bad = tree.root.children
    assert card.kind == "Card" and texts(card) == ["in a card"]
    assert loose.kind == "refused" and bad.children[0].kind == "refused"
    codes = [e["error"]["code"] for e in tree.errors]
    assert codes == ["UNALLOWED_PARENT", "UNALLOWED_CHILD"]
    for error in tree.errors:
        A2uiRendererErrorMessage.model_validate(error)
    assert tree.errors[0]["error"]["path"] == "/components/loose"


def test_a_component_of_a_catalogue_not_rendered_is_shown_as_unknown_and_reported():
    messages = valid(
        op(
            "createSurface",
            components=[  # no default catalogue: each component names its own
                {"id": "root", "component": "Column", "catalogId": BASIC, "children": ["x", "y"]},
                {"id": "x", "component": "Text", "catalogId": "https://example.com/other.json", "text": "?"},
                {"id": "y", "component": "Text", "text": "no catalogue at all"},
            ],
        )
    )
    surface = surface_of(*messages)
    assert surface.supported
    tree = a2ui.render(surface)
    assert [n.kind for n in tree.root.children] == ["unknown", "unknown"]
    assert [e["error"]["code"] for e in tree.errors] == ["VALIDATION_FAILED", "VALIDATION_FAILED"]
    assert "https://example.com/other.json" in tree.errors[0]["error"]["message"]


def test_the_reserved_surface_container_is_never_a_child():
    messages = [
        created({"id": "root", "component": "Column", "children": ["s"]}, {"id": "s", "component": "Surface"})
    ]
    assert schema_errors(messages[0])  # the schema forbids it; a page meeting it refuses it
    tree = a2ui.render(surface_of(*messages))
    assert tree.root.children[0].kind == "refused"
    assert tree.errors[0]["error"]["code"] == "UNALLOWED_PARENT"


# --- ARIA, actions, bounds ------------------------------------------------------------------------------


def test_aria_hidden_hides_what_holds_nothing_to_use_and_never_a_control():
    tree = a2ui.render(
        surface_of(
            *valid(
                created(
                    {"id": "root", "component": "Column", "children": ["deco", "b"]},
                    {
                        "id": "deco",
                        "component": "Icon",
                        "name": "star",
                        "accessibility": {"hidden": {"@path": "/quiet"}},
                    },
                    {
                        "id": "b",
                        "component": "Button",
                        "child": "t",
                        "accessibility": {"hidden": True, "live": "assertive"},
                        "action": {"event": {"name": "go"}},
                    },
                    {"id": "t", "component": "Text", "text": "Go"},
                    dataModel={"quiet": True},
                )
            )
        )
    )
    deco, button = tree.root.children
    assert deco.props["a11y_hidden"] is True
    assert "a11y_hidden" not in button.props and button.props["a11y_live"] == "assertive"
    assert any("is not hidden from screen readers" in n for n in tree.notes)


def test_an_action_on_a_v1_surface_is_a_v1_action_with_its_user_message():
    messages = booking_surface()
    messages[0]["createSurface"]["components"][3]["action"]["event"]["userMessage"] = {
        "@call": "formatString",
        "args": {"value": "Book for ${/form/name}"},
    }
    surface = surface_of(*valid(*messages))
    sent = a2ui.submit(surface, "send|/", {"a2ui:/form/name": ["Ada"]}, "2026-12-02T05:00:00Z")
    action = a2ui.action_messages(sent.user_action, surface.version)[0]
    A2uiRendererActionMessage.model_validate(action)
    assert action["version"] == "v1.0"
    assert action["action"]["context"] == {"name": "Ada", "room": "focus"}
    assert action["action"]["userMessage"] == "Book for Ada"
    assert sent.data_model == {"greeting": "A room, in v1.0", "form": {"name": "Ada"}}


def test_the_index_system_function_numbers_a_list_templates_items():
    surface = surface_of(
        *valid(
            created(
                {"id": "root", "component": "List", "children": {"path": "/items", "componentId": "item"}},
                {
                    "id": "item",
                    "component": "Text",
                    "text": {
                        "@call": "formatString",
                        "args": {"value": {"@call": "@index", "args": {"offset": 1}}},
                    },
                },
                dataModel={"items": ["a", "b"]},
            )
        )
    )
    assert texts(a2ui.render(surface).root) == ["1", "2"]


def test_v1_surfaces_keep_v0_9s_bounds():
    deep = [{"id": f"d{i}", "component": "Column", "children": [f"d{i + 1}"]} for i in range(60)]
    messages = [
        op(
            "createSurface",
            catalogId=BASIC,
            components=[
                {
                    "id": "root",
                    "component": "Column",
                    "children": ["img", "list", "d0", *[f"x{i}" for i in range(150)]],
                },
                {"id": "img", "component": "Image", "url": "javascript:alert(1)"},
                {"id": "list", "component": "List", "children": {"path": "/items", "componentId": "item"}},
                {"id": "item", "component": "Text", "text": {"@path": "n"}},
                *deep,
            ],
            dataModel={"items": [{"n": str(i)} for i in range(5000)]},
        ),
    ]
    valid(*messages)
    tree = a2ui.render(surface_of(*messages))
    notes = " ".join(tree.notes)
    for said in ("not http(s)", "the first 60 are shown", "levels deep", "the first 100 are shown"):
        assert said in notes, said
    many = [
        op(
            "createSurface",
            catalogId=BASIC,
            components=[
                {"id": f"c{i}", "component": "Text", "text": "x"} for i in range(a2ui.MAX_COMPONENTS + 50)
            ],
        )
    ]
    assert len(surface_of(*many).components) == a2ui.MAX_COMPONENTS


def test_the_next_run_owes_the_agent_the_replies_of_the_last_runs_surfaces():
    def run(*messages):
        builder = TranscriptBuilder()
        builder.apply(
            ActivitySnapshotEvent(
                message_id="a", activity_type="a2ui-surface", content={"a2ui_operations": list(messages)}
            )
        )
        return builder.transcript

    first = run(*booking_surface("s"))
    second = run(
        op(
            "updateComponents",
            components=[{"id": "root", "component": "Text", "catalogId": "urn:x", "text": "?"}],
        ),
        {
            "version": "v1.0",
            "callRendererFunction": {
                "functionCallId": "f",
                "callFunction": {"@call": "not", "catalogId": BASIC},
            },
        },
    )
    assert a2ui.thread_replies([first]) == []
    replies = a2ui.thread_replies([first, second])  # the surface goes on from the first run
    assert [next(iter(set(r) - {"version"})) for r in replies] == ["rendererFunctionResponse", "error"]

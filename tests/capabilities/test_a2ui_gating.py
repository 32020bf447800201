"""Generative UI (A2UI) in the capability model: read from a custom capability, an A2A extension, a
negotiated output module or runs that showed it, each with its provenance; decisions read only the
profile, and the explain view says why."""

from __future__ import annotations

from typing import Any

import pytest

from agents_ui.capabilities import Observations, read_agui, read_policy
from agents_ui.capabilities.provenance import Kind, Provenance
from agents_ui.capabilities.readers.a2ui import from_extensions, read_server_capabilities
from agents_ui.decisions import decide
from agents_ui.sdk.external import policy as ext
from agents_ui.sdk.external.policy import Negotiated, PublicExternalAgentPolicy
from agents_ui.sdk.folding import fold

CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
CATALOG_1 = "https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"


def reasons(plan: Any) -> str:
    return " | ".join(reason.text for reason in plan["generative-ui"].reasons)


@pytest.mark.parametrize(
    ("raw", "speaks", "catalogs"),
    [
        ({"v0.9": {"supportedCatalogIds": [CATALOG], "acceptsInlineCatalogs": False}}, True, (CATALOG,)),
        ({"v0.9": {}}, True, ()),
        ({"v0.8": {"supportedCatalogIds": ["x"]}}, False, ()),
        ({"v1.0": {"supportedCatalogIds": [CATALOG_1]}}, True, (CATALOG_1,)),
        (
            {
                "v0.9": {"supportedCatalogIds": [CATALOG]},
                "v1.0": {"supportedCatalogIds": [CATALOG_1, CATALOG]},
            },
            True,
            (CATALOG, CATALOG_1),
        ),
        (True, True, ()),
        (False, False, ()),
        ({}, None, ()),
        ("yes", None, ()),
    ],
)
def test_a2uis_server_capabilities_are_read(raw, speaks, catalogs):
    assert read_server_capabilities(raw) == (speaks, catalogs)


def test_a_custom_capability_declares_it_with_its_provenance():
    profile = read_agui({"custom": {"a2ui": {"v0.9": {"supportedCatalogIds": [CATALOG]}}}})
    fact = profile.generative_ui.a2ui
    assert fact.value is True and fact.origin.path == "custom.a2ui" and fact.origin.kind is Kind.DECLARED
    plan = decide(profile=profile)
    assert plan["generative-ui"].shown and plan["generative-ui"].details.advertise
    assert plan["generative-ui"].details.catalogs == (CATALOG,)
    assert "custom.a2ui declares A2UI v0.9" in reasons(plan)


def test_not_declared_is_hidden_until_a_run_shows_a2ui_then_it_is_observed():
    plan = decide(capabilities={"transport": {"streaming": True}})
    assert plan["generative-ui"].hidden and "Hidden until a run shows it" in reasons(plan)
    seen = decide(capabilities={"transport": {"streaming": True}}, observed=Observations(a2ui_seen=True))
    assert seen[
        "generative-ui"
    ].shown and "sent A2UI surfaces in a run although it was never declared" in reasons(seen)
    said_no = decide(capabilities={"custom": {"a2ui": False}}, observed=Observations(a2ui_seen=True))
    assert said_no["generative-ui"].shown and "declared unsupported: what the agent does wins" in reasons(
        said_no
    )


def test_the_admin_can_hide_it_and_a_shape_without_a_place_says_so():
    plan = decide(capabilities={"custom": {"a2ui": True}}, overrides={"generative-ui": "hide"})
    assert plan["generative-ui"].hidden and "forced this control off" in reasons(plan)
    assert "no field for generative UI" in reasons(decide(capabilities={"features": {"interrupts": True}}))


def test_an_a2a_extension_declares_it():
    ui = from_extensions(
        [{"uri": "https://a2ui.org/a2a-extension/a2ui/v0.9", "params": {"supportedCatalogIds": [CATALOG]}}],
        "A2A agent card",
    )
    assert ui.a2ui.value is True and ui.catalogs.value == (CATALOG,)
    uri = "https://a2ui.org/a2a-extension/a2ui/v0.9"
    path = "capabilities.extensions[0]"
    assert ui.a2ui.origin == Provenance("A2A agent card", path, uri, Kind.DECLARED, "A2UI's A2A extension")
    assert from_extensions([{"uri": "https://example.org/other"}], "A2A agent card").a2ui.value is None
    v1 = from_extensions(
        [{"uri": "https://a2ui.org/a2a-extension/a2ui/v1.0", "params": {"supportedCatalogIds": [CATALOG_1]}}],
        "A2A agent card",
    )
    assert v1.a2ui.value is True and v1.catalogs.value == (CATALOG_1,)


POLICY = {"outputModuleTypes": ["citation", "a2ui"], "capabilities": {"messages": True}}


def test_an_external_agent_speaks_a2ui_once_the_a2ui_module_is_negotiated():
    policy = PublicExternalAgentPolicy.model_validate(POLICY)
    before = decide(policy=policy)
    assert before["generative-ui"].hidden
    granted = Negotiated.model_validate(
        {"streamProfile": "runtime-standard-v1", "outputModuleTypes": ["a2ui"]}
    )
    plan = decide(policy=policy, negotiated=granted)
    fact = read_policy(policy, granted).generative_ui.a2ui
    assert fact.value is True and fact.origin.kind is Kind.NEGOTIATED
    assert plan["generative-ui"].shown
    refused = Negotiated.model_validate(
        {"streamProfile": "runtime-standard-v1", "outputModuleTypes": ["citation"]}
    )
    assert decide(policy=policy, negotiated=refused)["generative-ui"].hidden
    without = PublicExternalAgentPolicy.model_validate({**POLICY, "outputModuleTypes": ["citation"]})
    assert read_policy(without).generative_ui.a2ui.value is False


def test_an_a2ui_module_of_an_external_run_is_an_activity():
    content = {"a2ui_operations": [{"version": "v0.9", "deleteSurface": {"surfaceId": "s"}}]}
    t = fold([ext.ModuleEvent(type="a2ui", data=content), ext.ModuleEvent(type="table", data={"rows": []})])
    [record] = t.activities.values()
    assert record.activity_type == "a2ui-surface" and record.content == content
    assert t.modules == [("table", {"rows": []})] and t.observed.a2ui


@pytest.mark.parametrize(
    "custom",
    [
        {"a2ui": {"v0.9": {"supportedCatalogIds": [CATALOG]}}},
        # The object's own name in A2UI v0.9's specification (a2ui-agent-sdk's A2uiServerCapabilities).
        {
            "a2uiServerCapabilities": {
                "v0.9": {"supportedCatalogIds": [CATALOG], "acceptsInlineCatalogs": False}
            }
        },
        # A2UI 1.0 calls the same object a2uiAgentCapabilities; its v0.9 entry is what is spoken here.
        {"a2uiAgentCapabilities": {"v0.9": {"supportedCatalogIds": [CATALOG]}, "v1.0": {}}},
    ],
    ids=["a2ui", "a2uiServerCapabilities", "a2uiAgentCapabilities"],
)
def test_a2ui_is_read_under_every_name_agents_give_it_and_the_catalogue_is_offered(custom):
    (name,) = custom
    profile = read_agui({"custom": custom})
    fact = profile.generative_ui.a2ui
    assert fact.value is True and fact.origin.path == f"custom.{name}"
    plan = decide(profile=profile)
    assert plan["generative-ui"].shown and plan["generative-ui"].details.advertise
    assert plan["generative-ui"].details.catalogs == (CATALOG,)
    assert f"custom.{name} declares A2UI v0.9" in reasons(plan)


def test_a2ui_under_its_spec_name_for_another_version_only_is_not_spoken_here():
    profile = read_agui({"custom": {"a2uiServerCapabilities": {"v0.8": {"supportedCatalogIds": ["x"]}}}})
    assert profile.generative_ui.a2ui.value is False
    assert profile.generative_ui.a2ui.origin.path == "custom.a2uiServerCapabilities"

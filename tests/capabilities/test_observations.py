"""One record of what runs have shown: from a run's fold, from an endpoint's stored JSON, into facts."""

from __future__ import annotations

from django.utils import timezone

from agents_ui.capabilities import Kind, Observations, read_agui
from agents_ui.capabilities.observations import MAX_SUBAGENT_NAMES
from agents_ui.decisions import decide
from agents_ui.endpoints.catalogue import entry_for
from agents_ui.endpoints.discovery import Discovery
from agents_ui.models import AgentEndpoint
from agents_ui.sdk.transcript import Observed


def test_a_run_fold_gives_the_record() -> None:
    fold = Observed(reasoning=True, state_deltas=True, approvals=True)

    seen = Observations.of(fold)

    assert seen == Observations(reasoning_seen=True, state_seen=True, approvals_seen=True)


def test_the_stored_json_round_trips_and_keeps_its_old_keys() -> None:
    stored = {"reasoning": True, "interrupts": True, "state": True}

    seen = Observations.from_json(stored)

    assert seen == Observations(reasoning_seen=True, interrupts_seen=True, state_seen=True)
    assert seen.to_json() == stored
    assert Observations.from_json(None) == Observations()
    assert Observations.from_json({"reasoning": "yes"}) == Observations()


def test_evidence_only_grows() -> None:
    stored = Observations(reasoning_seen=True)
    run = Observations(state_seen=True)

    assert stored | run == Observations(reasoning_seen=True, state_seen=True)
    assert (stored | run).covers(stored)
    assert not stored.covers(run)


def test_observations_fold_into_the_profile_as_observed_facts() -> None:
    profile = read_agui({}).with_observations(Observations(reasoning_seen=True))

    fact = profile.seen.reasoning
    assert fact.value is True
    assert [(p.source, p.path, p.raw, p.kind) for p in fact.provenance] == [
        ("runs", "reasoning_seen", True, Kind.OBSERVED)
    ]
    assert not profile.seen.state.sayable  # not seen says nothing


def test_sub_agent_names_round_trip_merge_and_stay_bounded() -> None:
    stored = {"subagents": True, "subagent_names": ["researcher", 7, "", "writer"]}

    seen = Observations.from_json(stored)

    assert seen.subagent_names == ("researcher", "writer")
    assert seen.to_json() == {"subagents": True, "subagent_names": ["researcher", "writer"]}
    merged = seen | Observations.of(Observed(subagents=True), ["writer", "critic"])
    assert merged.subagent_names == ("researcher", "writer", "critic")
    assert not seen.covers(merged) and merged.covers(seen)
    many = Observations.of(Observed(), [f"agent-{i}" for i in range(80)] + ["x" * 500])
    assert len(many.subagent_names) == MAX_SUBAGENT_NAMES


def test_sub_agent_names_fold_into_the_profile_as_an_observed_fact() -> None:
    profile = read_agui({}).with_observations(Observations(subagent_names=("researcher",)))

    fact = profile.seen.subagents
    assert [item.name for item in fact.value] == ["researcher"]
    assert [(p.source, p.path, p.raw, p.kind) for p in fact.provenance] == [
        ("runs", "subagent_names", ["researcher"], Kind.OBSERVED)
    ]
    assert not read_agui({}).seen.subagents.sayable


def test_sub_agents_runs_named_count_in_the_plan_and_the_catalogue_badge() -> None:
    # The interop LangGraph agent declares nothing about sub-agents; its runs showed `researcher`.
    stored = {"subagents": True, "subagent_names": ["researcher"]}

    plan = decide(capabilities={}, observed=Observations.from_json(stored))

    control = plan["subagents"]
    assert control.visible and [item.name for item in control.details.subagents] == ["researcher"]
    [reason] = [reason for reason in control.reasons if reason.source == "observed"]
    assert "researcher" in reason.text and reason.provenance[0].kind == Kind.OBSERVED
    discovery = Discovery(1, "agui", "declared", "", timezone.now(), raw={})
    badges = [badge.label for badge in entry_for(AgentEndpoint(), discovery, plan).badges]
    assert "1 sub-agent" in badges


def test_declared_and_observed_sub_agents_are_counted_once() -> None:
    declared = {"multiAgent": {"supported": True, "subagents": [{"name": "researcher"}, {"name": "writer"}]}}

    plan = decide(capabilities=declared, observed=Observations(subagent_names=("researcher", "critic")))

    assert [item.name for item in plan["subagents"].details.subagents] == ["researcher", "writer", "critic"]
    assert not decide(capabilities={})["subagents"].visible  # nothing seen, nothing declared

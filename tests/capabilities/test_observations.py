"""One record of what runs have shown: from a run's fold, from an endpoint's stored JSON, into facts."""

from __future__ import annotations

from agents_ui.capabilities import Kind, Observations, read_agui
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

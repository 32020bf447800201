"""Shared state under hostile patches: bounded size, depth, operations and work; clear notes; from {}."""

from __future__ import annotations

import copy
import json
import random

import jsonpatch
from ag_ui.core import ActivityDeltaEvent, ActivitySnapshotEvent, StateDeltaEvent, StateSnapshotEvent

from agents_ui.sdk import Transcript, TranscriptBuilder, fold
from agents_ui.sdk.limits import MAX_JSON_DEPTH, MAX_PATCH_OPERATIONS, MAX_STATE_BYTES
from agents_ui.sdk.state import StateKeeper

GREW = "The agent's state grew past 1 MB; showing the last state within the limit."


def serialised(value) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))


def doubling(times: int) -> list[StateDeltaEvent]:
    """Each event copies the whole state into itself: a few bytes that double the document."""
    return [StateDeltaEvent(delta=[{"op": "copy", "from": "", "path": f"/c{i}"}]) for i in range(times)]


def test_copy_amplification_stops_at_the_bound_and_keeps_the_last_good_state():
    events = [StateSnapshotEvent(snapshot={"text": "x" * 1000}), *doubling(12)]
    t = fold(events)
    assert serialised(t.state) <= MAX_STATE_BYTES
    # The last good state is the largest doubling within the bound: one more would pass it.
    copies = len(t.state) - 1
    assert set(t.state) == {"text", *(f"c{i}" for i in range(copies))}
    assert serialised(t.state) * 2 > MAX_STATE_BYTES
    assert t.errors == [GREW]


def test_past_the_bound_later_patches_wait_for_a_snapshot():
    events = [
        StateSnapshotEvent(snapshot={"text": "x" * 1000}),
        *doubling(12),
        StateDeltaEvent(delta=[{"op": "add", "path": "/after", "value": 1}]),
    ]
    builder = TranscriptBuilder()
    builder.apply_all(events)
    t = builder.transcript
    assert "after" not in t.state and t.errors == [GREW]
    builder.apply(StateSnapshotEvent(snapshot={"fresh": True}))
    builder.apply(StateDeltaEvent(delta=[{"op": "add", "path": "/after", "value": 1}]))
    assert t.state == {"fresh": True, "after": 1}
    assert t.errors == [GREW]


def test_a_snapshot_past_the_bound_keeps_the_last_state():
    t = fold(
        [
            StateSnapshotEvent(snapshot={"small": 1}),
            StateSnapshotEvent(snapshot={"big": "x" * MAX_STATE_BYTES}),
        ]
    )
    assert t.state == {"small": 1} and t.errors == [GREW]


def test_a_patch_of_too_many_operations_is_left_out():
    ops = [{"op": "add", "path": f"/k{i}", "value": i} for i in range(MAX_PATCH_OPERATIONS + 1)]
    t = fold([StateSnapshotEvent(snapshot={"a": 1}), StateDeltaEvent(delta=ops)])
    assert t.state == {"a": 1}
    assert t.errors == [
        "The agent sent a state update of more than 1,000 operations; "
        "showing the last state within the limit."
    ]


def test_a_delta_before_any_snapshot_patches_from_an_empty_state():
    t = fold([StateDeltaEvent(delta=[{"op": "add", "path": "/steps", "value": ["one"]}])])
    assert t.state == {"steps": ["one"]}
    assert t.errors == []


def test_a_delta_patches_the_state_the_fold_was_seeded_with():
    builder = TranscriptBuilder(Transcript(state={"steps": ["one"]}))
    builder.apply(StateDeltaEvent(delta=[{"op": "add", "path": "/steps/-", "value": "two"}]))
    assert builder.transcript.state == {"steps": ["one", "two"]}


def test_a_patch_that_cannot_apply_says_why_in_words_never_python():
    t = fold(
        [
            StateSnapshotEvent(snapshot=["not", "an", "object"]),
            StateDeltaEvent(delta=[{"op": "replace", "path": "/missing/deep", "value": 1}]),
            StateDeltaEvent(delta=[{"op": "add", "path": "/5", "value": 1}]),
            StateDeltaEvent(delta=[{"op": "test", "path": "/0", "value": "yes"}]),
            StateDeltaEvent(delta=[{"op": "remove", "path": "/9"}]),
        ]
    )
    assert t.state == ["not", "an", "object"]
    assert t.errors == [
        "The agent's state update was left out: the JSON Patch could not be applied (operation 1, replace "
        "at '/missing/deep': that path does not exist). Showing the last good state.",
        "The agent's state update was left out: the JSON Patch could not be applied (operation 1, add "
        "at '/5': that path does not exist). Showing the last good state.",
        "The agent's state update was left out: the JSON Patch could not be applied (operation 1, test "
        "at '/0': the test did not match). Showing the last good state.",
        "Further state updates that could not be applied were left out too.",
    ]
    assert not any("<class" in e or "Document" in e or "NoneType" in e for e in t.errors)


def test_a_failed_patch_is_undone_in_place_without_copying_the_document():
    state = {"items": [1, 2, 3], "meta": {"n": 1}}
    keeper = StateKeeper()
    document = keeper.snapshot(None, state, [])
    notes: list[str] = []
    ops = [
        {"op": "remove", "path": "/items/0"},
        {"op": "move", "from": "/meta/n", "path": "/items/0"},
        {"op": "copy", "from": "/items", "path": "/meta/copy"},
        {"op": "replace", "path": "/does/not/exist", "value": 0},
    ]
    assert keeper.patch(document, ops, notes) is document
    assert document == state and len(notes) == 1


def test_patching_a_large_state_does_not_reread_it_for_every_event():
    keeper = StateKeeper()
    document = keeper.snapshot(None, {"log": ["x" * 100] * 5000, "counter": 0}, [])
    for i in range(1000):
        document = keeper.patch(document, [{"op": "replace", "path": "/counter", "value": i}], [])
        document = keeper.patch(document, [{"op": "add", "path": "/log/-", "value": "y"}], [])
    assert document["counter"] == 999 and len(document["log"]) == 6000
    # Only the replaced counters were read back: a few kilobytes, not the half-megabyte document.
    assert keeper.work < 10_000


def test_copies_that_cost_no_bytes_are_bounded_by_the_work_of_a_run():
    keeper = StateKeeper(max_work_bytes=1_000_000)
    notes: list[str] = []
    document = keeper.snapshot(None, {"a": "x" * 100_000, "b": None}, notes)
    for _ in range(20):
        document = keeper.patch(document, [{"op": "copy", "from": "/a", "path": "/b"}], notes)
    assert notes == [
        "The agent's state updates took more work than one run allows; "
        "showing the last state within the limit."
    ]
    assert serialised(document) < 300_000


def test_the_state_never_nests_past_the_bound():
    deep_path = "/" + "/".join(["a"] * (MAX_JSON_DEPTH + 1))
    t = fold([StateDeltaEvent(delta=[{"op": "add", "path": deep_path, "value": 1}])])
    assert t.state is None and "nest more than 64 levels deep" in t.errors[0]
    # Copying a nested value into itself, deeper each time, stops at the bound too.
    nested: dict = {}
    for _ in range(30):
        nested = {"n": nested}
    events = [StateSnapshotEvent(snapshot={"n": nested})]
    events += [
        StateDeltaEvent(delta=[{"op": "copy", "from": "/n", "path": "/n" * (i + 2)}]) for i in range(10)
    ]
    t = fold(events)
    assert "nest more than 64 levels deep" in t.errors[-1]
    text = json.dumps(t.state)
    assert text.count("{") < 200


def test_activity_content_is_bounded_the_same_way():
    events = [
        ActivitySnapshotEvent(message_id="a1", activity_type="plan", content={"text": "x" * 1000}),
        *[
            ActivityDeltaEvent(
                message_id="a1", activity_type="plan", patch=[{"op": "copy", "from": "", "path": f"/c{i}"}]
            )
            for i in range(12)
        ],
    ]
    t = fold(events)
    assert serialised(t.activities["a1"].content) <= MAX_STATE_BYTES
    assert t.errors == ["The agent's activity grew past 1 MB; showing the last activity within the limit."]


def test_patches_apply_as_rfc_6902_says():
    """Against the reference implementation, on random documents and patches (a fixed seed)."""
    rng = random.Random(6902)

    def value(depth: int = 0):
        roll = rng.random()
        if depth > 2 or roll < 0.4:
            return rng.choice([1, 2.5, "x", True, None, 0, False])
        if roll < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice("abc"): value(depth + 1) for _ in range(rng.randint(0, 3))}

    def paths(doc, prefix=""):
        found = [prefix]
        items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
        for key, child in items:
            found += paths(child, f"{prefix}/{key}")
        return found

    for _ in range(2000):
        doc = {"a": value(), "b": [value(), value()], "c": {"d": value()}}
        ops = []
        for _ in range(rng.randint(1, 4)):
            where = [*paths(doc), "/zz", "/b/-", "/b/7", "/a/x/y", "/b/01"]
            op = {
                "op": rng.choice(["add", "remove", "replace", "move", "copy", "test"]),
                "path": rng.choice(where),
            }
            if op["op"] in ("add", "replace", "test"):
                op["value"] = value()
            if op["op"] in ("move", "copy"):
                op["from"] = rng.choice(where)
            ops.append(op)
        try:
            expected, applies = jsonpatch.apply_patch(copy.deepcopy(doc), copy.deepcopy(ops)), True
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException):
            expected, applies = doc, False
        keeper, notes = StateKeeper(), []
        mine = copy.deepcopy(doc)
        result = keeper.patch(mine, copy.deepcopy(ops), notes)
        assert (result, not notes) == (expected, applies), (doc, ops)
        if not applies:
            assert mine == doc, (doc, ops)
        else:
            assert keeper._size == serialised(result), (doc, ops)

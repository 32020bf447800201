"""The diff between two declarations: field by field, items by name, breaking where a control goes away."""

from __future__ import annotations

import copy

from agents_ui.snapshot_diff import Declaration, diff_declarations, field_changes, show


def tool(name: str, description: str = "Does a thing.") -> dict:
    return {"name": name, "description": description, "parameters": {"type": "object", "properties": {}}}


AGUI = {
    "identity": {"name": "Toolsmith", "version": "1.0"},
    "tools": {"supported": True, "items": [tool("search"), tool("fetch")], "parallelCalls": True},
    "reasoning": {"supported": True, "streaming": True},
    "multimodal": {"input": {"pdf": True, "image": True}},
    "execution": {"maxIterations": 5},
}

POLICY = {
    "identity": {"name": "Support"},
    "capabilities": {"messages": True, "files": True, "approvals": True, "interactions": True},
    "filePolicy": {
        "upload": True,
        "read": True,
        "maxUploadBytes": 10485760,
        "allowedMimeTypes": ["application/pdf"],
    },
    "domainTools": [
        {
            "publicName": "lookup_order",
            "description": "Find an order",
            "operation": {
                "kind": "query",
                "sideEffectClass": "read",
                "idempotency": "idempotent",
                "approvalRequired": False,
            },
            "status": "active",
        },
        {
            "publicName": "refund",
            "description": "Refund an order",
            "operation": {
                "kind": "command",
                "sideEffectClass": "financial",
                "idempotency": "non_idempotent",
                "approvalRequired": True,
            },
            "status": "active",
        },
    ],
}


def agui(payload: dict | None, status: str = "declared") -> Declaration:
    return Declaration("agui", status, payload)


def external(payload: dict | None, status: str = "declared") -> Declaration:
    return Declaration("external", status, payload)


def changed(base: dict, edit) -> dict:
    copied = copy.deepcopy(base)
    edit(copied)
    return copied


def by_path(diff) -> dict:
    return {change.path: change for change in diff.changes}


def test_the_same_declaration_is_unchanged():
    diff = diff_declarations(agui(AGUI), agui(copy.deepcopy(AGUI)))
    assert diff.unchanged
    assert not diff.breaking


def test_tools_are_compared_by_name_not_by_position():
    new = changed(AGUI, lambda d: d["tools"].update(items=[tool("fetch"), tool("summarize")]))
    diff = diff_declarations(agui(AGUI), agui(new))
    changes = by_path(diff)
    assert set(changes) == {"tools.items[search]", "tools.items[summarize]"}
    assert changes["tools.items[search]"].kind == "removed"
    assert changes["tools.items[search]"].item == ("tool", "search")
    assert changes["tools.items[summarize]"].kind == "added"
    assert [c.item[1] for c in diff.items_added] == ["summarize"]
    assert [c.item[1] for c in diff.items_removed] == ["search"]
    # The tool list is still on the page: a removed tool is not breaking on its own.
    assert not diff.breaking
    assert not changes["tools.items[search]"].breaking


def test_a_changed_field_inside_a_tool_reads_old_to_new():
    new = changed(AGUI, lambda d: d["tools"]["items"][0].update(description="Searches the web."))
    change = by_path(diff_declarations(agui(AGUI), agui(new)))["tools.items[search].description"]
    assert (change.kind, change.old, change.new) == ("changed", "Does a thing.", "Searches the web.")


def test_limits_changed_are_not_breaking():
    new = changed(AGUI, lambda d: d["execution"].update(maxIterations=8))
    diff = diff_declarations(agui(AGUI), agui(new))
    change = by_path(diff)["execution.maxIterations"]
    assert (change.kind, change.old_text, change.new_text) == ("changed", "5", "8")
    assert not diff.breaking


def test_removing_the_last_tools_hides_the_tool_list_and_is_breaking():
    new = changed(AGUI, lambda d: d["tools"].update(items=[]))
    diff = diff_declarations(agui(AGUI), agui(new))
    assert diff.breaking
    assert [c.name for c in diff.hidden_controls] == ["tools"]
    removed = by_path(diff)["tools.items[search]"]
    assert removed.breaking
    assert removed.hides == ("Tool list",)


def test_a_capability_turned_off_is_breaking_and_names_the_control():
    new = changed(AGUI, lambda d: d["reasoning"].update(supported=False))
    diff = diff_declarations(agui(AGUI), agui(new))
    change = by_path(diff)["reasoning.supported"]
    assert (change.old, change.new, change.breaking, change.hides) == (
        True,
        False,
        True,
        ("Reasoning panel",),
    )
    # The sibling field did not change, so it is not in the diff at all.
    assert "reasoning.streaming" not in by_path(diff)


def test_a_category_removed_as_a_whole_is_listed_leaf_by_leaf():
    new = changed(AGUI, lambda d: d.pop("multimodal"))
    diff = diff_declarations(agui(AGUI), agui(new))
    changes = by_path(diff)
    assert {"multimodal.input.pdf", "multimodal.input.image"} <= set(changes)
    assert all(
        changes[p].breaking and changes[p].hides == ("Upload button",) for p in ("multimodal.input.pdf",)
    )


def test_additions_that_show_a_control_are_not_breaking():
    new = changed(AGUI, lambda d: d.update(state={"snapshots": True}))
    diff = diff_declarations(agui(AGUI), agui(new))
    assert [c.name for c in diff.shown_controls] == ["state"]
    assert by_path(diff)["state.snapshots"].kind == "added"
    assert not diff.breaking


def test_a_control_the_admin_already_hides_is_no_breaking_change():
    new = changed(AGUI, lambda d: d["reasoning"].update(supported=False))
    diff = diff_declarations(agui(AGUI), agui(new), overrides={"reasoning": "hide"})
    assert not diff.breaking
    assert not by_path(diff)["reasoning.supported"].breaking


def test_the_old_sub_agent_spelling_is_not_a_change():
    old = {"multiAgent": {"subAgents": [{"name": "researcher"}]}}
    new = {"multiAgent": {"subagents": [{"name": "researcher"}, {"name": "writer"}]}}
    diff = diff_declarations(agui(old), agui(new))
    assert [c.path for c in diff.changes] == ["multiAgent.subagents[writer]"]
    assert diff.changes[0].item == ("sub-agent", "writer")


def test_external_domain_tools_by_public_name_and_breaking_policy_changes():
    def edit(d):
        d["domainTools"] = [d["domainTools"][0]]
        d["capabilities"]["files"] = False

    diff = diff_declarations(external(POLICY), external(changed(POLICY, edit)))
    changes = by_path(diff)
    refund = changes["domainTools[refund]"]
    assert (refund.kind, refund.item) == ("removed", ("domain tool", "refund"))
    # The approval workflow came from refund's approvalRequired (and capabilities.approvals): still
    # shown, since the policy keeps capabilities.approvals true.
    assert "approvals" not in [c.name for c in diff.hidden_controls]
    assert changes["capabilities.files"].breaking
    assert changes["capabilities.files"].hides == ("Upload button",)


def test_removing_the_only_tool_needing_approval_hides_the_workflow():
    policy = changed(POLICY, lambda d: d["capabilities"].pop("approvals"))
    diff = diff_declarations(
        external(policy), external(changed(policy, lambda d: d.update(domainTools=d["domainTools"][:1])))
    )
    assert "approvals" in [c.name for c in diff.hidden_controls]
    assert "Approval workflow" in by_path(diff)["domainTools[refund]"].hides


def test_from_a_declaration_to_no_discovery():
    diff = diff_declarations(agui(AGUI), agui(None, status="none"))
    assert diff.status_changed
    assert diff.breaking
    assert {c.name for c in diff.hidden_controls} >= {"tools", "reasoning", "upload"}
    assert all(change.kind == "removed" for change in diff.changes)


def test_an_invalid_declaration_does_not_break_the_diff():
    bad = {"tools": {"supported": "sometimes", "items": "many"}}
    diff = diff_declarations(agui(AGUI, status="declared"), agui(bad, status="invalid"))
    assert by_path(diff)["tools.supported"].new == "sometimes"
    assert diff.breaking  # an invalid declaration is treated as unknown: its controls are hidden


def test_field_changes_walk_objects_and_keep_unnamed_lists_whole():
    old = {"a": {"b": 1, "c": [1, 2]}, "rateLimits": [{"scope": "user", "limit": 10}]}
    new = {"a": {"b": 1, "c": [1, 3]}, "rateLimits": [{"scope": "user", "limit": 20}], "d": {}}
    changes = {c.path: c for c in field_changes(old, new)}
    assert set(changes) == {"a.c", "rateLimits", "d"}
    assert changes["a.c"].new == [1, 3]
    assert changes["d"].kind == "added"


def test_values_are_shown_on_one_line():
    assert show(True) == "true"
    assert show(None) == "null"
    assert show("text") == "text"
    assert show({"b": 1, "a": [1, 2]}) == '{"a": [1, 2], "b": 1}'


def test_a_strands_feature_turned_off_is_breaking_under_its_own_name():
    from tests.capabilities.declarations import STRANDS

    new = copy.deepcopy(STRANDS)
    new["features"]["interrupts"] = False
    new["features"]["toolCallInterruptEditedArgs"] = False
    diff = diff_declarations(agui(STRANDS), agui(new))
    assert [c.name for c in diff.hidden_controls] == ["approvals"]
    change = by_path(diff)["features.interrupts"]
    assert (change.old, change.new, change.breaking) == (True, False, True)
    assert change.hides == ("Approval workflow",)

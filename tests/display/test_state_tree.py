"""The state document as a tree: folding, steps as a checklist, bounded, the raw JSON at hand."""

from __future__ import annotations

from django.template.loader import render_to_string

from agents_ui.display.state_tree import MAX_DEPTH, state_tree

PLAN = {
    "goal": "Launch in Berlin",
    "steps": [
        {"title": "Clarify the goal", "status": "done"},
        {"title": "Book the venue", "status": "in_progress"},
        {"name": "Send invitations", "done": False},
    ],
    "budget": {"amount": 1200, "currency": "EUR", "approved": True},
}


def html_of(document) -> str:
    return render_to_string("agents_ui/state_document.html", {"state": "{raw}", "tree": state_tree(document)})


def test_lists_of_steps_are_a_checklist_with_what_is_done():
    html = html_of(PLAN)
    assert html.count('data-step-done="true"') == 1 and html.count('data-step-done="false"') == 2
    assert "Clarify the goal" in html and "in_progress" in html and "to do" in html


def test_objects_fold_and_the_raw_json_is_one_click_away():
    html = html_of(PLAN)
    assert '<details open><summary><span class="mono">budget</span>' in html
    assert "true" in html and "1200" in html
    assert '<details class="state-raw"><summary class="small">Raw JSON</summary><pre>{raw}</pre>' in html


def test_a_list_without_status_fields_is_a_plain_list():
    (node,) = state_tree({"tags": [{"title": "a"}, {"title": "b"}]})
    assert node["kind"] == "list" and node["size"] == 2


def test_a_deep_document_is_cut_and_agent_text_is_escaped():
    deep: dict = {"x": "<script>"}
    for _ in range(MAX_DEPTH + 5):
        deep = {"d": deep}
    html = html_of(deep)
    assert "…" in html and "<script>" not in html
    assert "&lt;script&gt;" in html_of({"x": "<script>"})


def test_values_are_marked_with_their_json_type():
    html = html_of({"owner": None, "done": False, "count": 3, "ratio": 0.5, "title": "Launch"})
    for kind in ("null", "boolean", "number", "string"):
        assert f'class="state-value state-{kind}"' in html
    assert "NoneType" not in html and 'state-str"' not in html

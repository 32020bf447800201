"""Answer forms drawn from the arguments of a tool the client did not offer."""

from django.http import QueryDict

from agents_ui.sdk.agui.answer_forms import MAX_ITEMS, answer_form, read_shaped

STEPS = {
    "steps": [
        {"description": "Boil water", "status": "enabled"},
        {"description": "Add <b>tea</b>", "status": "enabled"},
        {"description": "Wait", "status": "disabled"},
    ],
    "title": "Make tea",
    "meta": {"count": 3},
}


def _post(**fields):
    data = QueryDict(mutable=True)
    for key, values in fields.items():
        for value in values if isinstance(values, list) else [values]:
            data.appendlist(key, value)
    return data


def test_steps_with_a_status_become_a_checklist_and_strings_text_inputs():
    form = answer_form("generate_task_steps", STEPS)
    kinds = {f.path: f.kind for f in form.fields}
    assert kinds == {("steps",): "checklist", ("title",): "text", ("meta", "count"): "view"}
    steps = next(f for f in form.fields if f.kind == "checklist")
    assert steps.items == (("Boil water", True), ("Add <b>tea</b>", True), ("Wait", False))


def test_the_answer_is_the_arguments_as_the_person_edited_them():
    form = answer_form("generate_task_steps", STEPS)
    answer, problem = read_shaped(
        form,
        data := _post(**{'shape:["steps"]': ["0", "2"], 'shape:["title"]': "Make green tea"}),
        data.getlist,
    )
    assert problem == ""
    assert answer == {
        "steps": [
            {"description": "Boil water", "status": "enabled"},
            {"description": "Add <b>tea</b>", "status": "disabled"},
            {"description": "Wait", "status": "enabled"},
        ],
        "title": "Make green tea",
        "meta": {"count": 3},
    }
    assert STEPS["steps"][1]["status"] == "enabled"  # the call's arguments are left as they were


def test_items_with_one_boolean_are_checked_by_it():
    form = answer_form("pick", {"items": [{"name": "a", "done": False}, {"name": "b", "done": True}]})
    answer, _ = read_shaped(form, data := _post(**{'shape:["items"]': "0"}), data.getlist)
    assert answer == {"items": [{"name": "a", "done": True}, {"name": "b", "done": False}]}


def test_out_of_bounds_arguments_are_shown_not_drawn():
    many = {"steps": [{"description": "x", "status": "enabled"}] * (MAX_ITEMS + 1)}
    assert answer_form("generate_task_steps", many) is None
    deep = {"a": {"b": {"c": {"d": {"e": {"f": "deep"}}}}}}
    assert answer_form("t", deep) is None
    assert answer_form("t", {"text": "x" * 5000}) is None


def test_a_too_long_text_is_refused():
    form = answer_form("t", {"title": "short"})
    answer, problem = read_shaped(form, _post(**{'shape:["title"]': "x" * 3000}))
    assert answer is None and "too long" in problem


def test_an_agno_confirmation_sends_accepted():
    form = answer_form("get_user_confirmation", {"question": "Delete it?"})
    assert form.kind == "confirm" and form.framework == "Agno" and form.question == "Delete it?"
    assert read_shaped(form, _post(confirmed="true")) == ({"accepted": True}, "")
    assert read_shaped(form, _post(confirmed="false")) == ({"accepted": False}, "")
    assert read_shaped(form, _post(confirmed="yes"))[0] is None


def test_the_form_escapes_what_the_agent_sent():
    from django.template.loader import render_to_string

    hostile = {"steps": [{"description": "<script>x()</script>", "status": "enabled"}], "note": '"><img>'}
    html = render_to_string("agents_ui/client_tools/shaped.html", {"form": answer_form("t", hostile)})
    assert "<script>" not in html and "&lt;script&gt;" in html and '"><img>' not in html

"""Answer forms drawn from the arguments of a tool the client did not offer."""

from django.http import QueryDict

from agents_ui.sdk.agui.answer_forms import AGNO_CONFIRMATION, MAX_ITEMS, answer_form, read_shaped

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


def test_an_agno_confirmation_is_known_by_what_agno_says_and_sends_accepted():
    # agno/os/interfaces/agui: the call has the tool's own name; the message holding it says why.
    form = answer_form("delete_drafts", {"folder": "Drafts"}, said=AGNO_CONFIRMATION)
    assert form.kind == "confirm" and form.framework == "Agno"
    assert read_shaped(form, _post(confirmed="true")) == ({"accepted": True}, "")
    assert read_shaped(form, _post(confirmed="false")) == ({"accepted": False}, "")
    assert read_shaped(form, _post(confirmed="false", note="Keep them")) == (
        {"accepted": False, "note": "Keep them"},
        "",
    )
    assert read_shaped(form, _post(confirmed="true", note="ignored")) == ({"accepted": True}, "")
    assert read_shaped(form, _post(confirmed="yes"))[0] is None


def test_names_no_framework_uses_are_not_taken_for_confirmations():
    for name in ("confirm", "confirmation", "request_confirmation", "get_user_confirmation"):
        form = answer_form(name, {"question": "Delete it?"})
        assert form.kind == "shape", name
    # Agno's words about another kind of pause (user input, external execution) are not a confirmation.
    said = "I have tools to execute, but I need confirmation or user input."
    assert answer_form("delete_drafts", {"folder": "Drafts"}, said=said).kind == "shape"


TICKET = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "priority": {"$ref": "#/$defs/Priority"},
        "team": {"oneOf": [{"const": "it", "title": "IT desk"}, {"const": "hr"}, {"type": "null"}]},
        "labels": {"type": "array", "items": {"enum": ["urgent", "customer", "internal"]}},
        "size": {"enum": [1, 2, 3, 5, 8, 13]},
        "steps": {
            "type": "array",
            "items": {"type": "object", "properties": {"state": {"enum": ["todo", "done"]}}},
        },
    },
    "$defs": {"Priority": {"enum": ["low", "high"], "title": "Priority"}},
}
TICKET_ARGS = {
    "title": "Printer",
    "priority": "high",
    "team": "it",
    "labels": ["urgent"],
    "size": 4,
    "steps": [{"name": "Unplug", "state": "done"}, {"name": "Call", "state": "todo"}],
}


def test_a_declared_enum_becomes_a_choice_and_goes_back_with_its_own_type():
    form = answer_form("file_ticket", TICKET_ARGS, schema=TICKET)
    by_path = {f.path: f for f in form.fields}
    assert by_path[("title",)].kind == "text"
    priority = by_path[("priority",)]
    assert priority.kind == "choice" and priority.label == "Priority" and priority.radios
    assert priority.options == (('"low"', "low"), ('"high"', "high")) and priority.chosen == ('"high"',)
    team = by_path[("team",)]
    assert team.options == (('"it"', "IT desk"), ('"hr"', "hr"), ("null", "—"))
    size = by_path[("size",)]
    assert not size.radios and size.chosen == () and size.required  # 4 is not one of them
    assert by_path[("labels",)].kind == "multichoice" and by_path[("labels",)].chosen == ('"urgent"',)
    steps = by_path[("steps",)]
    assert steps.kind == "choicelist" and [r.label for r in steps.rows] == ["Unplug", "Call"]
    answer, problem = read_shaped(
        form,
        data := _post(
            **{
                'shape:["priority"]': '"low"',
                'shape:["team"]': "null",
                'shape:["labels"]': ['"internal"', '"urgent"'],
                'shape:["size"]': "8",
                'shape:["steps", 1, "state"]': '"done"',
                'shape:["steps", 0, "state"]': '"done"',
            }
        ),
        data.getlist,
    )
    assert problem == ""
    assert answer == {
        **TICKET_ARGS,
        "priority": "low",
        "team": None,
        "labels": ["urgent", "internal"],
        "size": 8,
        "steps": [{"name": "Unplug", "state": "done"}, {"name": "Call", "state": "done"}],
    }


def test_a_value_outside_the_choices_is_refused_with_what_is_allowed():
    form = answer_form("file_ticket", TICKET_ARGS, schema=TICKET)
    base = {'shape:["priority"]': '"high"', 'shape:["size"]': "8", 'shape:["team"]': '"it"'}
    for name, tampered in (
        ('shape:["priority"]', '"urgent!"'),
        ('shape:["priority"]', "high"),
        ('shape:["labels"]', '"secret"'),
        ('shape:["steps", 0, "state"]', '"lost"'),
    ):
        data = _post(**{**base, name: tampered})
        answer, problem = read_shaped(form, data, data.getlist)
        assert answer is None and "not one of the choices" in problem, name
    answer, problem = read_shaped(form, data := _post(**{'shape:["priority"]': '"low"'}), data.getlist)
    assert answer is None and problem.startswith("Size: choose one")


def test_a_status_from_a_known_vocabulary_is_a_choice_without_a_schema():
    todos = {
        "todos": [
            {"content": "Book venue", "status": "completed"},
            {"content": "Invite", "status": "pending"},
        ]
    }
    form = answer_form("write_todos", todos)
    (field,) = form.fields
    assert field.kind == "choicelist" and field.source == "convention"
    assert [v for v, _ in field.rows[0].options] == ['"pending"', '"in_progress"', '"completed"']
    answer, _ = read_shaped(
        form,
        _post(
            **{'shape:["todos", 1, "status"]': '"in_progress"', 'shape:["todos", 0, "status"]': '"completed"'}
        ),
    )
    assert answer["todos"][1] == {"content": "Invite", "status": "in_progress"}
    # An unknown status is not a closed set: the array is shown, not edited.
    assert answer_form("t", {"todos": [{"content": "x", "status": "blocked"}]}) is None


def test_a_schema_out_of_bounds_or_unrelated_is_left_out():
    assert (
        answer_form("t", {"priority": "high"}, schema={"type": "object", "properties": 3}).fields[0].kind
        == "text"
    )
    huge = {"type": "object", "properties": {f"p{i}": {"enum": list(range(20))} for i in range(200)}}
    assert answer_form("t", {"priority": "high"}, schema=huge).fields[0].kind == "text"
    loop = {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/a"}}}
    assert answer_form("t", {"priority": "high"}, schema=loop).fields[0].kind == "text"
    one = {"type": "object", "properties": {"priority": {"enum": ["high"]}}}
    assert answer_form("t", {"priority": "high"}, schema=one).fields[0].kind == "text"


def test_agnos_questions_with_options_send_its_selections():
    args = {
        "questions": [
            {
                "question": "Which cuisine?",
                "options": [{"label": "Thai"}, {"label": "Greek", "description": "Mezze"}],
            },
            {"question": "Extras?", "options": [{"label": "Wine"}, {"label": "Cake"}], "multi_select": True},
        ]
    }
    form = answer_form("ask_user", args)
    assert form.kind == "feedback" and [f.kind for f in form.fields] == ["choice", "multichoice"]
    assert form.fields[0].listed == [('"Thai"', "Thai", ""), ('"Greek"', "Greek", "Mezze")]
    answer, problem = read_shaped(
        form, data := _post(**{"shape:[0]": '"Greek"', "shape:[1]": ['"Cake"', '"Wine"']}), data.getlist
    )
    assert problem == "" and answer == {
        "selections": {"Which cuisine?": ["Greek"], "Extras?": ["Wine", "Cake"]}
    }
    answer, problem = read_shaped(form, data := _post(**{"shape:[0]": '"Pizza"'}), data.getlist)
    assert answer is None and "not one of the choices (Thai, Greek)" in problem
    answer, problem = read_shaped(form, data := _post(), data.getlist)
    assert answer is None and "choose one" in problem


def test_the_form_escapes_what_the_agent_sent():
    from django.template.loader import render_to_string

    hostile = {"steps": [{"description": "<script>x()</script>", "status": "enabled"}], "note": '"><img>'}
    html = render_to_string("agents_ui/client_tools/shaped.html", {"form": answer_form("t", hostile)})
    assert "<script>" not in html and "&lt;script&gt;" in html and '"><img>' not in html


def test_choices_escape_what_the_agent_sent():
    from django.template.loader import render_to_string

    schema = {"type": "object", "properties": {"p": {"enum": ['"><script>x()</script>', "b"]}}}
    form = answer_form("t", {"p": "b"}, schema=schema)
    html = render_to_string("agents_ui/client_tools/shaped.html", {"form": form, "dom": "card"})
    assert "<script>" not in html and "&lt;script&gt;" in html and 'type="radio"' in html

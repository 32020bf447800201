"""Every Basic Catalog component of A2UI v0.9 drawn by its template, bound to the data model, and
surfaces an agent may send to harm the page (script URLs, huge lists, deep nesting) refused or
bounded with a note; an activity of a type without a renderer is a readable card."""

from __future__ import annotations

import re
import uuid
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import pytest
from django.template.loader import render_to_string

from agents_ui.decisions import decide
from agents_ui.display.activities import activity_view
from agents_ui.sdk import a2ui
from agents_ui.sdk.transcript import ActivityRecord

RUN = SimpleNamespace(pk=uuid.UUID(int=7))
PNG = (
    "data:image/png;base64,"
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


class Tags(HTMLParser):
    """The elements and attribute names of a page, as a browser would parse them."""

    def __init__(self) -> None:
        super().__init__()
        self.names: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.names.add(tag)
        self.attributes.update(name for name, _ in attrs)


def content(components: list[dict[str, Any]], data: Any = None, **create: Any) -> dict[str, Any]:
    ops = [
        {
            "version": "v0.9",
            "createSurface": {"surfaceId": "s", "catalogId": a2ui.BASIC_CATALOG_ID, **create},
        },
        {"version": "v0.9", "updateComponents": {"surfaceId": "s", "components": components}},
    ]
    if data is not None:
        ops.append({"version": "v0.9", "updateDataModel": {"surfaceId": "s", "value": data}})
    return {"a2ui_operations": ops}


def draw(record_content: Any, activity_type: str = a2ui.ACTIVITY_TYPE, overrides: dict | None = None) -> str:
    rv = SimpleNamespace(run=RUN, plan=decide(overrides=overrides), a2ui_sent={})
    record = ActivityRecord("a2ui-surface-call-1", activity_type, record_content, 3)
    a = activity_view(rv, record)
    return render_to_string("agents_ui/run.html#activity", {"activity": a, "run": RUN, "rv": rv})


def surface(components: list[dict[str, Any]], data: Any = None, **create: Any) -> str:
    return draw(content(components, data, **create))


def root(kind: str, **props: Any) -> list[dict[str, Any]]:
    return [{"id": "root", "component": kind, **props}]


def test_text_binds_by_json_pointer_and_renders_simple_markdown_without_links_or_html():
    html = surface(
        [
            {"id": "root", "component": "Column", "children": ["t1", "t2"]},
            {"id": "t1", "component": "Text", "text": {"path": "/user/name"}, "variant": "h2"},
            {
                "id": "t2",
                "component": "Text",
                "text": "**bold** [link](https://x.org) <script>alert(1)</script> ![i](https://x.org/i.png)",
            },
        ],
        {"user": {"name": "Ada"}},
    )
    assert re.search(r'data-a2ui="Text" role="heading" aria-level="4">Ada</div>', html)
    assert "<strong>bold</strong>" in html and "link" in html
    assert "<a " not in html and "<img" not in html and "<script" not in html


def test_image_icon_video_and_audio():
    html = surface(
        [
            {"id": "root", "component": "Row", "children": ["i", "e", "ic", "svg", "v", "au"]},
            {
                "id": "i",
                "component": "Image",
                "url": PNG,
                "description": "A dot",
                "fit": "cover",
                "variant": "avatar",
            },
            {"id": "e", "component": "Image", "url": "https://example.org/cat.png", "description": "A cat"},
            {"id": "ic", "component": "Icon", "name": "calendarToday"},
            {"id": "svg", "component": "Icon", "name": {"svgPath": "M0 0L24 24Z"}},
            {"id": "v", "component": "Video", "url": "https://example.org/v.mp4"},
            {
                "id": "au",
                "component": "AudioPlayer",
                "url": "data:audio/mpeg;base64,AAAA",
                "description": "A tune",
            },
        ]
    )
    assert f'<img class="a2ui-fit-cover" src="{PNG}" alt="A dot"' in html and "a2ui-image-avatar" in html
    # Another site's image is a link, never loaded into the page (the CSP allows this server only).
    assert 'href="https://example.org/cat.png"' in html and "A cat" in html
    assert 'role="img" aria-label="calendarToday"><path d="M20 3h-1V1h-2v2H7V1H5v2' in html  # drawn, no glyph
    assert '<path d="M0 0L24 24Z"/>' in html
    assert 'href="https://example.org/v.mp4"' in html and "<video" not in html
    assert '<audio controls preload="metadata" src="data:audio/mpeg;base64,AAAA">' in html


def test_layouts_row_column_list_card_tabs_modal_divider():
    html = surface(
        [
            {"id": "root", "component": "Card", "child": "col"},
            {
                "id": "col",
                "component": "Column",
                "children": ["row", "list", "tabs", "modal", "div"],
                "align": "center",
            },
            {"id": "row", "component": "Row", "children": ["a", "b"], "justify": "spaceBetween"},
            {"id": "a", "component": "Text", "text": "A", "weight": 2},
            {"id": "b", "component": "Text", "text": "B"},
            {
                "id": "list",
                "component": "List",
                "children": {"path": "/people", "componentId": "person"},
                "direction": "horizontal",
            },
            {"id": "person", "component": "Text", "text": {"path": "name"}},
            {
                "id": "tabs",
                "component": "Tabs",
                "tabs": [{"title": "One", "child": "a"}, {"title": "Two", "child": "b"}],
            },
            {"id": "modal", "component": "Modal", "trigger": "open", "content": "b"},
            {"id": "open", "component": "Button", "child": "open-label", "action": {"event": {"name": "x"}}},
            {"id": "open-label", "component": "Text", "text": "Details"},
            {"id": "div", "component": "Divider", "axis": "vertical"},
        ],
        {"people": [{"name": "Ada"}, {"name": "Grace"}]},
    )
    assert 'class="a2ui-card"' in html and "a2ui-column a2ui-justify-start a2ui-align-center" in html
    assert "a2ui-row a2ui-justify-spaceBetween" in html and 'class="a2ui-cell a2ui-w2"' in html
    assert "a2ui-list-horizontal" in html and "<p>Ada</p>" in html and "<p>Grace</p>" in html
    assert html.count('class="a2ui-tab-input"') == 2 and ">One</label>" in html and ">Two</label>" in html
    popover = re.search(r'popovertarget="([^"]+)">', html).group(1)
    assert f'id="{popover}" popover>' in html and "Details" in html
    assert "a2ui-divider-vertical" in html


def test_inputs_read_their_values_from_the_data_model_and_write_to_their_paths():
    html = surface(
        [
            {
                "id": "root",
                "component": "Column",
                "children": ["tf", "num", "pw", "long", "cb", "cp", "many", "sl", "dt", "tm"],
            },
            {"id": "tf", "component": "TextField", "label": "Name", "value": {"path": "/f/name"}},
            {
                "id": "num",
                "component": "TextField",
                "label": "Age",
                "value": {"path": "/f/age"},
                "variant": "number",
            },
            {"id": "pw", "component": "TextField", "label": "Secret", "value": "", "variant": "obscured"},
            {
                "id": "long",
                "component": "TextField",
                "label": "Bio",
                "value": {"path": "/f/bio"},
                "variant": "longText",
            },
            {"id": "cb", "component": "CheckBox", "label": "Agree", "value": {"path": "/f/agree"}},
            {
                "id": "cp",
                "component": "ChoicePicker",
                "label": "Size",
                "options": [{"label": "S", "value": "s"}, {"label": "M", "value": "m"}],
                "value": {"path": "/f/size"},
            },
            {
                "id": "many",
                "component": "ChoicePicker",
                "variant": "multipleSelection",
                "displayStyle": "chips",
                "options": [{"label": "Red", "value": "r"}, {"label": "Blue", "value": "b"}],
                "value": {"path": "/f/colours"},
            },
            {
                "id": "sl",
                "component": "Slider",
                "label": "Volume",
                "min": 0,
                "max": 10,
                "value": {"path": "/f/volume"},
            },
            {
                "id": "dt",
                "component": "DateTimeInput",
                "label": "When",
                "enableDate": True,
                "enableTime": True,
                "value": {"path": "/f/when"},
            },
            {
                "id": "tm",
                "component": "DateTimeInput",
                "label": "At",
                "enableTime": True,
                "value": "14:30:00",
            },
        ],
        {
            "f": {
                "name": "Ada",
                "age": 36,
                "bio": "Maths",
                "agree": True,
                "size": ["m"],
                "colours": ["r", "b"],
                "volume": 7,
                "when": "2026-12-24T18:00:00Z",
            }
        },
    )
    assert 'value="Ada" maxlength="4000" name="a2ui:/f/name"' in html
    assert 'type="number" step="any" value="36"' in html and 'type="password"' in html and "readonly" in html
    assert '<textarea rows="3" maxlength="4000" name="a2ui:/f/bio">Maths</textarea>' in html
    assert 'type="checkbox" value="on" name="a2ui:/f/agree" checked' in html
    assert 'type="radio" name="a2ui:/f/size" value="m" checked' in html and 'value="s">' in html
    assert html.count('type="checkbox" name="a2ui:/f/colours"') == 2 and "a2ui-chips" in html
    assert 'type="range" min="0" max="10" step="any" value="7" name="a2ui:/f/volume"' in html
    assert 'type="datetime-local" value="2026-12-24T18:00" name="a2ui:/f/when"' in html
    assert 'type="time" value="14:30"' in html


def test_buttons_send_events_open_http_links_only_and_the_surface_is_one_form():
    html = surface(
        [
            {"id": "root", "component": "Row", "children": ["send", "open", "evil"]},
            {
                "id": "send",
                "component": "Button",
                "variant": "primary",
                "child": "l1",
                "action": {"event": {"name": "go"}},
            },
            {
                "id": "open",
                "component": "Button",
                "child": "l2",
                "action": {"functionCall": {"call": "openUrl", "args": {"url": "https://a2ui.org"}}},
            },
            {
                "id": "evil",
                "component": "Button",
                "child": "l3",
                "action": {"functionCall": {"call": "openUrl", "args": {"url": "javascript:alert(1)"}}},
            },
            {"id": "l1", "component": "Text", "text": "Go"},
            {"id": "l2", "component": "Text", "text": "Docs"},
            {"id": "l3", "component": "Text", "text": "Evil"},
        ]
    )
    assert f'hx-post="/runs/{RUN.pk}/a2ui/"' in html and 'hx-target="#transcript"' in html
    assert 'type="submit" name="a2ui-action" value="send|/" class="button button-primary"' in html
    assert 'href="https://a2ui.org" target="_blank" rel="noopener noreferrer nofollow"' in html
    assert "javascript:" not in html and 'disabled><span class="a2ui-text a2ui-text-inline"' in html
    assert not re.search(r"<button[^>]*>[^<]*<(div|p)\b", html)  # a label is a phrase, never a block
    assert "opens a URL that is not http(s)" in html


def test_every_basic_catalog_component_has_its_template():
    assert set(a2ui.COMPONENTS) == {
        "Text", "Image", "Icon", "Video", "AudioPlayer", "Row", "Column", "List", "Card", "Tabs", "Modal",
        "Divider", "Button", "TextField", "CheckBox", "ChoicePicker", "Slider", "DateTimeInput",
    }  # fmt: skip
    for kind in a2ui.COMPONENTS:
        props = {"Text": {"text": "x"}, "Image": {"url": PNG}, "Icon": {"name": "add"}}.get(kind, {})
        html = surface(root(kind, **props))
        assert f'data-a2ui="{kind}"' in html, kind


# --- Untrusted surfaces ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JAVASCRIPT:alert(1)", "data:text/html;base64,PHNjcmlwdD4=",
     "data:image/svg+xml;base64,PHN2Zz4=", "vbscript:x", "//evil.example/x.png", " javascript:alert(1)"],
)  # fmt: skip
def test_media_urls_that_are_not_http_or_a_small_media_data_url_are_refused_with_a_note(url):
    html = surface(
        [
            {"id": "root", "component": "Column", "children": ["i", "v", "a"]},
            {"id": "i", "component": "Image", "url": url},
            {"id": "v", "component": "Video", "url": url},
            {"id": "a", "component": "AudioPlayer", "url": url},
        ]
    )
    assert "src=" not in html and 'href="' + url.strip() not in html
    assert html.count("data-a2ui-refused") == 3 and "was refused" in html


def test_a_bound_url_is_checked_too_and_a_huge_data_url_is_refused():
    html = surface(root("Image", url={"path": "/u"}), {"u": "javascript:alert(1)"})
    assert "javascript" not in html.replace("is not http(s)", "")
    big = "data:image/png;base64," + "A" * (a2ui.MAX_DATA_URL + 10)
    assert "src=" not in surface(root("Image", url=big))


def test_a_huge_list_is_cut_with_a_note():
    html = surface(
        [
            {"id": "root", "component": "List", "children": {"path": "/items", "componentId": "item"}},
            {"id": "item", "component": "Text", "text": {"path": "n"}},
        ],
        {"items": [{"n": f"item {i}"} for i in range(5_000)]},
    )
    assert html.count('data-a2ui="Text"') == a2ui.MAX_ITEMS
    assert f"the first {a2ui.MAX_ITEMS} are shown" in html and "more items not shown" in html


def test_deep_nesting_and_loops_are_cut_with_a_note():
    deep = [
        {"id": "root" if i == 0 else f"c{i}", "component": "Column", "children": [f"c{i + 1}"]}
        for i in range(200)
    ]
    html = surface(deep)
    assert html.count('data-a2ui="Column"') == a2ui.MAX_DEPTH
    assert f"more than {a2ui.MAX_DEPTH} levels deep" in html
    loop = surface(
        [{"id": "root", "component": "Card", "child": "a"}, {"id": "a", "component": "Card", "child": "root"}]
    )
    assert "contains itself" in loop


def test_too_many_components_and_messages_are_bounded_with_notes():
    many = [
        {"id": "root", "component": "Column", "children": [f"t{i}" for i in range(a2ui.MAX_COMPONENTS + 50)]}
    ]
    many += [{"id": f"t{i}", "component": "Text", "text": "x"} for i in range(a2ui.MAX_COMPONENTS + 50)]
    html = surface(many)
    assert f"more than {a2ui.MAX_COMPONENTS} components" in html
    assert html.count('data-a2ui="Text"') <= a2ui.MAX_CHILDREN
    ops = content(root("Text", text="x"))["a2ui_operations"] * (a2ui.MAX_OPERATIONS + 5)
    assert f"only the first {a2ui.MAX_OPERATIONS} were read" in draw({"a2ui_operations": ops})


def test_no_script_no_inline_style_no_event_handler_from_anything_an_agent_sends():
    evil = '"><script>alert(1)</script><img src=x onerror=alert(1) style="x">'
    html = surface(
        [
            {"id": "root", "component": "Column", "children": ["t", "f", "c", "x"], "justify": evil},
            {"id": "t", "component": "Text", "text": evil, "variant": evil},
            {"id": "f", "component": "TextField", "label": evil, "value": evil},
            {
                "id": "c",
                "component": "ChoicePicker",
                "options": [{"label": evil, "value": evil}],
                "value": [evil],
            },
            {"id": "x", "component": "Icon", "name": {"svgPath": '"/><script>alert(1)</script>'}},
        ],
        theme={"primaryColor": "red;background:url(javascript:alert(1))", "agentDisplayName": evil},
    )
    tags = Tags()
    tags.feed(html)
    assert "script" not in tags.names and "img" not in tags.names
    assert not {name for name in tags.attributes if name == "style" or name.startswith("on")}
    assert "a2ui-justify-start" in html and "a2ui-text-body" in html


def test_an_activity_of_an_unknown_type_is_a_readable_card():
    html = draw({"steps": [{"title": "Search", "status": "done"}], "progress": 0.5}, activity_type="PLAN")
    assert 'data-activity="PLAN"' in html and "data-activity-card" in html
    assert 'data-state-key="progress"' in html and "Search" in html


def test_a_surface_of_another_catalogue_is_shown_as_its_content():
    html = draw(content(root("FancyChart", points=[1, 2]), catalogId="https://example.org/charts"))
    assert "data-a2ui-unsupported" in html and "https://example.org/charts" in html and "FancyChart" in html


def test_the_admin_can_turn_the_renderer_off_and_the_surface_shows_as_its_content():
    html = draw(content(root("Text", text="hi")), overrides={"generative-ui": "hide"})
    assert (
        "data-activity-card" in html
        and "turned generative UI off" in html
        and "a2ui-surface" not in html.split("data-activity")[0]
    )


def test_building_and_failed_lifecycles_are_said():
    assert 'data-a2ui-status="building"' in draw({"status": "building"})
    assert "could not build its interface: bad JSON" in draw({"status": "failed", "error": "bad JSON"})


def test_an_external_agents_surface_is_shown_with_its_buttons_off():
    # The plan of an external agent: its protocol carries no action back.
    plan = decide(policy={"identity": {"name": "Desk"}, "outputModuleTypes": ["a2ui"]})
    assert not plan.surfaces_take_actions
    rv = SimpleNamespace(run=RUN, plan=plan, a2ui_sent={})
    record = ActivityRecord(
        "module-3",
        a2ui.ACTIVITY_TYPE,
        content(root("Button", child="x", action={"event": {"name": "go"}})),
        3,
    )
    html = render_to_string(
        "agents_ui/run.html#activity", {"activity": activity_view(rv, record), "run": RUN, "rv": rv}
    )
    assert "data-a2ui-readonly" in html and 'name="a2ui-action"' not in html and "disabled" in html

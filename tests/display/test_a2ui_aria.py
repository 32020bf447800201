"""v1.0's ARIA on the drawn element: accessibility.live as aria-live, accessibility.hidden as
aria-hidden, and nothing where a component set neither (v0.9 surfaces unchanged)."""

from __future__ import annotations

from django.template.loader import render_to_string

from agents_ui.display.a2ui import template_for
from agents_ui.sdk import a2ui


def drawn(*components: dict, version: str = "v1.0") -> str:
    catalog = a2ui.BASIC_CATALOG_ID_1 if version == "v1.0" else a2ui.BASIC_CATALOG_ID
    body = {"surfaceId": "s", "catalogId": catalog}
    messages = [{"version": version, "createSurface": body}]
    messages.append(
        {"version": version, "updateComponents": {"surfaceId": "s", "components": list(components)}}
    )
    [surface] = a2ui.read_activity({"a2ui_operations": messages}).surfaces
    root = a2ui.render(surface).root
    return render_to_string(template_for(root), {"node": root, "surface": {"dom": "x"}})


def test_live_and_hidden_become_the_elements_aria_attributes():
    html = drawn(
        {"id": "root", "component": "Column", "children": ["news", "star"]},
        {"id": "news", "component": "Text", "text": "Saved", "accessibility": {"live": "assertive"}},
        {"id": "star", "component": "Icon", "name": "star", "accessibility": {"hidden": True}},
    )
    assert '<div class="a2ui-text a2ui-text-body" data-a2ui="Text" aria-live="assertive">' in html
    assert 'data-a2ui="Icon" aria-hidden="true"' in html


def test_a_live_value_outside_the_spec_and_v0_9_surfaces_get_no_aria():
    html = drawn({"id": "root", "component": "Text", "text": "x", "accessibility": {"live": "rude"}})
    assert "aria-live" not in html
    old = drawn(
        {"id": "root", "component": "Text", "text": "x", "accessibility": {"live": "polite"}}, version="v0.9"
    )
    assert "aria-live" not in old

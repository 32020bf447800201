"""Filters for A2UI surfaces (templates/agents_ui/a2ui/): an agent's Text as safe HTML."""

from __future__ import annotations

import json

import nh3
from django import template
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from agents_ui.display.a2ui import template_for
from agents_ui.sdk.a2ui.render import Node

register = template.Library()

# A2UI's Text takes "simple Markdown (without HTML, images, or links)": raw HTML is off, and links
# and images are dropped by the sanitiser (their words stay).
_TAGS = {
    "p",
    "br",
    "strong",
    "em",
    "code",
    "pre",
    "blockquote",
    "ul",
    "ol",
    "li",
    "del",
    "h1",
    "h2",
    "h3",
    "h4",
}
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False})
_LEVELS = {"h1": 3, "h2": 4, "h3": 5, "h4": 6, "h5": 6}


@register.filter
def a2ui_text(text: str, variant: str = "body") -> SafeString:
    """A Text component's words: inline Markdown in a heading or a button, Markdown blocks otherwise."""
    text = str(text or "")
    if variant in _LEVELS or variant == "inline":
        html = _markdown.renderInline(text.lstrip("#").strip())
        tags = {"strong", "em", "code", "del"}
    else:
        html = _markdown.render(text)
        tags = _TAGS
    return mark_safe(nh3.clean(html, tags=tags, attributes={}, url_schemes=set()))


@register.filter
def a2ui_level(variant: str) -> int:
    """The heading level of a heading variant, inside a conversation's own headings."""
    return _LEVELS.get(variant, 6)


@register.filter
def a2ui_value(value: object) -> str:
    """A value the person sent, in words: yes or no, a list joined, nothing for null."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(a2ui_value(item) for item in value[:20])
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)[:300]
    return str(value)[:300]


@register.filter
def a2ui_template(node: Node) -> str:
    """The template that draws an A2UI component (agents_ui/display/a2ui.py)."""
    return template_for(node)

"""Filters for A2UI surfaces (templates/agents_ui/a2ui/): an agent's Text as safe HTML."""

from __future__ import annotations

import json

from django import template
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from agents_ui.display.a2ui import template_for
from agents_ui.display.markdown import simple_markdown_html
from agents_ui.display.media import ImageProxy
from agents_ui.sdk.a2ui.render import Node

register = template.Library()

_LEVELS = {"h1": 3, "h2": 4, "h3": 5, "h4": 6, "h5": 6}


@register.filter
def a2ui_text(text: str, variant: str = "body") -> SafeString:
    """A Text component's words: inline Markdown in a heading or a button, Markdown blocks otherwise
    (A2UI's "simple Markdown": display/markdown.py drops HTML, images and links, keeping their words)."""
    return simple_markdown_html(str(text or ""), inline=variant in _LEVELS or variant == "inline")


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
def a2ui_proxied(link: str, images: ImageProxy | None) -> str:
    """An Image component's URL through the image proxy, or "" where its agent's images are links."""
    return images.url(link) if images is not None and link else ""


@register.filter
def a2ui_template(node: Node) -> str:
    """The template that draws an A2UI component (agents_ui/display/a2ui.py)."""
    return template_for(node)


@register.filter
def a2ui_aria(node: Node) -> SafeString:
    """A v1.0 component's ARIA attributes on its element: `aria-live` (its politeness, from
    accessibility.live) and `aria-hidden` (accessibility.hidden); nothing when it set neither."""
    live = node.props.get("a11y_live")
    html = format_html(' aria-live="{}"', live) if live else ""
    if node.props.get("a11y_hidden"):
        html = format_html('{} aria-hidden="true"', html)
    return mark_safe(html)

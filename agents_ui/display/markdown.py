"""Agents' Markdown as safe HTML: the one Markdown and sanitising pipeline of the product.

Answers, reasoning, A2A text artifacts and A2UI Text all go through here. Markdown is rendered
with raw HTML disabled, then sanitised with nh3 against an allow-list: nothing an agent writes can
run in the page. `streaming_markdown` renders a growing answer in pieces for the live stream.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

import nh3
import pygments
from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from agents_ui.display import media

_ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "del", "span", "img", "audio",
}  # fmt: skip
# Classes only come from the highlighter, images and audio from the media rule (_media_rule): with
# raw HTML disabled an agent cannot write a tag.
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "pre": {"class", "data-lang"},
    "span": {"class", "data-remote-image-failed", "hidden"},
    "ol": {"start"},
    "img": {"src", "alt", "data-media", "data-remote-image"},
    "audio": {"src", "controls", "preload", "data-media", "aria-label"},
}
# A data: URL stays only as the source of an image or audio element, and only as media.py made it.
_MEDIA_SOURCE = re.compile(
    r"data:(image|audio)/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]*"
    # The image proxy's URL (media.ImageProxy): a run's path and a signed token.
    r"|/runs/[0-9a-f-]{36}/image/\?u=[A-Za-z0-9_:.-]+"
)
# Past this size a code block is shown plain: highlighting is a courtesy, not worth a slow stream.
_HIGHLIGHT_MAX_CHARS = 20_000
# A streaming answer's tail is re-rendered at every swap; past this size its settled blocks are
# frozen (sent once) so a long answer does not cost more and more to stream.
_TAIL_FREEZE_CHARS = 1_500
_code_formatter = HtmlFormatter(nowrap=True)


def _highlight(code: str, lang: str, _attrs: Any) -> str:
    """A fenced code block, highlighted with CSS classes (the CSP forbids inline styles)."""
    lexer = None
    if lang and len(code) <= _HIGHLIGHT_MAX_CHARS:
        try:
            lexer = get_lexer_by_name(lang[:40], stripnl=False, ensurenl=False)
        except ClassNotFound:
            lexer = None
    inner = pygments.highlight(code, lexer, _code_formatter) if lexer else escape(code)
    return render_to_string("agents_ui/run.html#code-block", {"lang": lang[:40], "code": mark_safe(inner)})


_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight}).enable(
    "table"
)
_default_validate_link = _markdown.validateLink


def _validate_link(url: str) -> bool:
    # markdown-it keeps data: URLs of images only; audio clips come as data: URLs too (media.py checks both).
    return _default_validate_link(url) or url[:11].lower() == "data:audio/"


_markdown.validateLink = _validate_link


def _media_rule(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A Markdown image: shown where the plan shows media (`env["media"]`), checked (media.py); an
    image the agent links to comes through the image proxy when `env["media"]` is one."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    if env.get("words_only"):
        return escape(alt)
    src = str(token.attrGet("src") or "")
    if not env.get("media"):
        word = "audio clip" if src[:11].lower() == "data:audio/" else "image"
        return render_to_string("agents_ui/run.html#media-not-shown", {"word": word, "label": alt})
    item = media.of_markdown(src, alt)
    if isinstance(env["media"], media.ImageProxy):
        item = env["media"].proxied(item)
    return render_to_string("agents_ui/run.html#media-inline", {"item": item})


_markdown.add_render_rule("image", _media_rule)

# Whether an answer's media are shown; an ImageProxy shows them, remote images through it.
MediaShown = bool | media.ImageProxy


# An agent's link leaves the page for a site of its own, or jumps within the answer: a relative
# address would send the person to a page of this product the agent picked.
_LINK_STARTS = ("http://", "https://", "mailto:", "#")


def _attribute(tag: str, attribute: str, value: str) -> str | None:
    if attribute == "href" and not value.lower().startswith(_LINK_STARTS):
        return None
    if attribute == "src" or value[:5].lower() == "data:":
        return (
            value
            if attribute == "src" and tag in ("img", "audio") and _MEDIA_SOURCE.fullmatch(value)
            else None
        )
    return value


def _clean(html: str) -> str:
    return nh3.clean(
        html,
        tags=_ALLOWED_TAGS,
        attributes=_ALLOWED_ATTRIBUTES,
        link_rel="noopener noreferrer nofollow",
        url_schemes={"http", "https", "mailto", "data"},
        attribute_filter=_attribute,
    )


def markdown_html(text: str, *, media: MediaShown = False) -> str:
    """An agent's Markdown as safe HTML; `media`: its images and audio are shown (checked), remote
    images through the image proxy when it is one."""
    return _clean(_markdown.render(text or "", {"media": media}))


# One line of words, spaces and quiet punctuation, starting with a letter: Markdown makes it one plain
# paragraph, so a live answer that is still such a line needs no parser at each swap.
PLAIN_LINE = re.compile(r"(?:[^\W\d_]|\[)(?:[^\W_]|[ ,.;'\"?%\[\]])*")
# What may follow such a line and leave it one plain line.
PLAIN_MORE = re.compile(r"(?:[^\W_]|[ ,.;'\"?%\[\]])*")


def _live_html(text: str, media: MediaShown = False) -> str:
    # The paragraph markdown-it would make, written as it writes it: no parser, no template per swap.
    if PLAIN_LINE.fullmatch(text):
        return f"<p>{html.escape(text.rstrip(), quote=False)}</p>\n"
    return markdown_html(text, media=media)


@dataclass(frozen=True)
class StreamingMarkdown:
    """A growing answer as HTML: what settled since last time (sent once, then kept) and the tail
    (re-rendered at every swap)."""

    frozen: int  # characters of the text settled so far
    settled_html: str  # the characters newly settled, after those settled before
    tail_html: str


def _render_tokens(tokens: list[Any], media: MediaShown = False) -> str:
    return _clean(_markdown.renderer.render(tokens, _markdown.options, {"media": media})) if tokens else ""


def _last_block_start(tokens: list[Any], lines: list[str]) -> tuple[int, int]:
    """(token index, character offset) of the last top-level block that starts after a blank line:
    the blocks before it cannot change as text is added. (0, 0) when there is none."""
    for index in range(len(tokens) - 1, 0, -1):
        token = tokens[index]
        if token.level == 0 and token.nesting >= 0 and token.map and token.map[0] > 0:
            start = token.map[0]
            if not lines[start - 1].strip():
                return index, sum(len(line) + 1 for line in lines[:start])
    return 0, 0


def _soft_cut(text: str, at: int) -> int:
    """A place near `at` to split one long block: a line break, else a space, else `at`; never
    inside a link or an image's address (an inline image's data may be long), but before it."""
    opened = text.rfind("](", 0, at)
    if opened >= 0 and text.find(")", opened, at) < 0:
        start = text.rfind("[", 0, opened)
        start -= start > 0 and text[start - 1] == "!"
        if start >= 0:
            return start
    for mark in ("\n", " "):
        found = text.rfind(mark, max(0, at - 400), at)
        if found > 0:
            return found + 1
    return at


# A line that opens or closes a fenced code block (at the top level, where streamed answers put them).
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$", re.M)
# The last line of a live answer that may be a closing fence still arriving.
_FENCE_ARRIVING = re.compile(r" {0,3}(`+|~+)")


def open_fence(text: str, end: int | None = None) -> str:
    """The line (with its line break) that opened a fenced code block still open at `end`, or ""."""
    marker = opener = ""
    for line in _FENCE_LINE.finditer(text, 0, len(text) if end is None else end):
        fence, rest = line.group(1), line.group(2)
        if not marker:
            if fence[0] != "`" or "`" not in rest:
                marker, opener = fence, line.group(0)
        elif fence[0] == marker[0] and len(fence) >= len(marker) and not rest.strip():
            marker = opener = ""
    return opener + "\n" if opener else ""


def _live_code(source: str, media: MediaShown = False) -> str:
    """A live tail as HTML; the closing fence of an open code block, while it arrives, is not code."""
    last = source[source.rfind("\n") + 1 :]
    if last and _FENCE_ARRIVING.fullmatch(last) and open_fence(source, len(source) - len(last)):
        source = source[: len(source) - len(last)]
    return _live_html(source, media)


def streaming_markdown(text: str, frozen: int = 0, *, media: MediaShown = False) -> StreamingMarkdown:
    """The text after its first `frozen` characters, rendered for a live answer.

    A short tail is re-rendered whole. Once it grows long, the blocks before its last one settle;
    a single block that keeps growing (a long paragraph, a long code block) is split near its end,
    which the final render of the complete answer puts back together. A code block still open is
    a code block already: a tail that starts inside one is rendered after the line that opened it.
    """
    tail = text[frozen:]
    fence = open_fence(text, frozen) if frozen else ""
    if len(tail) <= _TAIL_FREEZE_CHARS:
        return StreamingMarkdown(frozen, "", _live_code(fence + tail, media))
    source = fence + tail
    plain = not fence and PLAIN_LINE.fullmatch(tail) is not None
    tokens = [] if plain else _markdown.parse(source, {"media": media})
    index, cut = (0, 0) if plain else _last_block_start(tokens, source.split("\n"))
    cut = max(0, cut - len(fence))  # in the text's characters (the opening line is not the text's)
    if len(tail) - cut > _TAIL_FREEZE_CHARS:
        cut = _soft_cut(tail, len(tail) - _TAIL_FREEZE_CHARS // 2)
        settled = fence + tail[:cut]
        more = open_fence(settled)  # the code block the rest of the tail is still in, if any
        return StreamingMarkdown(
            frozen + cut, _live_html(settled, media), _live_code(more + tail[cut:], media)
        )
    settled, rest = _render_tokens(tokens[:index], media), _render_tokens(tokens[index:], media)
    return StreamingMarkdown(frozen + cut, settled, rest)


# A2UI's Text takes "simple Markdown (without HTML, images, or links)": the same parser, then a
# narrower allow-list: links and images are dropped (their words stay), and no attribute is kept.
_A2UI_BLOCK_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "del", "h1", "h2", "h3",
    "h4", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_A2UI_INLINE_TAGS = {"strong", "em", "code", "del"}


def simple_markdown_html(text: str, *, inline: bool = False) -> SafeString:
    """A2UI Text as safe HTML: `inline` (a heading, a button) keeps only emphasis and code."""
    env = {"media": False, "words_only": True}
    if inline:
        rendered, tags = _markdown.renderInline(text.lstrip("#").strip(), env), _A2UI_INLINE_TAGS
    else:
        rendered, tags = _markdown.render(text, env), _A2UI_BLOCK_TAGS
    return mark_safe(nh3.clean(rendered, tags=tags, attributes={}, url_schemes=set()))

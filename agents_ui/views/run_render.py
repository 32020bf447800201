"""A run's transcript as HTML: the whole of it for a page, and its changes for the live stream.

The stream sends htmx out-of-band fragments: text is appended where it grew (so a long answer is
not sent again at every word), and the parts that changed in other ways are replaced whole.
Agents' Markdown is rendered with raw HTML disabled, then sanitised with nh3: nothing an agent
writes can run in the page.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import nh3
import pygments
from django.conf import settings
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.html import escape, format_html
from django.utils.safestring import mark_safe
from markdown_it import MarkdownIt
from pygments.formatters import HtmlFormatter
from pygments.lexers import get_lexer_by_name
from pygments.util import ClassNotFound

from agents_ui.decisions import CONTROL_NAMES, Plan
from agents_ui.models import AgentEndpoint, Conversation, Run
from agents_ui.runs.resume import answer_prefix, resume_shape
from agents_ui.sdk.agui.client_tools import CONFIRM_CHANGES, client_tool
from agents_ui.sdk.limits import safe_link
from agents_ui.sdk.transcript import Transcript
from agents_ui.views import activities, media
from agents_ui.views.state_tree import state_tree

_ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td", "del", "span", "img", "audio",
}  # fmt: skip
# Classes only come from the highlighter, images and audio from the media rule (_media_rule): with
# raw HTML disabled an agent cannot write a tag.
_ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "pre": {"class", "data-lang"},
    "span": {"class"},
    "ol": {"start"},
    "img": {"src", "alt", "data-media"},
    "audio": {"src", "controls", "preload", "data-media", "aria-label"},
}
# A data: URL stays only as the source of an image or audio element, and only as media.py made it.
_MEDIA_SOURCE = re.compile(r"data:(image|audio)/[a-z0-9.+-]+;base64,[A-Za-z0-9+/=]*")
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
    return format_html('<pre class="code" data-lang="{}"><code>{}</code></pre>', lang[:40], mark_safe(inner))


_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "highlight": _highlight}).enable(
    "table"
)
_default_validate_link = _markdown.validateLink


def _validate_link(url: str) -> bool:
    # markdown-it keeps data: URLs of images only; audio clips come as data: URLs too (media.py checks both).
    return _default_validate_link(url) or url[:11].lower() == "data:audio/"


_markdown.validateLink = _validate_link


def _media_rule(renderer: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A Markdown image: shown where the plan shows media (`env["media"]`), checked (media.py)."""
    token = tokens[idx]
    alt = renderer.renderInlineAsText(token.children or [], options, env)
    src = str(token.attrGet("src") or "")
    if not env.get("media"):
        word = "audio clip" if src[:11].lower() == "data:audio/" else "image"
        return format_html('<span class="media-note">[{}: {}]</span>', word, alt or "not shown")
    return render_to_string("agents_ui/run.html#media-inline", {"item": media.of_markdown(src, alt)})


_markdown.add_render_rule("image", _media_rule)


def _attribute(tag: str, attribute: str, value: str) -> str | None:
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


def markdown_html(text: str, *, media: bool = False) -> str:
    """An agent's Markdown as safe HTML; `media`: its images and audio are shown (checked)."""
    return _clean(_markdown.render(text or "", {"media": media}))


# One line of words, spaces and quiet punctuation, starting with a letter: Markdown makes it one plain
# paragraph, so a live answer that is still such a line needs no parser at each swap.
_PLAIN_LINE = re.compile(r"(?:[^\W\d_]|\[)(?:[^\W_]|[ ,.;'\"?%\[\]])*")
# What may follow such a line and leave it one plain line.
_PLAIN_MORE = re.compile(r"(?:[^\W_]|[ ,.;'\"?%\[\]])*")


def _live_html(text: str, media: bool = False) -> str:
    if _PLAIN_LINE.fullmatch(text):
        return f"<p>{html.escape(text.rstrip(), quote=False)}</p>\n"
    return markdown_html(text, media=media)


@dataclass(frozen=True)
class StreamingMarkdown:
    """A growing answer as HTML: what settled since last time (sent once, then kept) and the tail
    (re-rendered at every swap)."""

    frozen: int  # characters of the text settled so far
    settled_html: str  # the characters newly settled, after those settled before
    tail_html: str


def _render_tokens(tokens: list[Any], media: bool = False) -> str:
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


def _live_code(source: str, media: bool = False) -> str:
    """A live tail as HTML; the closing fence of an open code block, while it arrives, is not code."""
    last = source[source.rfind("\n") + 1 :]
    if last and _FENCE_ARRIVING.fullmatch(last) and open_fence(source, len(source) - len(last)):
        source = source[: len(source) - len(last)]
    return _live_html(source, media)


def streaming_markdown(text: str, frozen: int = 0, *, media: bool = False) -> StreamingMarkdown:
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
    plain = not fence and _PLAIN_LINE.fullmatch(tail) is not None
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


def safe_url(url: Any) -> str:
    """A link an agent gave, kept only when it is plain http(s)."""
    return safe_link(url) or ""


def shown_tail(text: str) -> tuple[str, int]:
    """The end of a text, at most AGENTS_UI_SHOWN_TEXT_CHARS long, and how many characters precede it.

    A run may hold tens of megabytes of text: a page shows the latest part of each, so it stays fast.
    """
    limit = settings.AGENTS_UI_SHOWN_TEXT_CHARS
    text = text or ""
    if len(text) <= limit:
        return text, 0
    return text[-limit:], len(text) - limit


def dom_id(prefix: str, value: str) -> str:
    """A stable, safe DOM id for an agent-chosen id (which may hold any character)."""
    return f"{prefix}-{hashlib.blake2s(value.encode(), digest_size=6).hexdigest()}"


def call_dom(run_id: Any, call_id: str) -> str:
    """A tool call's card id, scoped by run: AG-UI ids are not unique across the runs of a thread."""
    return dom_id("call", f"{run_id}:{call_id}")


def _maybe_json(value: Any) -> Any:
    """Answers often arrive as JSON text: show the document, not an escaped string."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def confirmed_call(name: str, args: Any) -> tuple[str, Any] | None:
    """The call a confirmation tool asks about, (name, arguments): ADK's ``adk_request_confirmation``
    carries it as ``originalFunctionCall``."""
    if name != "adk_request_confirmation" or not isinstance(args, dict):
        return None
    original = args.get("originalFunctionCall")
    if not isinstance(original, dict) or not isinstance(original.get("name"), str):
        return None
    return original["name"][:200], original.get("args") if original.get("args") is not None else {}


def plain_arguments(args: Any) -> list[tuple[str, str]]:
    """Arguments as "name: value" lines, when each is a plain value; [] otherwise (shown as JSON)."""
    if not isinstance(args, dict) or not args:
        return []
    if not all(isinstance(v, str | int | float | bool) or v is None for v in args.values()):
        return []
    return [(str(k), _plain(v)) for k, v in args.items()]


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return "none" if value is None else str(value)


def pretty_json(value: Any) -> str:
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return str(value)


def seconds_label(seconds: float) -> str:
    """A duration as the run status says it: "12 s", "2 min 5 s" (workspace.js says it the same way)."""
    whole = int(seconds)
    minutes, rest = divmod(whole, 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


@dataclass(frozen=True)
class Progress:
    """How far a run has gone against the bounds its agent declares (`execution.maxIterations`,
    `maxExecutionTime`), counted from its STEP_STARTED events and its clock; and whether its agent
    answers all at once (`transport.streaming: false`), which leaves nothing to show but the clock."""

    steps: int  # steps begun
    max_steps: int | None
    started_at: datetime
    elapsed: float  # seconds, up to now or to the end of the run
    max_seconds: float | None
    live: bool
    whole_answer: bool

    @property
    def counts_steps(self) -> bool:
        return self.max_steps is not None or self.steps > 0

    @property
    def elapsed_label(self) -> str:
        return seconds_label(self.elapsed)

    @property
    def max_label(self) -> str:
        return seconds_label(self.max_seconds) if self.max_seconds is not None else ""

    @property
    def over_steps(self) -> bool:
        return self.max_steps is not None and self.steps > self.max_steps

    @property
    def over_time(self) -> bool:
        return self.max_seconds is not None and self.elapsed > self.max_seconds

    @property
    def timed(self) -> bool:
        """The clock is shown: a bound to hold it against, or nothing else to watch."""
        return self.max_seconds is not None or (self.whole_answer and self.live)


@dataclass
class RunView:
    """What the run templates read: the run, its transcript, and the plan it is shown under."""

    run: Run
    transcript: Transcript
    plan: Plan
    can_approve: bool = True
    live: bool = False
    # Decisions already recorded for this run's requests: request id -> ApprovalRecord.
    decided: dict[str, Any] = field(default_factory=dict)
    # The conversation's newest turn: the one that can be answered again.
    last: bool = True
    # The person's own ratings of this conversation's answers: message id -> "up" | "down".
    feedback: dict[str, str] = field(default_factory=dict)
    # How long the agent thought, in seconds, once known (see thought_seconds).
    thought: int | None = None
    # Live answers as last rendered: message id -> characters settled (the stream goes on from there).
    settled: dict[str, int] = field(default_factory=dict)
    # The person's answers to this run's calls, sent with a later run: call id -> ToolAnswer JSON.
    answers: dict[str, dict[str, Any]] = field(default_factory=dict)
    # False once a later run exists: a call left without a result can then no longer be answered.
    answerable: bool = True
    # The person's actions on this run's A2UI surfaces, sent with later runs (views/activities.py).
    a2ui_sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The thread's A2UI surfaces as earlier runs left them (or a function giving them, while live).
    a2ui_prior: Any = None

    def shows(self, message: Any) -> bool:
        return message.role == "assistant" and message.text_length > 0

    @property
    def dom(self) -> str:
        return f"run-{self.run.pk}"

    def items(self) -> list[dict[str, Any]]:
        """Assistant messages and tool calls, in the order the agent started them."""
        transcript = self.transcript
        entries: list[tuple[int, int, dict[str, Any]]] = []
        for message in transcript.messages:
            if self.shows(message):
                entries.append((message.position, 0, {"kind": "message", "m": self.message_view(message)}))
        for call in transcript.tool_calls.values():
            entries.append((call.position, 1, {"kind": "call", "c": self.call_view(call)}))
        for record in transcript.activities.values():
            entries.append((record.position, 2, {"kind": "activity", "a": self.activity_view(record)}))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        return [item for _, _, item in entries]

    def message_view(self, message: Any) -> dict[str, Any]:
        node = self.transcript.subagent(message.subagent_run_id) if message.subagent_run_id else None
        text, hidden = shown_tail(message.text)
        live = None
        if not message.complete:
            live = streaming_markdown(message.text, hidden, media=self.shows_media)
            self.settled[message.id] = live.frozen
        return {
            "id": message.id,
            "dom": dom_id("msg", message.id),
            "text": text,
            "hidden": hidden,
            "html": markdown_html(text, media=self.shows_media) if message.complete else "",
            "settled_html": live.settled_html if live else "",
            "tail_html": live.tail_html if live else "",
            "complete": message.complete,
            "streaming": not message.complete and self.run.status in (Run.Status.PENDING, Run.Status.RUNNING),
            "subagent": node.name if node else "",
            "feedback": self.feedback.get(message.id, ""),
        }

    @property
    def shows_media(self) -> bool:
        """Images and audio in answers are shown: the plan's media-output control is."""
        return self.plan is not None and self.plan["media-output"].shown

    def activity_view(self, record: Any) -> dict[str, Any]:
        return activities.activity_view(self, record)

    @property
    def a2ui_action(self) -> dict[str, Any] | None:
        """The person's action on a surface that this run takes to the agent."""
        action = (self.run.request or {}).get(activities.ACTION_KEY)
        return action if isinstance(action, dict) else None

    def call_view(self, call: Any) -> dict[str, Any]:
        original = confirmed_call(call.name, call.args)
        # Approved with edits: the agent ran the call with the person's arguments, not its own.
        record = self.decision_of(call)
        edited = record is not None and record.edited_arguments is not None
        args, args_hidden = shown_tail(
            pretty_json(record.edited_arguments if edited else call.args)
            if call.complete and call.args_error is None
            else call.args_text
        )
        found, more = media.of_parts(call.result) if call.has_result else ([], 0)
        # A result with media shows its text beside them, never their bytes as JSON.
        shown = media.text_of_parts(call.result) if found or more else call.result_display
        result, result_hidden = shown_tail(shown if call.has_result else "")
        return {
            "id": call.id,
            "dom": call_dom(self.run.pk, call.id),
            "name": call.name,
            "confirms": original[0] if original else "",
            "complete": call.complete,
            "args": args,
            "args_hidden": args_hidden,
            "args_error": call.args_error,
            # What the agent asked, as the decision recorded it (a later snapshot may rewrite the call).
            "edited_from": json.dumps(record.arguments or call.args, ensure_ascii=False, sort_keys=True)
            if edited
            else "",
            "has_result": call.has_result,
            # A call an interrupt asks about waits for the person, then shows their decision: a
            # confirmation call (ADK's) never gets a result of its own (docs/PROTOCOLS.md 1.3).
            "decided": record_view(record) if record is not None and not call.has_result else None,
            "asking": record is None and not call.has_result and self._asks_about(call),
            "result": result,
            "result_hidden": result_hidden,
            "result_error": call.result_error,
            "status": call.status,
            "media": found if self.shows_media else [],
            "media_more": more if self.shows_media else 0,
            "media_hidden": len(found) + more if not self.shows_media else 0,
            **self._client_call(call),
        }

    def _client_call(self, call: Any) -> dict[str, Any]:
        """A call the client answers: one of its own tools, or any call left without a result when
        the run ended (the agent expected the client to run it), unless an approval holds the run."""
        tool = client_tool(call.name, call.args) if call.complete and call.args_error is None else None
        answer = self.answers.get(call.id)
        ended = self.run.status == Run.Status.COMPLETED and not self.transcript.observed.interrupts
        awaiting = (
            call.complete and not call.has_result and answer is None and ended and self.answerable
        ) and not self._external()
        if not (tool or awaiting or answer):
            return {"client": None, "awaiting": False}
        shown = answer["content"] if answer else call.result if call.has_result else None
        # A confirmation an approval interrupt asks too (Agent Framework's confirm_changes): the
        # person's decision on that interrupt answers it.
        decision = self.decision_of(call) if tool is not None and tool.confirms else None
        decides = self._deciding(tool.confirms) if tool is not None and tool.confirms else ""
        editing = decides and self.plan is not None
        asked = next((i for i in self.interrupts() if i["id"] == decides), None) if editing else None
        return {
            "client": tool,
            "awaiting": awaiting,
            "decides": decides,
            # The interrupt takes edited arguments: the card offers them, as the approval form would.
            "decides_edit": asked if asked is not None and asked["editable"] else None,
            "decision": record_view(decision) if decision is not None else None,
            "answered": answer is not None or decision is not None or (tool is not None and call.has_result),
            "dismissed": bool(answer and answer.get("dismissed")),
            # Kept until the run's other calls have their answers too; then all go at once.
            "kept": bool(answer and answer.get("kept")),
            "answer": pretty_json(_maybe_json(shown)) if shown is not None else "",
            "answer_value": _maybe_json(shown) if shown is not None else None,
            "has_args": call.args not in (None, {}, []),
        }

    def decision_of(self, call: Any) -> Any:
        """The recorded decision on the interrupt that asked about this call (None without one): its
        own, or for a confirmation tool the one naming the call it confirms."""
        if not self.decided:
            return None
        target = call.id
        if call.name == CONFIRM_CHANGES and isinstance(call.args, dict):
            target = str(call.args.get("function_call_id") or "")
        for interrupt in self.transcript.open_interrupts:
            if interrupt.tool_call_id == target and interrupt.id in self.decided:
                return self.decided[interrupt.id]
        return None

    def _asks_about(self, call: Any) -> bool:
        """An interrupt of this run, still to decide, is about this call."""
        decided = self.decided or {}
        return any(
            i.tool_call_id == call.id and i.id not in decided for i in self.transcript.open_interrupts
        )

    def _deciding(self, call_id: str) -> str:
        """The open interrupt about this call that its confirmation card decides ("" when none)."""
        decides = self.confirmed_by_card()
        for interrupt in self.transcript.open_interrupts:
            if interrupt.id == decides and interrupt.tool_call_id == call_id:
                return decides
        return ""

    def confirmed_by_card(self) -> str:
        """The open interrupt a confirmation card (Agent Framework's confirm_changes) decides, so the
        person sees one way to answer one question: the approval form leaves it to the card.

        Only the run's one interrupt still to decide: a resume answers every open interrupt at once,
        and a card posts its own decision only, so with several the approval form decides them all.
        """
        if not self.can_approve:
            return ""
        decided = self.decided or {}
        waiting = [
            i for i in self.transcript.open_interrupts if i.id not in decided and not _past(i.expires_at)
        ]
        if len(waiting) != 1 or not waiting[0].tool_call_id:
            return ""
        for call in self.transcript.tool_calls.values():
            if call.name != CONFIRM_CHANGES or not call.complete or call.args_error is not None:
                continue
            tool = client_tool(call.name, call.args)
            if tool is not None and tool.confirms == waiting[0].tool_call_id:
                return waiting[0].id
        return ""

    def _external(self) -> bool:
        """An external agent's run: its calls are its own to finish (never a database query here)."""
        conversation = self.run.conversation
        if not Conversation.endpoint.is_cached(conversation):
            return False
        return conversation.endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL

    @property
    def said_anything(self) -> bool:
        t = self.transcript
        return any(self.shows(m) for m in t.messages) or bool(t.tool_calls) or bool(t.activities)

    def reasoning(self) -> list[dict[str, Any]]:
        return [
            {
                "id": r.id,
                "dom": dom_id("why", r.id),
                "text": shown_tail(r.text)[0],
                "hidden": shown_tail(r.text)[1],
                "encrypted": r.encrypted,
                "complete": r.complete,
            }
            for r in self.transcript.reasoning
        ]

    def progress(self) -> Progress | None:
        """None where the agent declares no bound, shows no steps and streams as usual."""
        if self.plan is None:
            return None
        run, limits = self.run, self.plan["limits"].details
        steps = len(self.transcript.steps)
        max_steps = limits.get("max_iterations")
        max_ms = limits.get("max_execution_time")
        whole = self.plan["transport"].details.get("stream") is False
        if max_steps is None and max_ms is None and not steps and not whole:
            return None
        live = run.status in (Run.Status.PENDING, Run.Status.RUNNING)
        started = run.started_at or run.created_at or timezone.now()
        end = timezone.now() if live or run.finished_at is None else run.finished_at
        return Progress(
            steps=steps,
            max_steps=max_steps,
            started_at=started,
            elapsed=max((end - started).total_seconds(), 0.0),
            max_seconds=max_ms / 1000 if max_ms is not None else None,
            live=live,
            whole_answer=whole,
        )

    @property
    def answered(self) -> bool:
        """The answer has begun (or the run is over): the reasoning folds away."""
        return self.run.is_finished or any(
            self.shows(m) for m in self.transcript.messages if m.role == "assistant"
        )

    def sources(self) -> list[dict[str, str]]:
        """Sources an agent listed in its structured result ({"sources": [{title, url, ...}]})."""
        outcome = self.transcript.outcome
        result = outcome.result if outcome is not None else None
        found = result.get("sources") if isinstance(result, dict) else None
        cards = []
        for source in found if isinstance(found, list) else []:
            if not isinstance(source, dict):
                continue
            url = safe_url(source.get("url"))
            title = str(source.get("title") or source.get("name") or url or "")[:300]
            if title:
                cards.append(
                    {
                        "title": title,
                        "url": url,
                        "publisher": str(source.get("publisher") or "")[:200],
                        "snippet": str(source.get("snippet") or "")[:600],
                    }
                )
            if len(cards) >= 50:
                break
        return cards

    def subagents(self) -> list[Any]:
        return self.transcript.subagents

    def interrupts(self) -> list[dict[str, Any]]:
        """Open AG-UI interrupts of this run, with the tool call each one is about."""
        found = []
        for interrupt in self.transcript.open_interrupts:
            if interrupt.id in self.decided:
                continue
            call = self.transcript.tool_calls.get(interrupt.tool_call_id or "")
            schema = interrupt.response_schema or {}
            metadata = interrupt.metadata if isinstance(interrupt.metadata, dict) else {}
            tool = call.name if call else ""
            args = call.args if call and call.args is not None else {}
            original = confirmed_call(tool, args)
            if original:  # a confirmation tool wrapping the call it asks about: show that call
                tool, args = original
            info = self._tool_info(tool)
            # What the agent's schema takes: edited arguments or not, a form beside yes or no.
            shape = resume_shape(schema)
            edits = self.plan["approvals"].details.can_edit(schema) and shape.edits
            found.append(
                {
                    "id": interrupt.id,
                    "dom": dom_id("int", interrupt.id),
                    "reason": interrupt.reason,
                    "message": interrupt.message,
                    "tool": tool,
                    "args": args,
                    "args_json": pretty_json(args),
                    "args_list": plain_arguments(args),
                    "expires_at": interrupt.expires_at,
                    "editable": edits,
                    "side_effect_class": metadata.get("sideEffectClass") or info.get("side_effect_class"),
                    "idempotency": metadata.get("idempotency") or info.get("idempotency"),
                    "schema": pretty_json(schema) if schema else "",
                    "fields": shape.fields,
                    "field_prefix": answer_prefix(interrupt.id),
                    "answer_problem": shape.problem,
                    "expired": _past(interrupt.expires_at),
                }
            )
        return found

    def open_interrupts(self) -> list[dict[str, Any]]:
        """The interrupts a person can still decide (not expired) with the approval form: not one
        its confirmation card decides."""
        card = self.confirmed_by_card()
        return [i for i in self.interrupts() if not i["expired"] and i["id"] != card]

    @property
    def counting_down(self) -> bool:
        """An expiry counts down only while the agent waits: not once the run was stopped or ended."""
        return self.run.status in (Run.Status.PENDING, Run.Status.RUNNING, Run.Status.INTERRUPTED)

    def records(self) -> list[dict[str, Any]]:
        """AG-UI: what was decided on this run's interrupts, and those that expired undecided."""
        # In-run approvals sit with their own request (approvals()).
        external = {a.id for a in self.transcript.in_run_approvals}
        found = [record_view(r) for r in self.decided.values() if r.request_id not in external]
        for i in self.interrupts():
            if i["expired"]:
                found.append(
                    {"label": "Expired", "tone": "warn", "tool": i["tool"] or i["reason"], "at": None,
                     "expired_at": i["expires_at"], "by": "", "sent": "", "asked": i["args_json"],
                     "request_id": i["id"]}
                )  # fmt: skip
        return found

    def approvals(self) -> list[dict[str, Any]]:
        """External agents' approval requests (pending and decided) of this run."""
        found = []
        for approval in self.transcript.in_run_approvals:
            info = self._tool_info(approval.name or "")
            found.append(
                {
                    "id": approval.id,
                    "dom": dom_id("apr", approval.id),
                    "tool": approval.name,
                    "args_json": pretty_json(approval.input or {}),
                    "side_effect_class": approval.side_effect_class or info.get("side_effect_class"),
                    "expires_at": approval.expires_at,
                    "decision": approval.decision,
                    "pending": approval.pending,
                    "idempotency": info.get("idempotency"),
                    "schema": info.get("schema"),
                    "editable": self.plan["approvals"].details.can_edit(),
                    "record": None if approval.pending else self._external_record(approval),
                    "stale": approval.pending and not self.counting_down,
                }
            )
        return found

    def _external_record(self, approval: Any) -> dict[str, Any]:
        """An external agent's resolved request, in the same words as an AG-UI decision."""
        record = self.decided.get(approval.id)
        if record is not None:
            return record_view(record)
        expired = approval.decision != "approve" and _past(approval.expires_at)
        label = "Expired" if expired else "Approved" if approval.decision == "approve" else "Rejected"
        return {
            "label": label,
            "tone": "warn" if expired else "ok" if approval.decision == "approve" else "bad",
            "tool": approval.name,
            "at": None,
            "expired_at": approval.expires_at if expired else None,
            "by": "" if expired else "someone outside this product",
            "sent": "",
            "asked": pretty_json(approval.input or {}),
            "request_id": approval.id,
        }

    def _tool_info(self, name: str) -> dict[str, Any]:
        for tool in self.plan["tools"].details.get("tools") or []:
            if tool.get("name") == name:
                return tool
        for tool in self.plan["approvals"].details.get("tools_needing_approval") or []:
            if tool.get("name") == name:
                return tool
        return {}

    def modules(self) -> list[dict[str, Any]]:
        found = []
        for kind, data in self.transcript.modules:
            entry: dict[str, Any] = {"type": kind, "json": pretty_json(data)}
            if kind == "citation" and isinstance(data, dict):
                source = data.get("source") if isinstance(data.get("source"), dict) else {}
                entry.update(
                    text=data.get("text"), title=source.get("title"), url=safe_url(source.get("url"))
                )
            elif kind == "table" and isinstance(data, dict) and isinstance(data.get("rows"), list):
                entry.update(
                    columns=data.get("columns") or [], rows=[r for r in data["rows"] if isinstance(r, list)]
                )
            found.append(entry)
        return found

    @property
    def structured_result(self) -> str:
        """AG-UI RUN_FINISHED.result: the machine-readable answer, when the agent gives one."""
        outcome = self.transcript.outcome
        return pretty_json(outcome.result) if outcome is not None and outcome.result is not None else ""

    def grounding(self) -> list[dict[str, Any]]:
        return [
            {"title": g.title, "url": safe_url(g.url), "snippet": g.snippet}
            for g in self.transcript.grounding
        ]

    def state_json(self) -> str:
        return pretty_json(self.transcript.state if self.transcript.state is not None else {})

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"rv": self, "run": self.run, "plan": self.plan, **extra}


def record_view(record: Any) -> dict[str, Any]:
    """A decision as the page says it: who, when, and the arguments the agent was given."""
    edited = record.edited_arguments is not None
    return {
        "label": record.get_decision_display(),
        "tone": "bad" if record.decision == record.Decision.REJECTED else "ok",
        "tool": record.tool_name,
        "at": record.decided_at,
        "expired_at": None,
        "by": record.decided_by.get_username() if record.decided_by else "a deleted user",
        "sent": ""
        if record.decision == record.Decision.REJECTED
        else pretty_json(record.edited_arguments if edited else record.arguments),
        "asked": pretty_json(record.arguments) if edited else "",
        "request_id": record.request_id,
    }


def _past(moment: str | None) -> bool:
    if not moment:
        return False
    try:
        when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return False
    return (when if when.tzinfo else when.replace(tzinfo=UTC)) <= timezone.now()


def render_run(view: RunView) -> str:
    return render_to_string("agents_ui/run.html#run", view.context())


@dataclass
class StreamRenderer:
    """Remembers what the browser has, and renders only what changed since (as OOB fragments).

    Most events of a live run only lengthen a text the browser already shows. While nothing else
    changed (the transcript's revision, the run's status and the plan are as last rendered), an
    update sends just the new characters and looks at nothing else.
    """

    view: RunView
    # The run this process drives, when it does: it timed the agent's reasoning.
    timer: Any = None
    # The thread's earlier runs: a resume's results go on the cards they show.
    earlier: list[RunView] = field(default_factory=list)
    # The decisions recorded on those runs: run id -> request id -> record (their cards show them).
    earlier_decided: dict[Any, dict[str, Any]] = field(default_factory=dict)
    _text: dict[str, int] = field(default_factory=dict)  # message id -> characters sent
    _settled: dict[str, int] = field(default_factory=dict)  # message id -> characters settled
    # Live answers whose tail the browser shows as one plain line it can append to (`-line`).
    _plain: set[str] = field(default_factory=set)
    _complete: set[str] = field(default_factory=set)
    _reasoning: dict[str, int] = field(default_factory=dict)
    _calls: dict[str, tuple] = field(default_factory=dict)
    _activities: dict[str, Any] = field(default_factory=dict)
    _signatures: dict[str, Any] = field(default_factory=dict)
    _doms: dict[tuple[str, str], str] = field(default_factory=dict)
    # What the last full look saw: (transcript revision, run status, run error), and the plan.
    _seen: tuple | None = None
    _seen_plan: Any = None
    _reasoning_shown: bool = False
    _state_revision: int = -1  # the revision the state panel was last looked at
    _answered: dict[tuple[Any, str], tuple] = field(default_factory=dict)
    # Whether this stream sent the state panel whole (the page may have it hidden: nothing declared
    # state when it was rendered).
    _state_panel_shown: bool = False

    def first(self) -> str:
        """Everything, replacing what the page had: the page and the stream may be a moment apart."""
        self._remember_all()
        self.view.settled = {}
        html = self._swap("run-body", self.view.context())
        self._settled = dict(self.view.settled)
        self._plain = set()
        return html

    def update(self) -> str:
        if self._seen == self._now() and self.view.plan is self._seen_plan:
            html = self._text_growth()
            if html is not None:
                return html
        return self._full_update()

    def _now(self) -> tuple:
        view = self.view
        return view.transcript.revision, view.run.status, view.run.error

    def _see(self) -> None:
        self._time_thought()
        self._seen, self._seen_plan = self._now(), self.view.plan
        self._reasoning_shown = self.view.plan["reasoning"].shown

    def _time_thought(self) -> None:
        """While live, the run this process drives timed the reasoning; after, the event log says it."""
        view = self.view
        if view.thought is not None or not view.transcript.reasoning or not view.answered:
            return
        view.thought = self.timer.thought_seconds if self.timer is not None else None

    def _dom(self, prefix: str, value: str) -> str:
        key = (prefix, value)
        found = self._doms.get(key)
        if found is None:
            found = self._doms[key] = dom_id(prefix, value)
        return found

    def _grow_message(self, message: Any) -> str:
        """A live answer's new Markdown: what settled, appended; the tail, replaced.

        While the tail is one plain line (most of a streamed answer's time), its new characters are
        appended to that line, as cheap as plain text: the tail is re-rendered only when Markdown
        may change what it shows."""
        dom = self._dom("msg", message.id)
        if message.id in self._plain:
            new = message.text_since(self._text.get(message.id, 0))
            if _PLAIN_MORE.fullmatch(new):
                return format_html('<span hx-swap-oob="beforeend:#{}-line">{}</span>', dom, new)
            self._plain.discard(message.id)
        frozen = self._settled.get(message.id, 0)
        tail = message.text_since(frozen)
        # A plain line inside an open code block is code: only outside one may it grow as a line.
        if _PLAIN_LINE.fullmatch(tail) and not (frozen and open_fence(message.text, frozen)):
            self._plain.add(message.id)
            return format_html(
                '<div class="md-tail" id="{}-tail" hx-swap-oob="true"><p id="{}-line">{}</p></div>',
                dom,
                dom,
                tail,
            )
        live = streaming_markdown(message.text, frozen, media=self.view.shows_media)
        self._settled[message.id] = live.frozen
        html = format_html(
            '<div class="md-tail" id="{}-tail" hx-swap-oob="true">{}</div>', dom, mark_safe(live.tail_html)
        )
        if live.settled_html:
            settled = format_html(
                '<div hx-swap-oob="beforeend:#{}-done">{}</div>', dom, mark_safe(live.settled_html)
            )
            html = settled + html
        return html

    def _append(self, text: str, prefix: str, value: str) -> str:
        """New characters at the end of a text the browser shows (escaped)."""
        return format_html('<span hx-swap-oob="beforeend:#{}-text">{}</span>', self._dom(prefix, value), text)

    def _text_growth(self) -> str | None:
        """The new characters of the texts shown; None when a text appeared that is not shown yet."""
        parts: list[str] = []
        if not self._append_growth(parts):
            return None
        return "".join(parts)

    def _append_growth(self, parts: list[str]) -> bool:
        """Adds the new characters of every text shown to `parts`; False when a text appeared that
        the browser does not show yet (the body must be re-rendered)."""
        view, transcript = self.view, self.view.transcript
        for message in transcript.messages:
            sent = self._text.get(message.id)
            if sent is None:
                if view.shows(message):
                    return False
                continue
            length = message.text_length
            if length > sent and message.id not in self._complete:
                parts.append(self._grow_message(message))
                self._text[message.id] = length
        for entry in transcript.reasoning if self._reasoning_shown else ():
            sent = self._reasoning.get(entry.id)
            if sent is None:
                return False
            length = entry.text_length
            if length > sent and not entry.encrypted:
                parts.append(self._append(entry.text_since(sent), "why", entry.id))
                self._reasoning[entry.id] = length
        return True

    def _full_update(self) -> str:
        view, transcript = self.view, self.view.transcript
        self._see()
        parts: list[str] = []
        for message in transcript.messages:
            if message.complete and message.id in self._text and message.id not in self._complete:
                self._complete.add(message.id)
                self._text[message.id] = message.text_length
                parts.append(self._swap("message", view.context(m=view.message_view(message))))
        structural = not self._append_growth(parts)
        for call in transcript.tool_calls.values():
            signature = self._call_signature(call)
            previous = self._calls.get(call.id)
            if previous is None:
                structural = True
            elif previous != signature:
                self._calls[call.id] = signature
                parts.append(self._swap("tool-call", view.context(c=view.call_view(call))))
        for record in transcript.activities.values():
            signature = activities.signature(record)
            previous = self._activities.get(record.message_id)
            if previous is None:
                structural = True
            elif previous != signature:
                self._activities[record.message_id] = signature
                parts.append(self._swap("activity", view.context(a=view.activity_view(record))))
        if not structural:
            for name, signature, partial in self._sections():
                if self._signatures.get(name) != signature:
                    self._signatures[name] = signature
                    parts.append(self._swap(partial, view.context()))
        if structural:
            return self.first()
        return "".join(parts)

    def earlier_fragments(self) -> str:
        """The cards of earlier runs whose calls this run answered (a resume), when they changed."""
        parts = []
        for call_id, record in self.view.transcript.answered_earlier.items():
            owner = next((v for v in self.earlier if v.transcript.tool_calls.get(call_id) is record), None)
            if owner is None:
                continue
            signature = (record.has_result, record.status, len(record.args_text), record.result_error)
            key = (owner.run.pk, call_id)
            if self._answered.get(key) != signature:
                self._answered[key] = signature
                parts.append(self._swap("tool-call", owner.context(c=owner.call_view(record))))
        return "".join(parts)

    def explain_fragment(self) -> str:
        """The workspace's reasons for each control, under the plan the run's evidence changed."""
        controls = [self.view.plan[name] for name in CONTROL_NAMES]
        return render_to_string(
            "agents_ui/workspace.html#explain-controls", {"controls": controls, "oob": True}
        )

    def _call_signature(self, call: Any) -> tuple:
        # The run's status too: a call left without a result becomes answerable when the run ends.
        signature = (call.complete, call.has_result, len(call.args_text), call.status, self.view.run.status)
        return (*signature, self.view.shows_media)

    def state_fragment(self) -> str:
        """The workspace's state panel, when the state document changed."""
        transcript = self.view.transcript
        state = transcript.state
        if state is None or self._state_revision == transcript.revision:
            return ""
        self._state_revision = transcript.revision  # only events that move the revision change it
        signature = pretty_json(state)
        if self._signatures.get("state") == signature:
            return ""
        self._signatures["state"] = signature
        tree = state_tree(state)
        shown = self.view.plan["state"].visible
        if shown and not self._state_panel_shown:
            # The page's panel may be hidden (nothing declared state): the first document shows it whole.
            self._state_panel_shown = True
            return render_to_string(
                "agents_ui/workspace.html#state",
                {"plan": self.view.plan, "state": signature, "tree": tree, "oob": True},
            )
        return render_to_string(
            "agents_ui/state_document.html", {"state": signature, "tree": tree, "oob": True}
        )

    def _sections(self) -> list[tuple[str, Any, str]]:
        t = self.view.transcript
        return [
            (
                "reasoning",
                (self.view.answered, self.view.run.status, tuple(r.encrypted for r in t.reasoning)),
                "reasoning",
            ),
            ("subagents", _subagent_signature(t.subagents), "subagents"),
            (
                "approvals",
                (
                    len(t.open_interrupts),
                    tuple((a.id, a.decision) for a in t.approvals.values()),
                    self.view.counting_down,  # a stopped run's request stops counting down
                ),
                "approvals",
            ),
            ("extras", (len(t.modules), len(t.grounding), len(t.artifacts), t.outcome is not None), "extras"),
            ("task", (t.task.revision, t.task.state) if t.task else None, "a2a-task"),
            (
                "status",
                (
                    self.view.run.status,
                    self.view.run.error,
                    t.outcome is not None,
                    len(t.errors),
                    len(t.pending_approvals),
                    len(t.steps),
                ),
                "status",
            ),
        ]

    def _remember_all(self) -> None:
        t = self.view.transcript
        self._see()
        self._text = {m.id: m.text_length for m in t.messages if self.view.shows(m)}
        self._complete = {m.id for m in t.messages if self.view.shows(m) and m.complete}
        self._reasoning = {r.id: r.text_length for r in t.reasoning}
        self._calls = {c.id: self._call_signature(c) for c in t.tool_calls.values()}
        self._activities = {a.message_id: activities.signature(a) for a in t.activities.values()}
        state = self._signatures.get("state")
        self._signatures = {name: signature for name, signature, _ in self._sections()}
        if state is not None:
            self._signatures["state"] = state

    @staticmethod
    def _swap(partial: str, context: dict[str, Any]) -> str:
        """A partial of run.html whose root (it carries its id) replaces the element with that id."""
        return render_to_string(f"agents_ui/run.html#{partial}", {**context, "oob": True})


def _subagent_signature(nodes: list[Any]) -> tuple:
    return tuple((n.run_id, n.status, _subagent_signature(n.children)) for n in nodes)

"""The live stream's differ: what changed in a run since the browser last saw it, as htmx
out-of-band fragments.

Text is appended where it grew (so a long answer is not sent again at every word), and the parts
that changed in other ways are replaced whole, each rendered from its partial of run.html.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.template.loader import render_to_string
from django.utils.html import conditional_escape

from agents_ui.decisions import CONTROL_NAMES
from agents_ui.display import activities
from agents_ui.display.markdown import PLAIN_LINE, PLAIN_MORE, open_fence, streaming_markdown
from agents_ui.display.run_view import RunView
from agents_ui.display.state_tree import state_tree
from agents_ui.display.values import dom_id, pretty_json


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

    def resume(self) -> str:
        """A stream that goes on where the browser's last one stopped (a reconnect, perhaps to
        another process): this renderer was given what the browser has (``first()`` at the browser's
        cursor, its HTML not sent). What grows is sent whole once, so that this renderer and the
        browser agree on where each text goes on: the live answers, the reasoning, the status.
        The rest of the run (its tool calls, approvals and their forms, what is open) stays as the
        person left it."""
        view = self.view
        view.settled = {}
        parts = [self._swap("reasoning", view.context()), self._swap("status", view.context())]
        self._reasoning = {r.id: r.text_length for r in view.transcript.reasoning}
        for message in view.transcript.messages:
            if message.id not in self._text or message.id in self._complete or not view.shows(message):
                continue
            parts.append(self._swap("message", view.context(answer=view.message_view(message))))
            self._text[message.id] = message.text_length
            self._settled[message.id] = view.settled.get(message.id, 0)
            self._plain.discard(message.id)
            if message.complete:
                self._complete.add(message.id)
        return "".join(parts)

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
            if PLAIN_MORE.fullmatch(new):
                return _fragment("answer-line-growth", dom=dom, text=new)
            self._plain.discard(message.id)
        frozen = self._settled.get(message.id, 0)
        tail = message.text_since(frozen)
        # A plain line inside an open code block is code: only outside one may it grow as a line.
        if PLAIN_LINE.fullmatch(tail) and not (frozen and open_fence(message.text, frozen)):
            self._plain.add(message.id)
            return _fragment("answer-tail", dom=dom, line=tail, oob=True)
        live = streaming_markdown(message.text, frozen, media=self.view.media_shown)
        self._settled[message.id] = live.frozen
        html = _fragment("answer-tail", dom=dom, html=live.tail_html, oob=True)
        if live.settled_html:
            html = _fragment("answer-settled", dom=dom, html=live.settled_html) + html
        return html

    def _append(self, text: str, prefix: str, value: str) -> str:
        """New characters at the end of a text the browser shows (escaped)."""
        return _fragment("text-growth", dom=self._dom(prefix, value), text=text)

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
                parts.append(self._swap("message", view.context(answer=view.message_view(message))))
        structural = not self._append_growth(parts)
        for call in transcript.tool_calls.values():
            signature = self._call_signature(call)
            previous = self._calls.get(call.id)
            if previous is None:
                structural = True
            elif previous != signature:
                self._calls[call.id] = signature
                parts.append(self._swap("tool-call", view.context(call=view.call_view(call))))
        for record in transcript.activities.values():
            signature = activities.signature(record)
            previous = self._activities.get(record.message_id)
            if previous is None:
                structural = True
            elif previous != signature:
                self._activities[record.message_id] = signature
                parts.append(self._swap("activity", view.context(activity=view.activity_view(record))))
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
                parts.append(self._swap("tool-call", owner.context(call=owner.call_view(record))))
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
                (
                    self.view.answered,
                    self.view.run.status,
                    self.view.thought,  # "Thought for N s" once known, whichever swap learns it
                    tuple(r.encrypted for r in t.reasoning),
                ),
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
            ("task", (t.task.revision, t.task.state) if t.task else None, "run-task"),
            (
                "status",
                (
                    self.view.run.status,
                    self.view.run.error,
                    t.outcome is not None,
                    len(t.errors),
                    len(t.pending_approvals),
                    len(t.steps),
                    bool(t.usage),
                    self.view.queued_ahead,
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


def _fragment(partial: str, **context: Any) -> str:
    """One of run.html's per-delta fragments: what grew, to append or swap where it grew."""
    if partial in STAMPED and not settings.DEBUG:
        return _stamped(partial, context)
    return render_to_string(f"agents_ui/run.html#{partial}", context)


# The fragments sent for nearly every delta hold no logic, only their values: each is rendered once
# with a marker for each value, and filled in from then on, escaped as the template escapes them (a
# template render per delta was most of a stream's cost). DEBUG renders them each time, so an edit
# of run.html shows at once.
STAMPED = {"answer-line-growth": ("dom", "text"), "text-growth": ("dom", "text")}
_MARK = "\x00"
_stamps: dict[str, list[str]] = {}


def _stamped(partial: str, context: dict[str, Any]) -> str:
    pieces = _stamps.get(partial)
    if pieces is None:
        marked = render_to_string(
            f"agents_ui/run.html#{partial}", {name: f"{_MARK}{name}{_MARK}" for name in STAMPED[partial]}
        )
        pieces = _stamps[partial] = marked.split(_MARK)
    # Even pieces are the template's own text, odd ones name a value.
    return "".join(
        piece if i % 2 == 0 else conditional_escape(context[piece]) for i, piece in enumerate(pieces)
    )

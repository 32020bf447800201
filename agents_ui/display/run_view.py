"""A run as the run templates show it: the view-model of its transcript under its plan, made of
typed cards (display/cards.py), and the page render of it. Its changes for the live stream are
display/stream_diff.py's."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone

from agents_ui.decisions import Plan
from agents_ui.display import activities, media
from agents_ui.display.approvals import approval_cards, approval_forms, decision_card, past
from agents_ui.display.cards import (
    ActivityCard,
    ApprovalCard,
    ApprovalForm,
    MessageCard,
    ModuleCard,
    ReasoningCard,
    RunItem,
    SourceCard,
    ToolCallCard,
)
from agents_ui.display.markdown import markdown_html, streaming_markdown
from agents_ui.display.media import ImageProxy
from agents_ui.display.usage import UsageLine, usage_lines
from agents_ui.display.values import (
    call_dom,
    confirmed_call,
    dom_id,
    maybe_json,
    pretty_json,
    safe_url,
    seconds_label,
    shown_tail,
)
from agents_ui.models import AgentEndpoint, Conversation, Run
from agents_ui.sdk.agui.answer_forms import AnswerForm, answer_form
from agents_ui.sdk.agui.client_tools import CONFIRM_CHANGES, client_tool
from agents_ui.sdk.transcript import Transcript


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
    # The person's actions on this run's A2UI surfaces, sent with later runs (display/activities.py).
    a2ui_sent: dict[str, dict[str, Any]] = field(default_factory=dict)
    # The thread's A2UI surfaces as earlier runs left them (or a function giving them, while live).
    a2ui_prior: Any = None
    # The token of the shared link it is shown through ("" in the workspace): read-only then, nothing
    # on it acts for the reader (views/shares.py).
    shared: str = ""
    # A queued run (separate run workers): how many queued runs go before it; None otherwise.
    queued_ahead: int | None = None
    # The reader is staff: a stream's fragments (rendered without the request) show the technical
    # detail staff see on the page.
    staff: bool = False

    def shows(self, message: Any) -> bool:
        return message.role == "assistant" and message.text_length > 0

    @property
    def dom(self) -> str:
        return f"run-{self.run.pk}"

    def items(self) -> list[RunItem]:
        """Assistant messages, tool calls and activities, in the order the agent started them."""
        transcript = self.transcript
        entries: list[tuple[int, int, RunItem]] = []
        for message in transcript.messages:
            if self.shows(message):
                entries.append((message.position, 0, RunItem("message", self.message_view(message))))
        for call in transcript.tool_calls.values():
            entries.append((call.position, 1, RunItem("call", self.call_view(call))))
        for record in transcript.activities.values():
            entries.append((record.position, 2, RunItem("activity", self.activity_view(record))))
        entries.sort(key=lambda entry: (entry[0], entry[1]))
        return [item for _, _, item in entries]

    def message_view(self, message: Any) -> MessageCard:
        node = self.transcript.subagent(message.subagent_run_id) if message.subagent_run_id else None
        text, hidden = shown_tail(message.text)
        live = None
        if not message.complete:
            live = streaming_markdown(message.text, hidden, media=self.media_shown)
            self.settled[message.id] = live.frozen
        return MessageCard(
            id=message.id,
            dom=dom_id("msg", message.id),
            text=text,
            hidden=hidden,
            html=markdown_html(text, media=self.media_shown) if message.complete else "",
            settled_html=live.settled_html if live else "",
            tail_html=live.tail_html if live else "",
            complete=message.complete,
            streaming=not message.complete and self.run.status in (Run.Status.PENDING, Run.Status.RUNNING),
            subagent=node.name if node else "",
            feedback=self.feedback.get(message.id, ""),
        )

    @property
    def image_proxy(self) -> ImageProxy | None:
        """Signs the images this run names for the image proxy, unless its agent's are links only (or
        the run is shown through a shared link: the proxy serves the conversation's owner only)."""
        if self.shared:
            return None
        conversation = self.run.conversation if Run.conversation.is_cached(self.run) else None
        endpoint = (
            conversation.endpoint if conversation and Conversation.endpoint.is_cached(conversation) else None
        )
        if endpoint is not None and endpoint.remote_images != AgentEndpoint.RemoteImages.PROXY:
            return None
        return ImageProxy(str(self.run.pk))

    @property
    def media_shown(self) -> bool | ImageProxy:
        """What markdown_html reads: no media, media, or media with remote images proxied."""
        if not self.shows_media:
            return False
        return self.image_proxy or True

    @property
    def shows_media(self) -> bool:
        """Images and audio in answers are shown: the plan's media-output control is."""
        return self.plan is not None and self.plan["media-output"].shown

    def activity_view(self, record: Any) -> ActivityCard:
        return activities.activity_view(self, record)

    @property
    def a2ui_action(self) -> dict[str, Any] | None:
        """The person's action on a surface that this run takes to the agent."""
        action = (self.run.request or {}).get(activities.ACTION_KEY)
        return action if isinstance(action, dict) else None

    def call_view(self, call: Any) -> ToolCallCard:
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
        return ToolCallCard(
            id=call.id,
            dom=call_dom(self.run.pk, call.id),
            name=call.name,
            confirms=original[0] if original else "",
            complete=call.complete,
            args=args,
            args_hidden=args_hidden,
            args_error=call.args_error,
            # What the agent asked, as the decision recorded it (a later snapshot may rewrite the call).
            edited_from=json.dumps(record.arguments or call.args, ensure_ascii=False, sort_keys=True)
            if edited
            else "",
            has_result=call.has_result,
            decided=decision_card(record) if record is not None and not call.has_result else None,
            asking=record is None and not call.has_result and self._asks_about(call),
            result=result,
            result_hidden=result_hidden,
            result_error=call.result_error,
            status=call.status,
            media=found if self.shows_media else [],
            media_more=more if self.shows_media else 0,
            media_hidden=len(found) + more if not self.shows_media else 0,
            **self._client_call(call),
        )

    def _client_call(self, call: Any) -> dict[str, Any]:
        """A call the client answers: one of its own tools, or any call left without a result when
        the run ended (the agent expected the client to run it), unless an approval holds the run."""
        tool = client_tool(call.name, call.args) if call.complete and call.args_error is None else None
        answer = self.answers.get(call.id)
        ended = self.run.status == Run.Status.COMPLETED and not self.transcript.observed.interrupts
        awaiting = (
            call.complete and not call.has_result and answer is None and ended and self.answerable
        ) and not self._finishes_own_calls()
        if not (tool or awaiting or answer):
            return {"client": None, "awaiting": False}
        shown = answer["content"] if answer else call.result if call.has_result else None
        # A confirmation an approval interrupt asks too (Agent Framework's confirm_changes): the
        # person's decision on that interrupt answers it.
        decision = self.decision_of(call) if tool is not None and tool.confirms else None
        decides = self._deciding(tool.confirms) if tool is not None and tool.confirms else ""
        editing = decides and self.plan is not None
        asked = next((a for a in self.approvals() if a.id == decides), None) if editing else None
        return {
            "client": tool,
            "awaiting": awaiting,
            "decides": decides,
            # The interrupt takes edited arguments: the card offers them, as the approval form would.
            "decides_edit": asked if asked is not None and asked.editable else None,
            "decision": decision_card(decision) if decision is not None else None,
            "answered": answer is not None or decision is not None or (tool is not None and call.has_result),
            "dismissed": bool(answer and answer.get("dismissed")),
            # Kept until the run's other calls have their answers too; then all go at once.
            "kept": bool(answer and answer.get("kept")),
            "answer": pretty_json(maybe_json(shown)) if shown is not None else "",
            "answer_value": maybe_json(shown) if shown is not None else None,
            "has_args": call.args not in (None, {}, []),
            "shaped": self.answer_form(call) if tool is None and awaiting else None,
        }

    def answer_form(self, call: Any) -> AnswerForm | None:
        """The form answering a call of a tool the product did not offer: drawn from its arguments,
        with the tool's declared input schema, and the words of the message that holds the call
        (where a framework says there what it asks)."""
        declared = self.tool_info(call.name).get("schema") if self.plan is not None else None
        message = self.transcript.message(call.parent_message_id) if call.parent_message_id else None
        said = message.text if message is not None and message.role == "assistant" else ""
        return answer_form(call.name, call.args, schema=declared, said=said)

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
        return any(i.tool_call_id == call.id and i.id not in decided for i in self.transcript.open_interrupts)

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
            i for i in self.transcript.open_interrupts if i.id not in decided and not past(i.expires_at)
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

    def _finishes_own_calls(self) -> bool:
        """The agent finishes its calls itself, the client answers none (never a database query here)."""
        return self.plan is not None and not self.plan.answers_tool_calls

    @property
    def usage(self) -> list[UsageLine]:
        """The tokens the agent reported for this run, a line per model (none: it reported none)."""
        return usage_lines(self.transcript.usage)

    @property
    def said_anything(self) -> bool:
        t = self.transcript
        return any(self.shows(m) for m in t.messages) or bool(t.tool_calls) or bool(t.activities)

    def reasoning(self) -> list[ReasoningCard]:
        return [
            ReasoningCard(
                id=entry.id,
                dom=dom_id("why", entry.id),
                text=shown_tail(entry.text)[0],
                hidden=shown_tail(entry.text)[1],
                encrypted=entry.encrypted,
                complete=entry.complete,
            )
            for entry in self.transcript.reasoning
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

    def sources(self) -> list[SourceCard]:
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
                    SourceCard(
                        title=title,
                        url=url,
                        publisher=str(source.get("publisher") or "")[:200],
                        snippet=str(source.get("snippet") or "")[:600],
                    )
                )
            if len(cards) >= 50:
                break
        return cards

    def subagents(self) -> list[Any]:
        return self.transcript.subagents

    def approvals(self) -> list[ApprovalCard]:
        """Every approval request of this run, open, decided or expired, whatever protocol asked it."""
        return approval_cards(self)

    def approval_forms(self) -> list[ApprovalForm]:
        """The forms with which a person decides this run's open requests (display/approvals.py)."""
        return [] if self.shared else approval_forms(self)

    @property
    def counting_down(self) -> bool:
        """An expiry counts down only while the agent waits: not once the run was stopped or ended."""
        return self.run.status in (Run.Status.PENDING, Run.Status.RUNNING, Run.Status.INTERRUPTED)

    def tool_info(self, name: str) -> dict[str, Any]:
        """What the agent declares of a tool: its side effects, idempotency and input schema."""
        for tool in self.plan["tools"].details.get("tools") or []:
            if tool.get("name") == name:
                return tool
        for tool in self.plan["approvals"].details.get("tools_needing_approval") or []:
            if tool.get("name") == name:
                return tool
        return {}

    def modules(self) -> list[ModuleCard]:
        found = []
        for kind, data in self.transcript.modules:
            shown = pretty_json(data)
            if kind == "citation" and isinstance(data, dict):
                source = data.get("source") if isinstance(data.get("source"), dict) else {}
                title, url = source.get("title"), safe_url(source.get("url"))
                card = ModuleCard(kind, shown, text=data.get("text"), title=title, url=url)
            elif kind == "table" and isinstance(data, dict) and isinstance(data.get("rows"), list):
                rows = [row for row in data["rows"] if isinstance(row, list)]
                card = ModuleCard(kind, shown, columns=data.get("columns") or [], rows=rows)
            else:
                card = ModuleCard(kind, shown)
            found.append(card)
        return found

    @property
    def structured_result(self) -> str:
        """AG-UI RUN_FINISHED.result: the machine-readable answer, when the agent gives one."""
        outcome = self.transcript.outcome
        return pretty_json(outcome.result) if outcome is not None and outcome.result is not None else ""

    def grounding(self) -> list[SourceCard]:
        return [
            SourceCard(title=source.title, url=safe_url(source.url), snippet=source.snippet)
            for source in self.transcript.grounding
        ]

    def state_json(self) -> str:
        return pretty_json(self.transcript.state if self.transcript.state is not None else {})

    def context(self, **extra: Any) -> dict[str, Any]:
        return {"rv": self, "run": self.run, "plan": self.plan, **extra}


def render_run(view: RunView) -> str:
    return render_to_string("agents_ui/run.html#run", view.context())

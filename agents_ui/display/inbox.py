"""The inbox as its page shows it: what waits on the person, by run (each run folded once, its
approval forms and tool-call cards the conversation's own), or how it was resolved meanwhile."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from django.utils import timezone

from agents_ui.display.cards import ApprovalForm, ToolCallCard
from agents_ui.display.run_view import RunView
from agents_ui.display.values import call_dom
from agents_ui.models import ApprovalRecord, Run, WaitingItem
from agents_ui.runs.history import transcript_of
from agents_ui.runs.inputs import kept_answers


@dataclass
class Entry:
    """One item, as the inbox shows it: open (with what decides it) or resolved (and how)."""

    item: WaitingItem
    place: str  # the conversation, at the item's place
    open: bool = True
    resolution: str = ""
    call: ToolCallCard | None = None

    @property
    def dom(self) -> str:
        return f"inbox-item-{self.item.pk}"


@dataclass
class Group:
    """The items of one run: its approval forms decide them together, as in the conversation."""

    run: Run
    rv: RunView | None
    entries: list[Entry] = field(default_factory=list)
    forms: list[ApprovalForm] = field(default_factory=list)

    @property
    def dom(self) -> str:
        return f"inbox-run-{self.run.pk}"

    @property
    def open_entries(self) -> list[Entry]:
        return [e for e in self.entries if e.open]


def _place(item: WaitingItem) -> str:
    url = item.run.conversation.get_absolute_url()
    if item.kind == WaitingItem.Kind.ANSWER:
        return f"{url}#{call_dom(item.run.pk, item.request_id)}"
    if item.kind == WaitingItem.Kind.APPROVAL:
        return f"{url}#run-{item.run.pk}-approvals"
    return f"{url}#run-{item.run.pk}"


def _resolution(item: WaitingItem, records: dict[str, ApprovalRecord], now: Any, fresh: bool) -> str:
    """How an item that no longer waits was resolved, in words ("" while it waits)."""
    record = records.get(item.request_id)
    if record is not None:
        who = record.decided_by.get_username() if record.decided_by else "a deleted user"
        when = timezone.localtime(record.decided_at).strftime("%H:%M:%S")
        if fresh:
            return f"{record.get_decision_display()} by {who} at {when}."
        return f"Already decided by {who} at {when}: {record.get_decision_display().lower()}."
    if item.closed_at is not None:
        later = Run.objects.filter(
            conversation_id=item.run.conversation_id, created_at__gt=item.run.created_at
        )
        after = later.order_by("created_at").values_list("created_at", flat=True).first()
        when = timezone.localtime(after or item.closed_at).strftime("%H:%M:%S")
        if fresh:
            return f"Answered at {when}: the agent goes on in the conversation."
        return f"Already answered at {when}: the conversation went on."
    if item.expires_at is not None and item.expires_at <= now:
        return "Expired: the agent no longer waits for it."
    if not item.endpoint.enabled:
        return "No longer available."
    return ""


def build_groups(
    items: list[WaitingItem], plans: dict[int, Any], can_approve: dict[int, bool], *, fresh: bool = False
) -> list[Group]:
    """The page's items by run, each run folded once, with the forms that decide its open items."""
    now = timezone.now()
    by_run: OrderedDict[Any, list[WaitingItem]] = OrderedDict()
    for item in items:
        by_run.setdefault(item.run_id, []).append(item)
    # The page's decision records in one query: the decision record is what says an item was decided.
    decided: dict[Any, dict[str, ApprovalRecord]] = {}
    for record in ApprovalRecord.objects.filter(run__in=list(by_run)).select_related("decided_by"):
        decided.setdefault(record.run_id, {})[record.request_id] = record
    groups = []
    for run_items in by_run.values():
        run = run_items[0].run
        records = decided.get(run.pk, {})
        transcript = transcript_of(run)
        plan = plans[run.conversation.endpoint_id]
        rv = RunView(
            run, transcript, plan, can_approve=can_approve[run.conversation.endpoint_id], decided=records,
            answers=kept_answers(run),
        )  # fmt: skip
        group = Group(run, rv)
        asked = set()
        for item in run_items:
            entry = Entry(item, _place(item))
            entry.resolution = _resolution(item, records, now, fresh)
            entry.open = not entry.resolution
            if entry.open and item.kind == WaitingItem.Kind.APPROVAL:
                asked.add(item.request_id)
            elif entry.open and item.kind == WaitingItem.Kind.ANSWER:
                call = transcript.tool_calls.get(item.request_id)
                entry.call = rv.call_view(call) if call is not None else None
            group.entries.append(entry)
        if asked:
            group.forms = [f for f in rv.approval_forms() if asked & {r.id for r in f.requests}]
        groups.append(group)
    return groups


def bulk_sets(groups: list[Group]) -> list[dict[str, Any]]:
    """Per agent, its open approvals on the page that may be decided together (two or more)."""
    found: OrderedDict[int, dict[str, Any]] = OrderedDict()
    for group in groups:
        if group.rv is None or not group.rv.can_approve:
            continue
        for entry in group.open_entries:
            if entry.item.kind == WaitingItem.Kind.APPROVAL:
                endpoint = entry.item.endpoint
                found.setdefault(endpoint.pk, {"endpoint": endpoint, "entries": []})["entries"].append(entry)
    return [s for s in found.values() if len(s["entries"]) > 1]

"""Compare: one message to 2 to 4 agents, their answers side by side, what each declares and showed.

Each agent answers in a conversation of its own (a `ComparePane`), with an ordinary run started the
composer's way (`composer.save_turn`, then `runs.turns`): limits, stop, the throttle, a reload and a
second tab work as in a workspace, and each pane is drawn by the run partials the workspace uses.
The comparison itself is only the list of those conversations, the message, and the person's rating.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.db import IntegrityError, OperationalError, transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.utils import timezone
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRedirect

from agents_ui.comparisons import ComparePane, CompareRating, CompareSession
from agents_ui.decisions import CONTROL_NAMES, ControlDecision, Plan
from agents_ui.display.run_view import RunView
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import (
    AgentEndpoint,
    Conversation,
    Message,
    Run,
)
from agents_ui.runs import queue
from agents_ui.runs.figures import TurnFigures, turn_figures
from agents_ui.runs.live import start_run
from agents_ui.runs.throttle import allowance
from agents_ui.views.composer import ComposerError, check_discovery, checked_upload, save_turn
from agents_ui.views.htmx import HtmxHttpRequest
from agents_ui.views.workspace import _turns, new_client_token

FEWEST, MOST = 2, 4
RECENT_LIMIT = 10
# The compare-specific parts of a turn: no sub-agent, skill or stream profile is chosen for all.
PLAIN_TURN = {"subagent": "", "skill": "", "profile": "", "intervention": False}


@dataclass(frozen=True)
class SharedUpload:
    """Whether files can go with a comparison: only what every chosen agent takes, checked by each
    agent's own upload rule on the server (composer.checked_upload)."""

    offered: bool
    why_not: str = ""
    accept: tuple[str, ...] = ()
    max_bytes: int | None = None


def shared_upload(chosen: list[tuple[AgentEndpoint, Plan]]) -> SharedUpload:
    if len(chosen) < FEWEST:
        return SharedUpload(False, "Choose the agents first: files can go only where every one takes them.")
    controls = [(endpoint, plan["upload"]) for endpoint, plan in chosen]
    if refusing := [endpoint.name for endpoint, control in controls if control.hidden]:
        return SharedUpload(False, f"No files: {_names(refusing)} {_take(refusing)} none.")
    if any(control.disabled for _, control in controls):
        return SharedUpload(
            False, "You do not have permission to send files to agents: only people allowed to upload can."
        )
    restricting = [list(control.details.get("accept") or ()) for _, control in controls]
    restricting = [patterns for patterns in restricting if patterns]
    accept: tuple[str, ...] = ()
    if restricting:
        candidates = sorted({p for patterns in restricting for p in patterns})
        common = [c for c in candidates if all(any(_covers(q, c) for q in qs) for qs in restricting)]
        accept = tuple(c for c in common if not any(o != c and _covers(o, c) for o in common))
        if not accept:
            return SharedUpload(False, "No files: no file type is taken by every one of these agents.")
    limits = [control.details.get("max_bytes") for _, control in controls]
    known = [limit for limit in limits if limit]
    return SharedUpload(True, accept=accept, max_bytes=min(known) if known else None)


def _covers(pattern: str, mime_type: str) -> bool:
    return pattern == mime_type or (pattern.endswith("/*") and mime_type.startswith(pattern[:-1]))


def _names(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _take(names: list[str]) -> str:
    return "takes" if len(names) == 1 else "take"


async def _usable(user: Any) -> list[AgentEndpoint]:
    return [e async for e in AgentEndpoint.objects.usable_by(user).order_by("name")]


async def _plans(endpoints: list[AgentEndpoint], user: Any) -> list[tuple[AgentEndpoint, Any]]:
    abilities = await user_abilities(user)
    inputs = await asyncio.gather(*(plan_inputs(endpoint, abilities) for endpoint in endpoints))
    return list(zip(endpoints, inputs, strict=True))


def _chosen(usable: list[AgentEndpoint], slugs: list[str]) -> tuple[list[AgentEndpoint], str]:
    """The agents named in the form, in the order named, and what is wrong with the choice."""
    wanted = list(dict.fromkeys(s for s in slugs if s))
    by_slug = {endpoint.slug: endpoint for endpoint in usable}
    chosen = [by_slug[slug] for slug in wanted if slug in by_slug]
    if len(chosen) < len(wanted):
        return chosen, "One of the chosen agents is not one you can use. Choose again."
    if len(chosen) > MOST:
        return chosen, f"Choose at most {MOST} agents."
    if len(chosen) < FEWEST:
        return chosen, f"Choose {FEWEST} to {MOST} agents to compare."
    return chosen, ""


@login_required
async def compare(request: HtmxHttpRequest) -> TemplateResponse:
    """The picker: the agents this person may use, the message, files where every chosen one takes
    them. `?agents=` preselects (the catalogue's "Compare" links); htmx redraws the files' row."""
    return await _render_picker(request, request.GET.getlist("agents"), typed=request.GET.get("content", ""))


async def _render_picker(
    request: HttpRequest, slugs: list[str], *, error: str = "", typed: str = "", status: int = 200
) -> TemplateResponse:
    user = await request.auser()
    usable = await _usable(user)
    chosen, _ = _chosen(usable, slugs)
    chosen = chosen[:MOST]
    plans = [(endpoint, inputs.plan()) for endpoint, inputs in await _plans(chosen, user)]
    # Each chosen agent's own rate, as its workspace shows it: a comparison spends one of its sends.
    limits = [
        (endpoint, left)
        for endpoint, plan in plans
        if plan["throttle"].shown and (left := await allowance(plan, endpoint, user)) is not None
    ]
    recent = [
        s
        async for s in CompareSession.objects.filter(user=user)
        .prefetch_related("panes__conversation__endpoint")
        .order_by("-created_at")[:RECENT_LIMIT]
    ]
    context = {
        "agents": usable,
        "chosen": {endpoint.slug for endpoint in chosen},
        "upload": shared_upload(plans),
        "limits": limits,
        "error": error,
        "typed": typed,
        "fewest": FEWEST,
        "most": MOST,
        "client_token": request.POST.get("client_token") if error else new_client_token(),
        "recent": recent,
        "max_chars": settings.AGENTS_UI_MAX_MESSAGE_CHARS,
    }
    template = "agents_ui/compare.html"
    if getattr(request, "htmx", False) and request.method == "GET":
        template += "#files"
    return TemplateResponse(request, template, context, status=status)


@login_required
@require_POST
async def start(request: HtmxHttpRequest) -> HttpResponse:
    """The message sent to every chosen agent at once, or to none (and the form kept, saying why)."""
    user = await request.auser()
    slugs = request.POST.getlist("agents")
    content = (request.POST.get("content") or "").strip()
    token = (request.POST.get("client_token") or "")[:64]
    if token and (earlier := await CompareSession.objects.filter(user=user, client_token=token).afirst()):
        return redirect(earlier.get_absolute_url())
    usable = await _usable(user)
    chosen, problem = _chosen(usable, slugs)
    try:
        if problem:
            raise ComposerError(problem)
        uploads = request.FILES.getlist("attachment")
        if not content and not uploads:
            raise ComposerError("Write a message first.")
        if len(content) > settings.AGENTS_UI_MAX_MESSAGE_CHARS:
            limit = settings.AGENTS_UI_MAX_MESSAGE_CHARS
            raise ComposerError(f"The message is {len(content):,} characters long; the limit is {limit:,}.")
        prepared = await _plans(chosen, user)
        plans = []
        for endpoint, inputs in prepared:
            try:
                check_discovery(inputs.discovery)
            except ComposerError as refusal:
                raise ComposerError(f"{endpoint.name}: {refusal}") from None
            plans.append((endpoint, inputs.plan()))
        if uploads and not shared_upload(plans).offered:
            raise ComposerError(shared_upload(plans).why_not)
        files = _checked_for_all(uploads, plans)
        if queue.separate() and await sync_to_async(queue.full)():
            raise ComposerError(
                "Too many answers are waiting to start, so nothing was sent. Try again shortly."
            )
        try:
            session, runs = await sync_to_async(_save_comparison, thread_sensitive=True)(
                user, content, files, plans, request, token
            )
        except OperationalError as exc:
            raise ComposerError("The server is busy and nothing was sent. Try again.") from exc
        except IntegrityError:  # the same form, submitted twice at once: the first one's comparison
            session = await CompareSession.objects.aget(user=user, client_token=token)
            return redirect(session.get_absolute_url())
    except ComposerError as refusal:
        return await _render_picker(request, slugs, error=str(refusal), typed=content, status=422)
    for run, plan in runs:
        start_run(run, plan)
    return redirect(session.get_absolute_url())


def _checked_for_all(
    uploads: list[Any], plans: list[tuple[AgentEndpoint, Plan]]
) -> list[tuple[str, str, bytes]]:
    """Each file checked by every chosen agent's own rule: one refusal refuses the message."""
    files = []
    for upload in uploads:
        checked = None
        for endpoint, plan in plans:
            upload.seek(0)
            try:
                checked = checked_upload(upload, plan)
            except ComposerError as refusal:
                raise ComposerError(f"{endpoint.name}: {refusal}") from None
        files.append(checked)
    return files


def _save_comparison(
    user: Any,
    content: str,
    files: list[tuple[str, str, bytes]],
    plans: list[tuple[AgentEndpoint, Plan]],
    request: HttpRequest,
    token: str,
) -> tuple[CompareSession, list[tuple[Run, Plan]]]:
    """The comparison, a conversation per agent and each one's first run, saved at once: an agent
    that refuses (its throttle, say) refuses the whole message, so no agent answers alone."""
    title = " ".join(content.split())[:80] or "Files"
    runs = []
    with transaction.atomic():
        session = CompareSession.objects.create(user=user, content=content, client_token=token)
        for position, (endpoint, plan) in enumerate(plans):
            conversation = Conversation.objects.create(user=user, endpoint=endpoint, title=title)
            ComparePane.objects.create(session=session, position=position, conversation=conversation)
            try:
                run, _, _ = save_turn(
                    conversation, user, content, files, PLAIN_TURN, endpoint, plan, request, ""
                )
            except ComposerError as refusal:
                raise ComposerError(f"{endpoint.name}: {refusal} Nothing was sent to any agent.") from None
            runs.append((run, plan))
    return session, runs


@dataclass
class Pane:
    """One agent's side of a comparison, as the page shows it."""

    pane: ComparePane
    endpoint: AgentEndpoint
    usable: bool
    plan: Plan | None = None
    turns: list[tuple[Message | None, RunView]] = field(default_factory=list)
    figures: TurnFigures | None = None
    # Runs of its conversation after "Continue with this one", shown in its workspace only.
    later: int = 0

    @property
    def position(self) -> int:
        return self.pane.position

    @property
    def running(self) -> bool:
        return any(view.live for _, view in self.turns)


@dataclass(frozen=True)
class DiffRow:
    """One control across the agents: each one's decision with its reasons."""

    name: str
    label: str
    cells: list[tuple[AgentEndpoint, ControlDecision]]

    @property
    def differs(self) -> bool:
        return len({decision.decision for _, decision in self.cells}) > 1


async def _session(request: HttpRequest, compare_id: Any) -> CompareSession:
    user = await request.auser()
    try:
        return await CompareSession.objects.aget(pk=compare_id, user=user)
    except (CompareSession.DoesNotExist, ValidationError):
        raise Http404("No such comparison.") from None


async def _panes(
    request: HttpRequest, session: CompareSession, *, only: int | None = None, fold: bool = True
) -> list[Pane]:
    """The comparison's panes, each with its thread folded and its figures (`only`: that one's;
    not `fold`: the panes and their agents only)."""
    user = await request.auser()
    abilities = await user_abilities(user)
    usable = {pk async for pk in AgentEndpoint.objects.usable_by(user).values_list("pk", flat=True)}
    panes = [
        Pane(pane, pane.conversation.endpoint, pane.conversation.endpoint_id in usable)
        async for pane in session.panes.select_related("conversation__endpoint")
    ]
    if not fold:
        return panes
    shown = [p for p in panes if p.usable and only in (None, p.position)]
    inputs = await asyncio.gather(*(plan_inputs(p.endpoint, abilities) for p in shown))
    for pane, found in zip(shown, inputs, strict=True):
        pane.plan = found.plan()
        turns = await sync_to_async(_turns)(pane.pane.conversation, pane.plan, abilities.can_approve)
        # Once continued, the conversation goes on in its workspace: the pane keeps the compared turn.
        if (since := pane.pane.continued_at) is not None:
            pane.later = sum(1 for _, view in turns if view.run.created_at > since)
            turns = [(message, view) for message, view in turns if view.run.created_at <= since]
        pane.turns = turns
        pane.figures = await sync_to_async(_figures)(pane)
    return panes


def _figures(pane: Pane) -> TurnFigures:
    """The compared turn's figures: the runs before "Continue with this one" (or all, until then)."""
    views = [view for _, view in pane.turns]
    return turn_figures([v.run for v in views], [v.transcript for v in views], pane.endpoint.protocol)


def _diff(panes: list[Pane]) -> list[DiffRow]:
    planned = [(p.endpoint, p.plan) for p in panes if p.plan is not None]
    if len(planned) < FEWEST:
        return []
    return [
        DiffRow(name, planned[0][1][name].label, [(endpoint, plan[name]) for endpoint, plan in planned])
        for name in CONTROL_NAMES
    ]


@login_required
async def session(request: HtmxHttpRequest, compare_id: Any) -> TemplateResponse:
    """The comparison: the capability diff, then each agent's answer side by side, still streaming
    after a reload (each run's stream follows it, whoever drives it)."""
    found = await _session(request, compare_id)
    panes = await _panes(request, found)
    rows = _diff(panes)
    rating = await CompareRating.objects.filter(session=found).afirst()
    context = {
        "session": found,
        "panes": panes,
        "compared": [p for p in panes if p.plan is not None],
        "differences": [row for row in rows if row.differs],
        "same": [row for row in rows if not row.differs],
        "winner_id": rating.winner_id if rating else None,
    }
    return TemplateResponse(request, "agents_ui/compare_session.html", context)


async def _pane(request: HttpRequest, found: CompareSession, position: int) -> Pane:
    for pane in await _panes(request, found, only=position):
        if pane.position == position and pane.usable:
            return pane
    raise Http404("No such pane.")


@login_required
async def figures(request: HtmxHttpRequest, compare_id: Any, position: int) -> TemplateResponse:
    """A pane's figures, redrawn until its turn is over (htmx polls this while it runs)."""
    found = await _session(request, compare_id)
    pane = await _pane(request, found, position)
    return TemplateResponse(
        request, "agents_ui/compare_session.html#figures", {"session": found, "pane": pane}
    )


@login_required
@require_POST
async def rate(request: HtmxHttpRequest, compare_id: Any) -> HttpResponse:
    """ "This one is better": the pane's agent over the others, one rating per comparison (a new
    choice replaces the last)."""
    found = await _session(request, compare_id)
    panes = await _panes(request, found, fold=False)
    try:
        position = int(request.POST.get("winner", ""))
    except ValueError:
        return HttpResponseBadRequest("Choose the answer you prefer.")
    winner = next((p for p in panes if p.position == position and p.usable), None)
    if winner is None:
        raise Http404("No such pane.")
    user = await request.auser()
    await sync_to_async(_record_rating)(found, user, winner, panes)
    if not request.htmx:
        return redirect(found.get_absolute_url())
    context = {"session": found, "panes": panes, "winner_id": winner.endpoint.pk, "oob": True}
    return TemplateResponse(request, "agents_ui/compare_session.html#ratings", context)


def _record_rating(found: CompareSession, user: Any, winner: Pane, panes: list[Pane]) -> None:
    with transaction.atomic():
        rating, _ = CompareRating.objects.update_or_create(
            session=found, defaults={"user": user, "winner": winner.endpoint}
        )
        rating.others.set([p.endpoint for p in panes if p.endpoint.pk != winner.endpoint.pk])


@login_required
@require_POST
async def continue_with(request: HtmxHttpRequest, compare_id: Any, position: int) -> HttpResponse:
    """The pane's conversation, made an ordinary one (listed with the agent's others), opened."""
    found = await _session(request, compare_id)
    pane = await _pane(request, found, position)
    if pane.pane.continued_at is None:
        await ComparePane.objects.filter(pk=pane.pane.pk).aupdate(continued_at=timezone.now())
    url = pane.pane.conversation.get_absolute_url()
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)

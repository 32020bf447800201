"""The inbox: everything waiting on this person, across their conversations and agents, decided
right there with the conversation's own forms (views/approvals.py, views/client_tools.py), snoozed,
decided in bulk, or opened at its place in the conversation.

It reads the WaitingItem rows the runs' lifecycle keeps (agents_ui/runs/waiting.py) and folds only
the runs of the page it shows. Whether an item was decided is the decision record's to say: an item
decided elsewhere leaves the list with who decided it and when, and is never decided twice.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import SimpleLazyObject
from django.views.decorators.http import require_POST

from agents_ui.display.inbox import Group, build_groups, bulk_sets
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import ApprovalRecord, Run, WaitingItem
from agents_ui.runs.waiting import waiting_summary
from agents_ui.views.htmx import HtmxHttpRequest

PAGE_SIZE = 25
# The inbox page asks this often whether what it shows was decided elsewhere (the header's count
# asks every AGENTS_UI_INBOX_POLL_SECONDS: one indexed count, see runs/waiting.waiting_summary).
CHANGES_POLL_SECONDS = 8
SNOOZES = {"1h": ("1 hour", timedelta(hours=1)), "4h": ("4 hours", timedelta(hours=4)),
           "1d": ("1 day", timedelta(days=1))}  # fmt: skip
SNOOZE_DEFAULT = "4h"
BULK_LIMIT = 50
EXPIRY_MARGIN = timedelta(minutes=5)


def count_context(user: Any) -> dict[str, Any]:
    count, newest = waiting_summary(user)
    return {"inbox_count": count, "inbox_newest": newest, "inbox_poll": settings.AGENTS_UI_INBOX_POLL_SECONDS}


def count_fragment(user: Any) -> str:
    """The header's count as an out-of-band swap, for a frame of a run's stream."""
    return render_to_string("agents_ui/inbox_count.html", {"inbox": count_context(user), "oob": True})


def header_count(request: HttpRequest) -> dict[str, Any]:
    """The header's inbox count on every page: queried only when a page draws the header (lazily),
    and only for a signed-in person."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"inbox": SimpleLazyObject(lambda: count_context(user))}


async def _plans(user: Any, endpoints: list[Any]) -> tuple[dict[int, Any], dict[int, bool]]:
    abilities = await user_abilities(user)
    allowed = await user.ahas_perm("agents_ui.approve_actions")
    plans, can_approve = {}, {}
    for endpoint in endpoints:
        if endpoint.pk not in plans:
            plans[endpoint.pk] = (await plan_inputs(endpoint, abilities)).plan()
            can_approve[endpoint.pk] = allowed and not plans[endpoint.pk]["approvals"].disabled
    return plans, can_approve


def open_items(user: Any):
    return WaitingItem.objects.open_for(user).select_related("endpoint", "run__conversation__endpoint")


async def _groups_of(user: Any, items: list[WaitingItem], *, fresh: bool = False) -> list[Group]:
    plans, can_approve = await _plans(user, [i.run.conversation.endpoint for i in items])
    return await sync_to_async(build_groups)(items, plans, can_approve, fresh=fresh)


@login_required
async def inbox(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    now = timezone.now()
    found = open_items(user)

    def one_page() -> Any:  # a count and one page of rows, never all of them
        page = Paginator(found.awake(now).order_by("asked_at", "id"), PAGE_SIZE).get_page(
            request.GET.get("page")
        )
        page.object_list = list(page.object_list)
        return page

    page = await sync_to_async(one_page)()
    snoozed = [i async for i in found.filter(snoozed_until__gt=now).order_by("snoozed_until")[:PAGE_SIZE]]
    groups = await _groups_of(user, page.object_list)
    context = {
        "groups": groups,
        "page": page,
        "snoozed": snoozed,
        "bulk_sets": bulk_sets(groups),
        "snoozes": [(key, label) for key, (label, _) in SNOOZES.items()],
        "snooze_default": SNOOZE_DEFAULT,
        "changes_poll": CHANGES_POLL_SECONDS,
        "notify_js": True,
    }
    return TemplateResponse(request, "agents_ui/inbox.html", context)


@login_required
async def count(request: HtmxHttpRequest) -> TemplateResponse:
    """The header's count, as it is now (its own poll)."""
    counted = await sync_to_async(count_context)(await request.auser())
    current = (request.htmx.current_url_abs_path or "").split("?")[0] == reverse("inbox")
    return TemplateResponse(request, "agents_ui/inbox_count.html", {"inbox": counted, "current": current})


async def named_items(user: Any, ids: list[str]) -> list[WaitingItem]:
    """The items of these ids that belong to this person (any other id is ignored)."""
    pks = [int(i) for i in ids[:200] if i.isdigit()]
    query = WaitingItem.objects.filter(pk__in=pks, user=user).select_related(
        "endpoint", "run__conversation__endpoint"
    )
    return [i async for i in query]


@login_required
async def changes(request: HtmxHttpRequest) -> TemplateResponse:
    """The page's items that no longer wait (decided in another tab, by another person, expired,
    answered): each run's group again, saying how; and the header's count."""
    user = await request.auser()
    shown = await named_items(user, request.GET.getlist("item"))
    named = open_items(user).filter(pk__in=[i.pk for i in shown])
    still = {pk async for pk in named.values_list("pk", flat=True)}
    gone_runs = {i.run_id for i in shown if i.pk not in still}
    groups = await _groups_of(user, [i for i in shown if i.run_id in gone_runs])
    context = {"groups": groups, "inbox": await sync_to_async(count_context)(user)}
    return TemplateResponse(request, "agents_ui/inbox.html#changed", context)


async def resolved(request: HtmxHttpRequest, run: Run, *, fresh: bool = False) -> HttpResponse:
    """What the conversation's decide or answer view answers a form posted from the inbox: the run's
    group again (resolved, or still open where something of it waits), and the header's count.
    `fresh`: this very request decided it (else it was decided before, elsewhere)."""
    user = await request.auser()
    if not request.htmx:
        return redirect("inbox")
    items = [i async for i in WaitingItem.objects.filter(run=run, user=user).select_related(
        "endpoint", "run__conversation__endpoint")]  # fmt: skip
    groups = await _groups_of(user, items, fresh=fresh)
    context = {"groups": groups, "inbox": await sync_to_async(count_context)(user)}
    return TemplateResponse(request, "agents_ui/inbox.html#changed", context)


async def answered_in_inbox(request: HtmxHttpRequest) -> HttpResponse:
    """What the composer answers a message sent from the inbox (a task's question answered): the
    asking run's group again, saying it was answered."""
    [item] = await named_items(await request.auser(), [request.POST.get("item") or ""]) or [None]
    if item is None:
        return redirect("inbox")
    return await resolved(request, item.run, fresh=True)


def from_inbox(request: HttpRequest) -> bool:
    return request.method == "POST" and request.POST.get("inbox") == "1"


async def decided_already(run: Run, posted: Any) -> bool:
    """A request the form names was decided already (the decision record exists)."""
    asked = [key.removeprefix("decision-") for key in posted if key.startswith("decision-")]
    return bool(asked) and await ApprovalRecord.objects.filter(run=run, request_id__in=asked).aexists()


async def _own_item(request: HttpRequest, item_id: Any) -> WaitingItem:
    user = await request.auser()
    try:
        return await open_items(user).aget(pk=item_id)
    except (WaitingItem.DoesNotExist, ValidationError, ValueError):
        raise Http404("No such item.") from None


@login_required
@require_POST
async def snooze(request: HtmxHttpRequest, item_id: Any) -> HttpResponse:
    """ "Not now": the item leaves the count and the list until then, decided by nobody. "wake"
    brings it back now."""
    item = await _own_item(request, item_id)
    choice = request.POST.get("for") or SNOOZE_DEFAULT
    if choice == "wake":
        until, note = None, "Back in your inbox."
    elif choice in SNOOZES:
        label, length = SNOOZES[choice]
        now = timezone.now()
        until, note = now + length, f"Not now: back in your inbox in {label}."
        # An expiring request comes back before it expires, while it can still be decided.
        if item.expires_at is not None and item.expires_at - EXPIRY_MARGIN < until:
            until = item.expires_at - EXPIRY_MARGIN
            if until <= now:
                messages.error(request, "It expires in a few minutes: decide it now, or let it expire.")
                return redirect("inbox")
            note = f"Not now: back at {timezone.localtime(until):%H:%M}, before it expires."
    else:
        messages.error(request, "Choose how long to put it aside.")
        return redirect("inbox")
    await WaitingItem.objects.filter(pk=item.pk).aupdate(snoozed_until=until)
    messages.info(request, note)
    return redirect("inbox")

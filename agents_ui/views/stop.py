"""Stopping a run: what the agent said so far is kept."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from agents_ui.models import Run
from agents_ui.runs.control import request_stop
from agents_ui.views.access import usable_endpoint, users_conversation, users_run
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
@require_POST
async def stop(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    # Here, or recorded for the process that drives it (a run worker, another web worker), or for
    # nobody (orphaned by a restart): runs.control.
    await request_stop(run.pk)
    return _stopped(request, run.conversation.get_absolute_url())


@login_required
@require_POST
async def stop_conversation(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """The composer's stop button: stop whatever the conversation on the page is running."""
    endpoint = await usable_endpoint(request, slug)
    thread = await users_conversation(request, endpoint, request.POST.get("conversation") or "")
    async for run in Run.objects.filter(
        conversation=thread, status__in=[Run.Status.PENDING, Run.Status.RUNNING]
    ):
        await request_stop(run.pk)
    return _stopped(request, thread.get_absolute_url())


def _stopped(request: HtmxHttpRequest, page: str) -> HttpResponse:
    """htmx: nothing to swap (the run's stream shows the stop); a plain form post: back to the page."""
    return HttpResponse(status=204) if request.htmx else redirect(page)

"""A person's conversations, per agent they may still use, with what waits for them."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.template.response import TemplateResponse

from agents_ui.models import AgentEndpoint, Conversation, Run
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
async def conversations(request: HtmxHttpRequest) -> TemplateResponse:
    user = await request.auser()
    usable = AgentEndpoint.objects.usable_by(user)
    threads = [
        c
        async for c in Conversation.objects.filter(user=user, endpoint__in=usable)
        .select_related("endpoint")
        .order_by("endpoint__name", "-updated_at")
    ]
    waiting = {
        conversation_id
        async for conversation_id in Run.objects.filter(
            conversation__in=[c.pk for c in threads], status=Run.Status.INTERRUPTED, approvals__isnull=True
        ).values_list("conversation_id", flat=True)
    }
    groups: dict[AgentEndpoint, list[Conversation]] = {}
    for thread in threads:
        thread.waiting = thread.pk in waiting
        groups.setdefault(thread.endpoint, []).append(thread)
    return TemplateResponse(request, "agents_ui/conversations.html", {"groups": groups})

"""Who may see what: an endpoint or a run the user may not use is "not found", never "forbidden"."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest

from agents_ui.models import AgentEndpoint, Conversation, Run


async def usable_endpoint(request: HttpRequest, slug: str) -> AgentEndpoint:
    user = await request.auser()
    try:
        return await AgentEndpoint.objects.usable_by(user).aget(slug=slug)
    except AgentEndpoint.DoesNotExist:
        raise Http404("No such agent.") from None


async def users_conversation(
    request: HttpRequest, endpoint: AgentEndpoint, conversation_id: Any
) -> Conversation:
    user = await request.auser()
    try:
        conversation = await Conversation.objects.aget(pk=conversation_id, user=user, endpoint=endpoint)
    except (Conversation.DoesNotExist, ValidationError):
        raise Http404("No such conversation.") from None
    conversation.endpoint = endpoint
    return conversation


async def users_run(request: HttpRequest, run_id: Any) -> Run:
    """A run of one of this user's conversations with an agent they may still use."""
    user = await request.auser()
    try:
        run = await Run.objects.select_related("conversation__endpoint").aget(
            pk=run_id, conversation__user=user
        )
    except (Run.DoesNotExist, ValidationError):
        raise Http404("No such run.") from None
    if not await AgentEndpoint.objects.usable_by(user).filter(pk=run.conversation.endpoint_id).aexists():
        raise Http404("No such run.")
    return run

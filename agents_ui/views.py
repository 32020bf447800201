from django.contrib.auth.decorators import login_required
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.utils import timezone
from django_htmx.middleware import HtmxDetails

from agents_ui.models import AgentEndpoint


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


@login_required
def catalogue(request: HtmxHttpRequest) -> TemplateResponse:
    endpoints = AgentEndpoint.objects.filter(enabled=True)
    return TemplateResponse(
        request, "agents_ui/catalogue.html", {"endpoints": endpoints, "checked_at": timezone.now()}
    )


@login_required
def catalogue_card(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    endpoint = get_object_or_404(AgentEndpoint, slug=slug, enabled=True)
    return TemplateResponse(
        request,
        "agents_ui/catalogue.html#agent-card",
        {"endpoint": endpoint, "checked_at": timezone.now()},
    )


@login_required
def workspace(request: HtmxHttpRequest, slug: str) -> TemplateResponse:
    endpoint = get_object_or_404(AgentEndpoint, slug=slug, enabled=True)
    return TemplateResponse(request, "agents_ui/workspace.html", {"endpoint": endpoint})

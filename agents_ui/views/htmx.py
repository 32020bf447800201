"""The request as django-htmx's middleware leaves it, and the one way a form is answered."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django_htmx.middleware import HtmxDetails


class HtmxHttpRequest(HttpRequest):
    htmx: HtmxDetails


def fragment_or_page(
    request: HtmxHttpRequest,
    template_name: str,
    context: dict[str, Any],
    *,
    page: str,
    note: str = "",
    level: int = messages.INFO,
) -> HttpResponse:
    """htmx gets the fragment to swap in; a plain form post goes back to the page, the outcome (`note`)
    said there as a message."""
    if request.htmx:
        return TemplateResponse(request, template_name, context)
    if note:
        messages.add_message(request, level, note)
    return redirect(page)

"""The image proxy: an image a run named by URL, served from the product's own origin, so the page's
CSP stays 'self' and the person's browser never contacts the agent's host. Not an open proxy: the
URL must carry the signature the run's page gave it (display/media.py ImageProxy), and the person
must be able to see that run."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_GET

from agents_ui.display.media import signed_image_url
from agents_ui.endpoints.images import remote_image
from agents_ui.models import AgentEndpoint
from agents_ui.sdk.remote_images import ImageRefusedError
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
@require_GET
async def image(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    run = await users_run(request, run_id)
    url = signed_image_url(str(run.pk), request.GET.get("u", ""))
    endpoint = run.conversation.endpoint
    if url is None or endpoint.remote_images != AgentEndpoint.RemoteImages.PROXY:
        raise Http404("No such image.")
    try:
        found = await remote_image(endpoint, url)
    except ImageRefusedError as refused:
        return HttpResponse(f"Not shown: {refused}.", status=502, content_type="text/plain; charset=utf-8")
    # The type is the one read from the bytes; the browser is told not to guess another.
    response = HttpResponse(found.data, content_type=found.content_type)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, max-age=3600"
    return response

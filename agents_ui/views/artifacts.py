"""Artifacts an external agent made in a run: fetched through the agent's client when the person
asks, and handed over as a download (never shown inline: the content is the agent's)."""

from __future__ import annotations

import re
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from agents_ui.endpoints import errors
from agents_ui.endpoints.clients import agent_client, sdk_client
from agents_ui.models import AgentEndpoint
from agents_ui.runs.history import transcript_of
from agents_ui.sdk import AgentError, ExternalAgentClient
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest

MAX_ARTIFACT_BYTES = 5 * 1024 * 1024
_MIME_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$")


@login_required
@require_GET
async def download(request: HtmxHttpRequest, run_id: Any, artifact_id: str) -> HttpResponse:
    run = await users_run(request, run_id)
    endpoint = run.conversation.endpoint
    if endpoint.protocol != AgentEndpoint.Protocol.EXTERNAL:
        raise Http404("No such artifact.")
    transcript = await sync_to_async(transcript_of)(run)
    # Only what this run said it made: an id from elsewhere is not fetched for this person.
    known = transcript.artifacts.get(artifact_id)
    if known is None or not known.remote:
        raise Http404("No such artifact.")
    async with agent_client() as client:
        agent = sdk_client(endpoint, client)
        assert isinstance(agent, ExternalAgentClient)
        try:
            artifact = await agent.get_artifact(artifact_id)
        except AgentError as exc:
            return HttpResponse(errors.describe(exc), status=502, content_type="text/plain; charset=utf-8")
    if artifact.content is None:
        return HttpResponse(
            "The agent did not give this artifact's content.",
            status=502,
            content_type="text/plain; charset=utf-8",
        )
    data = artifact.content.encode()
    if len(data) > MAX_ARTIFACT_BYTES:
        return HttpResponse(
            "The artifact is larger than this product hands over.",
            status=502,
            content_type="text/plain; charset=utf-8",
        )
    mime_type = (artifact.mime_type or "").lower().strip()
    if not _MIME_TYPE.match(mime_type):
        mime_type = "application/octet-stream"
    name = endpoint.scrub(artifact.name or artifact_id)[:200] or "artifact"
    response = HttpResponse(data, content_type=f"{mime_type}; charset=utf-8")
    response["Content-Disposition"] = content_disposition_header(True, name)
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response

"""An A2A run's files: a file an agent sent inline in an artifact, handed over as a download
(the task itself is shown by agents_ui/display/a2a_task.py)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from agents_ui.models import AgentEndpoint
from agents_ui.runs.history import transcript_of
from agents_ui.views.access import users_run


@login_required
@require_GET
async def download(request: Any, run_id: Any, artifact_id: str, index: int) -> HttpResponse:
    """A file an A2A agent sent inline in one of this run's artifacts, handed over as a download."""
    run = await users_run(request, run_id)
    if run.conversation.endpoint.protocol != AgentEndpoint.Protocol.A2A:
        raise Http404("No such file.")
    transcript = await sync_to_async(transcript_of)(run)
    artifact = transcript.artifacts.get(artifact_id)
    inline = artifact is not None and not artifact.remote and 0 <= index < len(artifact.parts)
    if not inline or artifact.parts[index].raw is None:
        raise Http404("No such file.")
    part = artifact.parts[index]
    name = part.filename or f"{artifact.name or artifact.id}-{index + 1}"
    # The agent's type is only a label: the browser is told to save it, never to render it.
    response = HttpResponse(part.raw, content_type="application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, name)
    response["X-Content-Type-Options"] = "nosniff"
    return response

"""What an agent made in a run, handed over as a download when the person asks (never shown inline:
the content is the agent's). One URL for every agent: its adapter (agents_ui.runs.protocols) fetches
the bytes, from the agent's API or from a file it sent inline in a task's artifact."""

from __future__ import annotations

import re
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from agents_ui.runs.history import transcript_of
from agents_ui.runs.protocols import ArtifactFile, NotFound, Unavailable, adapter_for
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest


@login_required
@require_GET
async def download(request: HtmxHttpRequest, run_id: Any, artifact_id: str) -> HttpResponse:
    run = await users_run(request, run_id)
    transcript = await sync_to_async(transcript_of)(run)
    try:
        file = await adapter_for(run.conversation.endpoint).artifact(run, transcript, artifact_id)
    except NotFound as missing:
        raise Http404(str(missing)) from None
    except Unavailable as problem:
        return HttpResponse(str(problem), status=502, content_type="text/plain; charset=utf-8")
    return file_download(file)


# Types a file keeps when its bytes are UTF-8 text: none of them is drawn as markup by a browser.
_PLAIN_TYPES = frozenset({"text/plain", "text/csv", "text/markdown", "application/json"})


def served_type(file: ArtifactFile) -> str:
    """The type a download goes out with: a plain-text type its bytes bear out, else bytes.

    The agent's type is only a label: text/html, SVG, XML or a script's type would let a browser
    that opens the file draw it, so they, and anything else, go out as application/octet-stream.
    """
    declared = file.content_type.split(";", 1)[0].strip().lower()
    if declared in _PLAIN_TYPES:
        try:
            file.data.decode("utf-8")
        except UnicodeDecodeError:
            return "application/octet-stream"
        return f"{declared}; charset=utf-8"
    return "application/octet-stream"


# In a name the agent chose: what a header parser could read as the end of the name (a quote, a
# backslash escape), a path, or a control character.
_UNSAFE_IN_NAME = re.compile(r'["\\/\x00-\x1f\x7f]')


def saved_name(name: str) -> str:
    """The file name a download is saved under: the agent's, with nothing a parser could misread."""
    return _UNSAFE_IN_NAME.sub("_", name).strip(" .")[:200] or "download"


def file_download(file: ArtifactFile) -> HttpResponse:
    """The browser is told to save the file, never to sniff or render it."""
    response = HttpResponse(file.data, content_type=served_type(file))
    response["Content-Disposition"] = content_disposition_header(True, saved_name(file.name))
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    return response

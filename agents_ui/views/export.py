"""A conversation downloaded by its owner, as Markdown or as JSON (the shape docs/export.md states)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.utils import timezone
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_GET

from agents_ui.display.export import export_document, export_filename, export_json, export_markdown
from agents_ui.endpoints.plans import user_abilities
from agents_ui.models import Conversation
from agents_ui.runs.snapshots import decided_before, freeze, thaw
from agents_ui.views.conversations import own_conversation
from agents_ui.views.htmx import HtmxHttpRequest

TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json"}


@login_required
@require_GET
async def export(request: HtmxHttpRequest, conversation_id: Any, extension: str) -> HttpResponse:
    thread = await own_conversation(request, conversation_id)
    abilities = await user_abilities(await request.auser())
    document = await sync_to_async(_document)(thread, abilities.can_view_reasoning)
    body = export_markdown(document) if extension == "md" else export_json(document)
    response = HttpResponse(body.encode(), content_type=TYPES[extension])
    response["Content-Disposition"] = content_disposition_header(True, export_filename(thread, extension))
    response["X-Content-Type-Options"] = "nosniff"
    response["Content-Security-Policy"] = "sandbox; default-src 'none'"
    response["Cache-Control"] = "private, no-store"
    return response


def _document(thread: Conversation, with_reasoning: bool) -> dict[str, Any]:
    """The thread's finished turns now, as a shared link made now would show them."""
    turns = thaw(thread, freeze(thread))
    return export_document(
        thread, turns, decided_before(thread, timezone.now()), with_reasoning=with_reasoning
    )

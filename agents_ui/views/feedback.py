"""Feedback: a person rates an answer; where the agent takes ratings (`Plan.feedback_reaches_agent`),
its adapter tells it."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.views.decorators.http import require_POST

from agents_ui.display.values import dom_id
from agents_ui.models import Feedback, Message, Run
from agents_ui.runs.protocols import Unavailable, adapter_for
from agents_ui.views.access import users_run
from agents_ui.views.htmx import HtmxHttpRequest, fragment_or_page


@login_required
@require_POST
async def feedback(request: HtmxHttpRequest, run_id: Any) -> HttpResponse:
    """htmx: the rating's form becomes a thank-you; a plain post: back to the page, thanked there."""
    run = await users_run(request, run_id)
    value = request.POST.get("value")
    remote_id = request.POST.get("message") or ""
    if value not in ("up", "down"):
        return _answer(request, run, "Choose Helpful or Not helpful.", done=False)
    message = await Message.objects.filter(run=run, remote_id=remote_id, role=Message.Role.ASSISTANT).afirst()
    if message is None:
        raise Http404("No such message.")
    user = await request.auser()
    record, _ = await Feedback.objects.aupdate_or_create(
        message=message, user=user, defaults={"value": value}
    )
    endpoint = run.conversation.endpoint
    note = "Thanks: marked helpful." if value == "up" else "Thanks: marked not helpful."
    try:
        if await adapter_for(endpoint).send_feedback(run, remote_id, value):
            await Feedback.objects.filter(pk=record.pk).aupdate(sent_to_agent=True)
    except Unavailable as problem:
        note = f"Saved here; the agent did not take it: {problem}"
    return _answer(request, run, note, rated=(remote_id, value))


def _answer(
    request: HtmxHttpRequest, run: Run, note: str, *, done: bool = True, rated: tuple[str, str] | None = None
) -> HttpResponse:
    """The rating form again, showing the rating given (it can be changed); or just the note."""
    if rated is None:
        template, context = "agents_ui/run.html#feedback-note", {"note": note, "done": done}
    else:
        remote_id, value = rated
        answer = {"id": remote_id, "dom": dom_id("msg", remote_id), "feedback": value}
        template, context = "agents_ui/run.html#feedback", {"answer": answer, "run": run, "note": note}
    return fragment_or_page(request, template, context, page=run.conversation.get_absolute_url(), note=note)

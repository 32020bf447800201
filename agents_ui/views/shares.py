"""Shared links: a conversation as it was when its owner shared it, read-only, for the people they
chose; the owner's list of them, and revoking one.

A link is its random token, never the conversation's id. Whoever is not in a link's audience gets
"not found", whether the link exists or not; anonymous visitors are sent to sign in first, for
every address alike. The page is drawn by the workspace's own partials and sanitiser
(display/run_view.py), under the same CSP, with nothing on it that acts: no composer, no decisions,
no feedback, no stop.
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from asgiref.sync import sync_to_async
from django import forms
from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from agents_ui.decisions import Plan
from agents_ui.display.activities import prior_surfaces, sent_actions
from agents_ui.display.run_view import RunView
from agents_ui.endpoints.plans import plan_inputs, user_abilities
from agents_ui.models import Conversation, Message, Run, SharedLink
from agents_ui.runs.history import thought_seconds
from agents_ui.runs.protocols import NotFound, Unavailable, adapter_for
from agents_ui.runs.snapshots import answers_between, decided_before, freeze, thaw
from agents_ui.views.artifacts import file_download
from agents_ui.views.conversations import own_conversation
from agents_ui.views.htmx import HtmxHttpRequest

# At most this many people named on one link: a longer list is a group's job.
MAX_PEOPLE = 50


class ShareForm(forms.Form):
    audience = forms.ChoiceField(
        choices=SharedLink.Audience.choices,
        initial=SharedLink.Audience.SIGNED_IN,
        widget=forms.RadioSelect,
        label="Who can open the link",
    )
    people = forms.CharField(
        required=False,
        max_length=5000,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "ada, grace@example.com"}),
        label="People",
        help_text="Usernames or e-mail addresses, separated by commas, spaces or new lines.",
    )

    def __init__(self, *args: Any, owner: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.owner = owner

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        if cleaned.get("audience") != SharedLink.Audience.PEOPLE:
            cleaned["people"] = []
            return cleaned
        names = list(dict.fromkeys(n for n in re.split(r"[\s,;]+", cleaned.get("people") or "") if n))
        if not names:
            self.add_error("people", "Name at least one person, or share with everyone signed in.")
            return cleaned
        if len(names) > MAX_PEOPLE:
            self.add_error("people", f"Name at most {MAX_PEOPLE} people on one link.")
            return cleaned
        found, unknown, unclear = find_people(names)
        if unclear:
            self.add_error(
                "people", f"Used by more than one person, give their username instead: {', '.join(unclear)}."
            )
        if unknown:
            self.add_error("people", f"Nobody here is called {', '.join(unknown)}. Check the spelling.")
        found = [person for person in found if person.pk != self.owner.pk]
        if not found and not unknown and not unclear:
            self.add_error("people", "Name someone other than yourself.")
        cleaned["people"] = found
        return cleaned


def find_people(names: list[str]) -> tuple[list[Any], list[str], list[str]]:
    """Each name as an active person (by username, or by e-mail address when it has an @): the
    people found, the names nobody has, and the addresses several people share."""
    User = get_user_model()
    found, unknown, unclear = [], [], []
    for name in names:
        field = "email__iexact" if "@" in name else f"{User.USERNAME_FIELD}__iexact"
        matches = list(User.objects.filter(**{field: name}, is_active=True)[:2])
        if not matches:
            unknown.append(name)
        elif len(matches) > 1:
            unclear.append(name)
        else:
            found.append(matches[0])
    return list(dict.fromkeys(found)), unknown, unclear


@login_required
@require_http_methods(["GET", "POST"])
async def share(request: HtmxHttpRequest, conversation_id: Any) -> HttpResponse:
    """GET: who the link is for; POST: the link, made now (its later turns stay out of it)."""
    thread = await own_conversation(request, conversation_id)
    user = await request.auser()
    form = ShareForm(request.POST or None, owner=user)
    if request.method == "POST" and await sync_to_async(form.is_valid)():
        link = await sync_to_async(make_link)(thread, form.cleaned_data)
        messages.success(request, f"Link made for “{link.title}”: copy it below and send it.")
        return redirect(f"{reverse('shared-links')}?made={link.pk}#share-{link.pk}")
    status = 400 if form.is_bound else 200
    context = {"thread": thread, "form": form, **await sync_to_async(_what_is_shared)(thread)}
    return TemplateResponse(request, "agents_ui/share.html", context, status=status)


def make_link(thread: Conversation, chosen: dict[str, Any]) -> SharedLink:
    link = SharedLink.objects.create(
        token=secrets.token_urlsafe(24),
        conversation=thread,
        audience=chosen["audience"],
        title=str(thread)[:200],
        covered=freeze(thread),
    )
    if chosen["people"]:
        link.people.set(chosen["people"])
    return link


def _what_is_shared(thread: Conversation) -> dict[str, Any]:
    """What a link made now would show, for the form to say."""
    runs = thread.runs.filter(superseded_at__isnull=True)
    return {
        "turn_count": runs.filter(status__in=Run.FINISHED).count(),
        "answering": runs.exclude(status__in=Run.FINISHED).exists(),
    }


@login_required
async def shared_links(request: HtmxHttpRequest) -> TemplateResponse:
    """The person's shared links, newest first: what each shows, to whom, and a way to revoke it."""
    user = await request.auser()
    found = (
        SharedLink.objects.filter(conversation__user=user)
        .select_related("conversation__endpoint")
        .prefetch_related("people")
    )
    links = [link async for link in found]
    made = request.GET.get("made", "")
    return TemplateResponse(
        request, "agents_ui/shared_links.html", {"links": links, "made": made if made.isdigit() else ""}
    )


@login_required
@require_POST
async def revoke(request: HttpRequest, link_id: int) -> HttpResponse:
    """The link stops working at once; its audience is told it was revoked."""
    user = await request.auser()
    updated = await SharedLink.objects.filter(
        pk=link_id, conversation__user=user, revoked_at__isnull=True
    ).aupdate(revoked_at=timezone.now())
    if not updated and not await SharedLink.objects.filter(pk=link_id, conversation__user=user).aexists():
        raise Http404("No such link.")
    messages.success(request, "Link revoked: it no longer opens the conversation.")
    return redirect("shared-links")


async def open_link(request: HttpRequest, token: str) -> SharedLink:
    """The link, if this person is in its audience ("not found" otherwise, existing or not)."""
    user = await request.auser()
    try:
        return await (
            SharedLink.objects.open_to(user)
            .select_related("conversation__endpoint", "conversation__user")
            .aget(token=token)
        )
    except SharedLink.DoesNotExist:
        raise Http404("No such link.") from None


def revoked_page(request: HttpRequest, link: SharedLink) -> TemplateResponse:
    return TemplateResponse(request, "agents_ui/shared_revoked.html", {"link": link}, status=410)


@login_required
async def shared(request: HtmxHttpRequest, token: str) -> TemplateResponse:
    """The conversation as it was when shared, for the people the link is for."""
    user = await request.auser()
    link = await open_link(request, token)
    if link.revoked:
        return revoked_page(request, link)
    thread = link.conversation
    abilities = await user_abilities(user)
    # The reader's own abilities (reasoning only for those who may see it); deciding is never theirs.
    plan = (await plan_inputs(thread.endpoint, abilities, negotiate=False)).plan()
    turns = await sync_to_async(shared_turns)(link, plan)
    context = {
        "link": link,
        "thread": thread,
        "endpoint": thread.endpoint,
        "plan": plan,
        "turns": turns,
        "owner": thread.user,
        "is_owner": thread.user_id == user.pk,
    }
    response = TemplateResponse(request, "agents_ui/shared.html", context)
    response["Referrer-Policy"] = "no-referrer"  # the token is the key: it is not passed on by links
    response["Cache-Control"] = "private, no-store"
    return response


def shared_turns(link: SharedLink, plan: Plan) -> list[tuple[Message | None, RunView]]:
    """Each frozen run with the message that started it, as read-only views."""
    thread = link.conversation
    frozen = thaw(thread, link.covered)
    decided = decided_before(thread, link.created_at)
    answers = answers_between(frozen)
    sent = sent_actions([turn.run for turn in frozen])
    prior: dict[str, Any] = {}
    turns = []
    for turn in frozen:
        view = RunView(
            turn.run, turn.transcript, plan, can_approve=False, live=False, answerable=False, last=False,
            decided=decided.get(turn.run.pk, {}), answers=answers.get(turn.run.pk, {}),
            thought=thought_seconds(turn.run, turn.transcript), a2ui_sent=sent.get(str(turn.run.pk), {}),
            a2ui_prior=prior, shared=link.token,
        )  # fmt: skip
        prior = prior_surfaces([turn.transcript], prior)
        turns.append((turn.message, view))
    return turns


@login_required
@require_GET
async def shared_file(request: HtmxHttpRequest, token: str, run_id: Any, artifact_id: str) -> HttpResponse:
    """A file the agent sent inline in a shared run, as the workspace hands it over (a download,
    never shown). A file that stays with the agent is not fetched for a reader: nothing reaches
    the agent through a shared link."""
    link = await open_link(request, token)
    if link.revoked:
        return revoked_page(request, link)
    frozen = await sync_to_async(thaw)(link.conversation, link.covered)
    turn = next((t for t in frozen if str(t.run.pk) == str(run_id)), None)
    owner = artifact_id.rpartition("/")[0]
    artifact = turn.transcript.artifacts.get(owner) if turn is not None else None
    if turn is None or artifact is None or artifact.remote:
        raise Http404("No such file.")
    try:
        file = await adapter_for(link.conversation.endpoint).artifact(turn.run, turn.transcript, artifact_id)
    except NotFound as missing:
        raise Http404(str(missing)) from None
    except Unavailable as problem:
        return HttpResponse(str(problem), status=502, content_type="text/plain; charset=utf-8")
    return file_download(file)

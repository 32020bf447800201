"""The product's routes, and one person's conversation with everything an id can name: what the
access and page-hardening tests walk."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, get_resolver, reverse

from agents_ui.comparisons import ComparePane, CompareSession
from agents_ui.models import Conversation, Message, Run, SharedLink, WaitingItem
from tests.factories import make_endpoint, make_user


def product_routes() -> dict[str, URLPattern]:
    """The product's named routes (not the admin's, which Django's permissions guard)."""
    routes: dict[str, URLPattern] = {}

    def walk(patterns, prefix: str = "") -> None:
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                if getattr(pattern, "app_name", None) == "admin" or str(pattern.pattern).startswith("admin"):
                    continue
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
            elif pattern.name and pattern.callback.__module__.startswith("agents_ui.views"):
                routes[pattern.name] = pattern

    walk(get_resolver().url_patterns)
    return routes


def owners_things():
    """One person's conversation with everything an id can name, on an agent a stranger may use too."""
    owner = make_user(username="owner", everyday=True)
    endpoint = make_endpoint(slug="shared-agent")
    conversation = Conversation.objects.create(user=owner, endpoint=endpoint, title="Private plans")
    run = Run.objects.create(conversation=conversation, status=Run.Status.COMPLETED)
    Message.objects.create(conversation=conversation, run=run, role="user", content="my secret plan")
    link = SharedLink.objects.create(
        conversation=conversation, token="t" * 43, audience=SharedLink.Audience.PEOPLE, title="Private plans"
    )
    # Something the run left waiting on its person, as the inbox lists it.
    item = WaitingItem.objects.create(
        run=run, user=owner, endpoint=endpoint, kind=WaitingItem.Kind.APPROVAL, request_id="ask-1",
        title="transfer_funds", asked_at=run.created_at,
    )  # fmt: skip
    # A comparison of theirs, whose first pane is that conversation.
    comparison = CompareSession.objects.create(user=owner, content="my secret plan")
    ComparePane.objects.create(session=comparison, position=0, conversation=conversation)
    return {
        "slug": endpoint.slug,
        "compare_id": comparison.pk,
        "position": 0,
        "item_id": item.pk,
        "conversation_id": conversation.pk,
        "run_id": run.pk,
        "artifact_id": "report.pdf",
        "link_id": link.pk,
        "token": link.token,
        "extension": "json",
    }


def url_for(name: str, pattern: URLPattern, things: dict) -> str:
    kwargs = {key: things[key] for key in pattern.pattern.regex.groupindex}
    return reverse(name, kwargs=kwargs)

"""Every route that takes an id checks the same rule: another person's ids get "not found".

The table of routes and their checks is in docs/security.md; this walks the URL conf, so a new route
that is not in the table, or that answers a stranger with anything but 404 (or 405 for a method it
does not take), fails here.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from agents_ui.models import ApprovalRecord, Conversation, Message, Run, SharedLink
from tests.factories import make_user
from tests.support import routes
from tests.support.routes import product_routes, url_for

pytestmark = pytest.mark.django_db(transaction=True)

SECURITY = Path(__file__).resolve().parents[2] / "docs" / "security.md"

# Routes with no id of a person's object in them: each is scoped to the person asking (their own
# list, their own composer) or is the shared-link page, whose token is the capability.
# The person's own lists, naming no agent either (the inbox's ids come in its forms, each checked:
# tests/views/test_inbox.py tries a stranger's).
PERSONS_OWN = {
    "catalogue",
    "conversations",
    "shared-links",
    "inbox",
    "inbox-count",
    "inbox-changes",
    "inbox-decide",
    "compare",
    "compare-start",
}
NO_OBJECT_ID = PERSONS_OWN | {
    "catalogue-card",
    "workspace",
    "send-message",
    "conversation-list",
    "stop-conversation",
}


@pytest.fixture
def owners_things():
    return routes.owners_things()


def documented_routes() -> set[str]:
    """The route names in docs/security.md's table (the first column, in backticks)."""
    table = SECURITY.read_text().split("## Who may reach what", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([a-z0-9-]+)` \|", table, flags=re.MULTILINE))


def test_every_route_is_in_the_security_table_and_only_those():
    routes = set(product_routes())
    documented = documented_routes()
    assert routes - documented == set(), "routes missing from docs/security.md's route table"
    assert documented - routes == set(), "docs/security.md lists routes that no longer exist"


@pytest.mark.parametrize("name", sorted(set(product_routes()) - NO_OBJECT_ID))
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_stranger_gets_not_found_from_every_route_that_takes_an_id(name, method, owners_things):
    stranger = make_user(username="stranger", everyday=True)
    client = Client()
    client.force_login(stranger)
    url = url_for(name, product_routes()[name], owners_things)
    response = getattr(client, method)(url, {"decision": "approve", "text": "hijack", "title": "Mine"})
    assert response.status_code in {404, 405}, f"{method.upper()} {url}: {response.status_code}"
    if response.status_code == 404:
        assert b"my secret plan" not in response.content and b"Private plans" not in response.content
    # Nothing of the owner's changed.
    conversation = Conversation.objects.get(pk=owners_things["conversation_id"])
    assert conversation.title == "Private plans"
    assert Run.objects.filter(conversation=conversation).count() == 1
    assert Run.objects.get(pk=owners_things["run_id"]).status == Run.Status.COMPLETED
    assert not ApprovalRecord.objects.exists()
    assert SharedLink.objects.get(pk=owners_things["link_id"]).revoked_at is None


@pytest.mark.parametrize("name", sorted(NO_OBJECT_ID - PERSONS_OWN))
@pytest.mark.parametrize("method", ["get", "post"])
def test_a_disabled_agent_is_not_found_on_every_route_that_names_it(name, method, owners_things):
    from agents_ui.models import AgentEndpoint

    AgentEndpoint.objects.filter(slug=owners_things["slug"]).update(enabled=False)
    client = Client()
    client.force_login(make_user(username="someone", everyday=True))
    url = url_for(name, product_routes()[name], owners_things)
    response = getattr(client, method)(url, {"text": "hello"})
    assert response.status_code in {404, 405}, f"{method.upper()} {url}: {response.status_code}"
    assert not Message.objects.filter(content="hello").exists()


def test_signed_out_people_are_sent_to_sign_in_or_not_found_everywhere(owners_things):
    client = Client()
    for name, pattern in product_routes().items():
        url = url_for(name, pattern, owners_things)
        for method in ("get", "post"):
            response = getattr(client, method)(url)
            assert response.status_code in {302, 404, 405}, f"{method.upper()} {url}: {response.status_code}"
            if response.status_code == 302:
                assert "/sign-in" in response["Location"] or "login" in response["Location"], url


# Routes that also need an object inside the run (an artifact, an image address, a surface, a waiting
# tool call) that this fixture's finished run does not have: the owner gets "not found" too, so for
# them the stranger's 404 above proves less. Each reads the run through the same `users_run` check
# first; their own tests try a stranger with the object present (test_image_proxy.py,
# test_shared_files.py, test_bad_input.py).
OWNER_NEEDS_MORE = {
    ("run-artifact", "get"),
    ("run-image", "get"),
    ("shared-artifact", "get"),
    ("run-a2ui", "post"),
    ("run-answer", "post"),
}


@pytest.mark.parametrize("name", sorted(set(product_routes()) - NO_OBJECT_ID))
@pytest.mark.parametrize("method", ["get", "post"])
def test_the_owner_reaches_what_a_stranger_does_not(name, method, owners_things):
    """The control of the stranger's test: the same request from the owner finds the object."""
    if (name, method) in OWNER_NEEDS_MORE:
        pytest.skip("the route needs an object this fixture's run does not have")
    client = Client()
    client.force_login(Conversation.objects.get(pk=owners_things["conversation_id"]).user)
    url = url_for(name, product_routes()[name], owners_things)
    response = getattr(client, method)(url, {"decision": "approve", "text": "mine", "title": "Mine"})
    assert response.status_code != 404, f"{method.upper()} {url}"

"""Shared links: a conversation frozen when shared, read-only, for the audience its owner chose and
nobody else; the owner's list of links, revoking one, and what goes when the conversation goes."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.utils import timezone

from agents_ui.models import ApprovalRecord, Conversation, Run, SharedLink
from tests.factories import make_endpoint, make_user
from tests.support.fault_agent import PAYLOADS
from tests.support.inert import assert_inert
from tests.support.turns import say

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner", everyday=True)


@pytest.fixture
def thread(owner):
    endpoint = make_endpoint(
        slug="desk", name="Desk", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2
    )
    conversation = Conversation.objects.create(user=owner, endpoint=endpoint, title="Refund for order 1042")
    say(conversation, "Where is my parcel?", "It left the depot on **Monday**.", tool="track_parcel")
    return conversation


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def share(client: Client, thread: Conversation, **data) -> SharedLink:
    response = client.post(f"/conversations/{thread.pk}/share/", {"audience": "signed-in", **data})
    assert response.status_code == 302, response.content.decode()[:2000]
    return SharedLink.objects.latest("created_at")


def test_the_link_is_a_random_token_not_the_conversation_id(owner, thread):
    link = share(signed_in(owner), thread)
    assert len(link.token) >= 32 and str(thread.pk) not in link.token
    assert link.get_absolute_url() == f"/s/{link.token}/"
    other = share(signed_in(owner), thread)
    assert other.token != link.token


def test_the_shared_view_is_a_snapshot_later_turns_stay_out(owner, thread):
    link = share(signed_in(owner), thread)
    say(thread, "And my refund?", "Refunded yesterday.")
    reader = signed_in(make_user("reader", everyday=True))
    page = reader.get(link.get_absolute_url()).content.decode()
    assert "Where is my parcel?" in page and "<strong>Monday</strong>" in page
    assert "track_parcel" in page
    assert "And my refund?" not in page and "Refunded yesterday." not in page
    # The owner's own page goes on.
    assert "Refunded yesterday." in signed_in(owner).get(thread.get_absolute_url()).content.decode()


def test_an_answer_regenerated_after_sharing_still_shows_as_shared(owner, thread):
    link = share(signed_in(owner), thread)
    Run.objects.filter(conversation=thread).update(superseded_at=timezone.now())
    say(thread, "Where is my parcel?", "A different answer.")
    page = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    assert "Monday" in page and "A different answer." not in page


def test_a_run_still_answering_is_left_out_with_its_message(owner, thread):
    say(thread, "Half-way question", "Half an ans", status=Run.Status.RUNNING)
    client = signed_in(owner)
    form = client.get(f"/conversations/{thread.pk}/share/").content.decode()
    assert "still answering" in form
    link = share(client, thread)
    page = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    assert "Half-way question" not in page and "Half an ans" not in page and "Monday" in page


def test_a_decision_made_after_sharing_is_not_in_the_snapshot(owner, thread):
    run = thread.runs.get()
    link = share(signed_in(owner), thread)
    ApprovalRecord.objects.create(
        run=run, request_id="ask-1", tool_name="refund", decision="approved", decided_by=owner
    )
    page = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    assert "data-decided" not in page


def test_the_shared_view_is_read_only(owner, thread):
    link = share(signed_in(owner), thread)
    page = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    for control in ("data-composer", "send-message", "/regenerate/", "/edit/", "/feedback/", "/decide/",
                    "/answer/", "/stop/", "sse-connect", "data-share-action"):  # fmt: skip
        assert control not in page, control
    assert 'method="post"' not in page.split("<main", 1)[1]


def test_anonymous_visitors_are_sent_to_sign_in_and_see_nothing(owner, thread):
    link = share(signed_in(owner), thread)
    response = Client().get(link.get_absolute_url())
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert "Monday" not in Client().get(link.get_absolute_url(), follow=True).content.decode()


def test_named_people_only_everyone_else_gets_not_found(owner, thread):
    ada, bob = make_user("ada", everyday=True), make_user("bob", everyday=True)
    ada.email = "Ada@Example.com"
    ada.save()
    link = share(signed_in(owner), thread, audience="people", people="ada@example.com")
    assert list(link.people.all()) == [ada]
    assert signed_in(ada).get(link.get_absolute_url()).status_code == 200
    assert signed_in(owner).get(link.get_absolute_url()).status_code == 200
    refused = signed_in(bob).get(link.get_absolute_url())
    assert refused.status_code == 404
    # The same answer as for a link that never existed: nothing tells it exists.
    unknown = signed_in(bob).get("/s/" + "x" * 32 + "/")
    assert unknown.status_code == 404

    def main(response) -> str:
        return response.content.decode().split("<main", 1)[1].split("</main>", 1)[0]

    assert main(refused) == main(unknown)


def test_unknown_names_are_a_form_error_and_nothing_typed_is_lost(owner, thread):
    make_user("ada", everyday=True)
    client = signed_in(owner)
    response = client.post(
        f"/conversations/{thread.pk}/share/",
        {"audience": "people", "people": "ada, nobody-here, ghost@example.com"},
    )
    assert response.status_code == 400
    page = response.content.decode()
    assert "Nobody here is called nobody-here, ghost@example.com" in page
    assert "ada, nobody-here, ghost@example.com</textarea>" in page
    assert re.search(r'value="people"[^>]*checked', page)
    assert not SharedLink.objects.exists()
    empty = client.post(f"/conversations/{thread.pk}/share/", {"audience": "people", "people": " "})
    assert empty.status_code == 400 and "Name at least one person" in empty.content.decode()


def test_only_the_owner_shares_exports_lists_and_revokes(owner, thread):
    link = share(signed_in(owner), thread)
    mallory = signed_in(make_user("mallory", everyday=True))
    assert mallory.get(f"/conversations/{thread.pk}/share/").status_code == 404
    assert mallory.post(f"/conversations/{thread.pk}/share/", {"audience": "signed-in"}).status_code == 404
    assert mallory.get(f"/conversations/{thread.pk}/export.json").status_code == 404
    assert mallory.get(f"/conversations/{thread.pk}/export.md").status_code == 404
    assert mallory.post(f"/shared/{link.pk}/revoke/").status_code == 404
    assert link.title not in mallory.get("/shared/").content.decode()
    link.refresh_from_db()
    assert not link.revoked and SharedLink.objects.count() == 1


def test_the_owner_lists_and_revokes_a_link_which_then_says_so(owner, thread):
    client = signed_in(owner)
    link = share(client, thread)
    listing = client.get("/shared/").content.decode()
    assert (
        "Refund for order 1042" in listing and link.token in listing and "Everyone signed in here" in listing
    )
    assert client.post(f"/shared/{link.pk}/revoke/").status_code == 302
    link.refresh_from_db()
    assert link.revoked
    reader = signed_in(make_user(everyday=True))
    gone = reader.get(link.get_absolute_url())
    assert gone.status_code == 410 and "This link was revoked" in gone.content.decode()
    assert "Monday" not in gone.content.decode()
    assert "Revoked" in client.get("/shared/").content.decode()


def test_a_revoked_link_for_named_people_is_still_not_found_for_others(owner, thread):
    make_user("ada", everyday=True)
    link = share(signed_in(owner), thread, audience="people", people="ada")
    SharedLink.objects.filter(pk=link.pk).update(revoked_at=timezone.now())
    assert signed_in(make_user(everyday=True)).get(link.get_absolute_url()).status_code == 404


def test_deleting_the_conversation_deletes_its_links(owner, thread):
    client = signed_in(owner)
    link = share(client, thread)
    client.post(f"/conversations/{thread.pk}/delete/")
    assert not SharedLink.objects.exists()
    assert signed_in(make_user(everyday=True)).get(link.get_absolute_url()).status_code == 404


def test_the_shared_page_carries_the_csp_and_no_inline_script(owner, thread):
    link = share(signed_in(owner), thread)
    response = signed_in(make_user(everyday=True)).get(link.get_absolute_url())
    csp = response["Content-Security-Policy"]
    assert "'nonce-" in csp and "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert response["Referrer-Policy"] == "no-referrer"
    html = response.content.decode()
    nonce = re.search(r"'nonce-([^']+)'", csp).group(1)
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert f'nonce="{nonce}"' in tag, tag
    assert not re.search(r"\son[a-z]+=", html)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_text_is_inert_in_the_shared_view(owner, payload):
    endpoint = make_endpoint(slug="evil", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2)
    thread = Conversation.objects.create(user=owner, endpoint=endpoint, title=f"Title {payload}")
    say(
        thread,
        f"Question {payload}",
        f"Answer {payload}\n\n[click](javascript:alert(1))",
        tool=f"t{payload}"[:60],
    )
    link = share(signed_in(owner), thread)
    html = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    assert_inert(html)
    assert "{{ 7*7 }}" in html or "7*7" not in payload
    assert_inert(signed_in(owner).get("/shared/").content.decode())


def test_the_admin_lists_links_without_their_token_and_revokes_them(owner, thread):
    link = share(signed_in(owner), thread)
    admin = signed_in(make_user(superuser=True))
    listing = admin.get("/admin/agents_ui/sharedlink/").content.decode()
    assert "Refund for order 1042" in listing and link.token not in listing
    detail = admin.get(f"/admin/agents_ui/sharedlink/{link.pk}/change/").content.decode()
    assert link.token not in detail
    admin.post("/admin/agents_ui/sharedlink/", {"action": "revoke", "_selected_action": [link.pk]})
    link.refresh_from_db()
    assert link.revoked


def logged(conversation: Conversation, question: str, events: list[dict], status: str) -> Run:
    """A turn whose event log is `events`, as the agent sent them."""
    message = conversation.messages.create(role="user", content=question)
    run = Run.objects.create(
        conversation=conversation, status=status, request={"kind": "message", "message_id": message.pk}
    )
    for seq, event in enumerate(events, start=1):
        run.events.create(seq=seq, type=event["type"], payload=event)
    return run


ASKING = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
    {"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "delete_all"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "tc", "delta": "{}"},
    {"type": "TOOL_CALL_END", "toolCallId": "tc"},
    {
        "type": "RUN_FINISHED",
        "threadId": "t",
        "runId": "r1",
        "outcome": {
            "type": "interrupt",
            "interrupts": [{"id": "ask-1", "reason": "tool_call", "message": "Delete?", "toolCallId": "tc"}],
        },
    },
]
ASKING_THE_PERSON = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
    {"type": "TOOL_CALL_START", "toolCallId": "q1", "toolCallName": "ask_user"},
    {"type": "TOOL_CALL_ARGS", "toolCallId": "q1", "delta": '{"question": "Which colour?"}'},
    {"type": "TOOL_CALL_END", "toolCallId": "q1"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"},
]


@pytest.mark.parametrize(
    ("events", "status", "form"),
    [(ASKING, Run.Status.INTERRUPTED, "/decide/"), (ASKING_THE_PERSON, Run.Status.COMPLETED, "/answer/")],
)
def test_a_question_waiting_for_the_owner_is_shown_but_not_answerable_through_the_link(
    owner, events, status, form
):
    endpoint = make_endpoint(slug="ops", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2)
    thread = Conversation.objects.create(user=owner, endpoint=endpoint, title="Clean up")
    logged(thread, "Clean up", events, status)
    client = signed_in(owner)
    assert form in client.get(thread.get_absolute_url()).content.decode()  # the owner can answer
    link = share(client, thread)
    page = signed_in(make_user(everyday=True)).get(link.get_absolute_url()).content.decode()
    assert form not in page and "<form" not in page.split("<main", 1)[1]
    assert ("not decided when this was shared" in page) == (status == Run.Status.INTERRUPTED)
    assert "delete_all" in page or "Which colour?" in page

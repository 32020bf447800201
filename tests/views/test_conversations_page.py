"""The conversations page: found by title or by what was said, renamed, deleted after a question."""

from __future__ import annotations

import pytest
from django.test import Client

from agents_ui.models import Conversation, Message, Run
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def threads():
    user = make_user(everyday=True)
    endpoint = make_endpoint(slug="desk", name="Desk")
    refund = Conversation.objects.create(user=user, endpoint=endpoint, title="Refund for order 1042")
    Message.objects.create(conversation=refund, role="user", content="Where is my parcel?")
    shipping = Conversation.objects.create(user=user, endpoint=endpoint, title="Shipping times")
    Message.objects.create(conversation=shipping, role="assistant", content="Parcels take three days.")
    old = Message.objects.create(
        conversation=shipping, role="user", content="zebra", superseded_at="2026-01-01T00:00Z"
    )
    client = Client()
    client.force_login(user)
    return client, refund, shipping, old


def listed(response) -> str:
    return response.content.decode()


def test_search_finds_titles_and_message_text_but_not_what_was_edited_away(threads):
    client, *_ = threads
    by_title = listed(client.get("/conversations/", {"q": "refund"}))
    assert "Refund for order 1042" in by_title and "Shipping times" not in by_title
    by_text = listed(client.get("/conversations/", {"q": "three DAYS"}))
    assert "Shipping times" in by_text and "Refund for order" not in by_text
    nothing = listed(client.get("/conversations/", {"q": "zebra"}))
    assert "Nothing found for “zebra”" in nothing


def test_a_conversation_is_renamed(threads):
    client, refund, _, _ = threads
    response = client.post(f"/conversations/{refund.pk}/rename/", {"title": "  Order   1042  "})
    assert response.status_code == 302
    refund.refresh_from_db()
    assert refund.title == "Order 1042"
    assert client.post(f"/conversations/{refund.pk}/rename/", {"title": " "}).status_code == 302
    refund.refresh_from_db()
    assert refund.title == "Order 1042"


def test_delete_asks_first_then_removes_everything(threads):
    client, refund, _, _ = threads
    Run.objects.create(conversation=refund)
    question = listed(client.get(f"/conversations/{refund.pk}/delete/"))
    assert "Delete “Refund for order 1042”?" in question and "cannot be undone" in question
    assert Conversation.objects.filter(pk=refund.pk).exists()
    client.post(f"/conversations/{refund.pk}/delete/")
    assert not Conversation.objects.filter(pk=refund.pk).exists()
    assert not Run.objects.exists()


def test_nobody_renames_or_deletes_someone_elses_conversation(threads):
    _, refund, _, _ = threads
    other = Client()
    other.force_login(make_user())
    assert other.post(f"/conversations/{refund.pk}/rename/", {"title": "Mine"}).status_code == 404
    assert other.get(f"/conversations/{refund.pk}/delete/").status_code == 404
    assert other.post(f"/conversations/{refund.pk}/delete/").status_code == 404
    refund.refresh_from_db()
    assert refund.title == "Refund for order 1042"


def test_last_activity_is_relative_with_the_exact_time_at_hand(threads):
    client, *_ = threads
    page = listed(client.get("/conversations/"))
    assert '<time datetime="' in page and 'title="' in page and "just now" in page


def test_a_conversation_whose_agent_is_still_answering_is_not_deleted(threads):
    from agents_ui.runs.live import LIVE, LiveRun

    client, refund, _, _ = threads
    run = Run.objects.create(conversation=refund, status=Run.Status.RUNNING)
    LIVE[str(run.pk)] = LiveRun(str(run.pk), "agui")
    try:
        client.post(f"/conversations/{refund.pk}/delete/")
    finally:
        LIVE.pop(str(run.pk), None)
    assert Conversation.objects.filter(pk=refund.pk).exists()
    assert "stop it first" in listed(client.get("/conversations/"))


def test_the_workspace_side_list_comes_again_as_it_is_now(threads):
    client, refund, shipping, _ = threads
    page = listed(client.get(f"/agents/desk/c/{refund.pk}/"))
    assert 'id="conversation-list"' in page and "Refund for order 1042" in page
    Conversation.objects.filter(pk=shipping.pk).update(title="Delivery questions")
    again = listed(client.get("/agents/desk/conversations/", {"current": str(refund.pk)}))
    assert "Delivery questions" in again and "Shipping times" not in again
    assert f'action="/conversations/{refund.pk}/rename/"' in again  # the current one can be renamed
    refund.delete()
    gone = listed(client.get("/agents/desk/conversations/", {"current": str(refund.pk)}))
    assert "Refund for order" not in gone and "/rename/" not in gone
    assert client.get("/agents/nosuch/conversations/").status_code == 404


def test_a_rename_from_the_side_list_answers_with_the_list(threads):
    client, refund, _, _ = threads
    htmx = {"HTTP_HX_REQUEST": "true"}
    response = client.post(f"/conversations/{refund.pk}/rename/", {"title": "Order 1042"}, **htmx)
    assert response.status_code == 200
    body = listed(response)
    assert 'id="conversation-list"' in body and "Order 1042" in body and "Refund for" not in body
    refused = listed(client.post(f"/conversations/{refund.pk}/rename/", {"title": " "}, **htmx))
    assert "Give the conversation a name." in refused
    refund.refresh_from_db()
    assert refund.title == "Order 1042"


def test_the_side_list_of_an_admin_preview_comes_again_in_preview(threads):
    client, *_ = threads
    admin = make_user("boss", superuser=True)
    client.force_login(admin)
    hidden = make_endpoint(slug="hidden", name="Hidden", enabled=False)
    page = listed(client.get(f"/agents/{hidden.slug}/", {"preview": "1"}))
    assert 'hx-get="/agents/hidden/conversations/?current=&amp;preview=1"' in page
    assert client.get("/agents/hidden/conversations/", {"current": "", "preview": "1"}).status_code == 200


def test_a_thread_whose_agent_waits_for_authorization_says_so_until_it_goes_on(threads):
    client, refund, shipping, _ = threads
    Run.objects.create(conversation=refund, status=Run.Status.AUTH_REQUIRED)
    page = listed(client.get("/conversations/"))
    row = page.split(f'data-conversation="{refund.pk}"')[1].split("</tr>")[0]
    assert "The agent needs authorization" in row
    assert "needs authorization" not in page.split(f'data-conversation="{shipping.pk}"')[1].split("</tr>")[0]
    Run.objects.create(conversation=refund, status=Run.Status.COMPLETED)  # the next message went on
    assert "The agent needs authorization" not in listed(client.get("/conversations/"))

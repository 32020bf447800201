"""What a send costs the database: the SQL statements from the composer's post to the run saved and
handed on (started in this process, or queued for a run worker), counted, with an upper bound that
holds them there. A send must not wait behind the streams a busy web process serves: every statement
it makes goes through the same database thread they use.

Each send is posted from a thread of the test's event loop (sync_to_async), as tests/views/test_inbox.py
counts its queries: the view then runs on that loop and its synchronous parts on that thread, whose
database connection is the one counted."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from agents_ui.models import Conversation, Run
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db(transaction=True)

# (first message of a conversation, a message on one) -> at most this many statements. They were
# 21 and 21 (23 and 23 with separate run workers) before the start path was cut down, then 13 and 18
# (15 and 20) before a send stopped looking for an earlier submit of its token first.
BOUNDS = {"embedded": (11, 16), "separate": (13, 18)}


def statements(client: Client, slug: str, **fields: str) -> int:
    with CaptureQueriesContext(connection) as queries:
        response = client.post(f"/agents/{slug}/send/", fields, headers={"HX-Request": "true"})
    assert response.status_code == 200, response.content[:500]
    return len(queries)


def signed_in() -> Client:
    client = Client()
    client.force_login(make_user())
    return client


@pytest.fixture
def handed_on(monkeypatch) -> list:
    """The runs the sends handed on: not driven here (the agent is not called; a run's own start is
    runs/live.py's)."""
    from agents_ui.views import composer

    started: list = []
    monkeypatch.setattr(composer, "start_run", lambda run, plan: started.append(run.pk))
    return started


@pytest.mark.parametrize("shape", ["embedded", "separate"])
async def test_a_send_costs_a_bounded_number_of_sql_statements(shape, settings, handed_on, capsys):
    settings.AGENTS_UI_RUN_WORKERS = shape

    def sends() -> tuple[int, int, Conversation]:
        endpoint, client = make_endpoint(), signed_in()
        # The first send discovers the agent (its declaration is stored once): not counted.
        statements(client, endpoint.slug, content="Warm up", client_token="warm")
        Run.objects.update(status=Run.Status.COMPLETED)
        first = statements(client, endpoint.slug, content="Hello", client_token="t1")
        conversation = Conversation.objects.latest("created_at")
        Run.objects.update(status=Run.Status.COMPLETED)
        on = {"conversation": str(conversation.pk)}
        return first, statements(client, endpoint.slug, content="More", client_token="t2", **on), conversation

    first, again, conversation = await sync_to_async(sends)()
    with capsys.disabled():
        print(f"\nsend_sql_statements[{shape}]: first message {first}, on a conversation {again}")
    assert await conversation.messages.acount() == 2 and await conversation.runs.acount() == 2
    assert first <= BOUNDS[shape][0] and again <= BOUNDS[shape][1]
    assert len(handed_on) == 3  # each send handed its run on once (a no-op with separate run workers)


async def test_the_same_message_sent_twice_is_saved_once(handed_on):
    def sends() -> None:
        endpoint, client = make_endpoint(), signed_in()
        for _ in range(2):
            statements(client, endpoint.slug, content="Once", client_token="same")

    await sync_to_async(sends)()
    assert await Run.objects.acount() == 1 and await Conversation.objects.acount() == 1
    assert len(handed_on) == 1

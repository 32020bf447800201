"""The send throttle of `custom.rateLimit`: a send is counted and recorded at once, so sends at the
same instant cannot all pass."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db import close_old_connections, connection, transaction

from agents_ui.decisions import decide
from agents_ui.models import Conversation, Message, Run
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import LIVE
from agents_ui.runs.throttle import claim
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 2
DECLARATION = {"custom": {"rateLimit": {"maxRequestsPerMinute": LIMIT}}}
ANSWER = [
    {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
    {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
]


def test_sends_at_the_same_instant_from_separate_connections_pass_only_as_many_as_allowed():
    """Threads with a database connection each, as server processes have: each counts and
    records in one transaction, all let go at the same moment."""
    user, endpoint = make_user(), make_endpoint()
    conversation = Conversation.objects.create(user=user, endpoint=endpoint, title="t")
    plan = decide(capabilities=DECLARATION)
    senders = 6
    start = threading.Barrier(senders)
    passed: list[bool] = []

    def send() -> None:
        try:
            start.wait()
            with transaction.atomic():
                left = claim(plan, endpoint, user)
                if left.exhausted:
                    passed.append(False)
                    return
                # Time for the others to count before this send commits, were nothing locked.
                threading.Event().wait(0.05)
                message = Message.objects.create(
                    conversation=conversation, role=Message.Role.USER, content="hi"
                )
                Run.objects.create(
                    conversation=conversation, request=RunRequest(message_id=message.pk).as_json()
                )
                passed.append(True)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=send) for _ in range(senders)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(passed) == [False] * (senders - LIMIT) + [True] * LIMIT
    assert Message.objects.filter(role=Message.Role.USER).count() == LIMIT


def test_the_count_is_taken_inside_the_transaction_that_records_the_send_or_not_at_all():
    user, endpoint = make_user(), make_endpoint()
    with pytest.raises(RuntimeError, match="inside one"):
        claim(decide(capabilities=DECLARATION), endpoint, user)
    with transaction.atomic():
        assert claim(decide(capabilities={}), endpoint, user) is None  # no rate declared: no count


@pytest.fixture
async def person(fake_server):
    cache.clear()

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, DECLARATION)
            return
        exchange.start_sse()
        for event in ANSWER:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="limited", base_url=f"{agent.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)())
    yield client
    await settle()
    assert not LIVE


async def test_messages_sent_at_the_same_instant_through_the_composer_pass_only_as_allowed(person):
    sends = [person.post("/agents/limited/send/", {"content": f"message {n}"}) for n in range(5)]
    responses = await asyncio.gather(*sends)
    refused = [r for r in responses if "at most 2 messages a minute" in r.content.decode()]
    assert len(refused) == 5 - LIMIT
    assert await Message.objects.filter(role=Message.Role.USER).acount() == LIMIT


async def test_a_new_answer_or_an_edit_counts_and_is_held_to_the_rate_like_a_message(person):
    """Every route that starts a turn is held to the agent's rate: answering again or editing does
    not get round it."""
    await person.post("/agents/limited/send/", {"content": "first"})
    await settle()
    run = await Run.objects.aget()
    regenerated = await person.post(f"/runs/{run.pk}/regenerate/")
    assert regenerated.status_code in {200, 204, 302}
    await settle()
    assert await Run.objects.acount() == LIMIT  # the first message and its new answer
    latest = await Run.objects.order_by("-created_at").afirst()
    conversation = await Conversation.objects.select_related("endpoint").aget()
    for path, data in (
        (f"/runs/{latest.pk}/regenerate/", {}),
        (f"/runs/{latest.pk}/edit/", {"content": "edited"}),
    ):
        await person.post(path, data)
        page = (await person.get(conversation.get_absolute_url())).content.decode()
        assert "at most 2 messages a minute" in page and "Try again in" in page
    assert await Run.objects.acount() == LIMIT
    assert not await Message.objects.filter(content="edited").aexists()  # nothing changed
    assert await Run.objects.filter(superseded_at__isnull=False).acount() == 1  # only the first try's


async def test_a_decision_is_never_refused_for_the_rate():
    """A decision or a tool's answer resumes a turn: it does not count and is not held."""
    from agents_ui.runs.throttle import TURNS

    assert "resume" not in TURNS and "answer" not in TURNS


def test_a_press_on_a_generated_interface_is_held_to_the_rate_too():
    from agents_ui.runs.throttle import Throttled
    from agents_ui.views.a2ui_actions import _action_run

    user, endpoint = make_user(), make_endpoint()
    conversation = Conversation.objects.create(user=user, endpoint=endpoint, title="t")
    runs = [
        Run.objects.create(
            conversation=conversation, status=Run.Status.COMPLETED, request=RunRequest().as_json()
        )
        for _ in range(LIMIT)
    ]
    with pytest.raises(Throttled, match="Try again in"):
        _action_run(runs[-1], {"userAction": {}}, decide(capabilities=DECLARATION), user)
    assert Run.objects.count() == LIMIT

"""The inbox through the product (without a browser): every kind of item a run leaves waiting on its
person, decided from the inbox with the conversation's own views, snoozed, decided in bulk, never
decided twice, and never shown to anyone else."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents_ui.models import ApprovalRecord, Run, WaitingItem
from agents_ui.runs.event_log import replay
from agents_ui.runs.waiting import waiting_summary
from tests.factories import make_endpoint, make_user
from tests.support.client_tool_agent import declaration, script
from tests.support.htmx import HtmxClient
from tests.support.waiting import eventually, settle

pytestmark = pytest.mark.django_db(transaction=True)
PERMS = ["upload_files", "approve_actions", "view_reasoning"]


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
async def demo(live_url):
    from agents_ui.demo.registry import register_demo_agents

    await sync_to_async(register_demo_agents)(live_url)
    return live_url


PEOPLE: list[HtmxClient] = []


@pytest.fixture(autouse=True)
async def trips_end():
    """The Trip Planner's tasks a test leaves waiting (a question, an authorization) are answered
    at its end, so that no A2A task of the demo server is left pending when the server stops."""
    yield
    for client in PEOPLE:
        waiting = Run.objects.filter(
            conversation__user=client.user,
            conversation__endpoint__slug="trip-planner",
            status__in=[Run.Status.INTERRUPTED, Run.Status.AUTH_REQUIRED],
            superseded_at__isnull=True,
        ).values_list("conversation_id", flat=True)
        for conversation in {c async for c in waiting}:
            form = {"content": "Lisbon for 3 days", "conversation": str(conversation)}
            await client.post("/agents/trip-planner/send/", form)
    await settle()
    PEOPLE.clear()


async def person(perms=PERMS) -> HtmxClient:
    client = HtmxClient()
    client.user = await sync_to_async(make_user)(perms=perms)
    await client.aforce_login(client.user)
    PEOPLE.append(client)
    return client


async def say(client: HtmxClient, slug: str, text: str, conversation=None) -> Run:
    form = {"content": text, **({"conversation": str(conversation.pk)} if conversation else {})}
    response = await client.post(f"/agents/{slug}/send/", form)
    assert response.status_code == 200, response.content[:300]
    await settle()
    return await Run.objects.select_related("conversation__endpoint").order_by("-created_at").afirst()


async def items(client: HtmxClient) -> list[WaitingItem]:
    found = WaitingItem.objects.open_for(client.user).awake().select_related("endpoint", "run__conversation")
    return [i async for i in found]


async def count(client: HtmxClient) -> int:
    return (await sync_to_async(waiting_summary)(client.user))[0]


async def inbox_page(client: HtmxClient) -> str:
    response = await client.get("/inbox/")
    assert response.status_code == 200
    return response.content.decode()


async def test_an_ag_ui_interrupt_waits_in_the_inbox_and_is_decided_there_once(demo):
    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    assert run.status == Run.Status.INTERRUPTED
    [item] = await items(alice)
    assert (item.kind, item.endpoint.slug) == ("approval", "operations")
    [interrupt] = (await sync_to_async(replay)(run)).open_interrupts
    assert item.request_id == interrupt.id and item.title
    page = await inbox_page(alice)
    assert "data-inbox-badge>1<" in page and "Operations Agent" in page and "Asks for approval" in page
    # Decided right there, with the conversation's own approval form.
    assert f'action="/runs/{run.pk}/decide/"' in page and 'name="inbox" value="1"' in page
    assert f'href="{run.conversation.get_absolute_url()}#run-{run.pk}-approvals"' in page

    decided = await alice.post(
        f"/runs/{run.pk}/decide/", {"inbox": "1", f"decision-{interrupt.id}": "approve"}
    )
    body = decided.content.decode()
    assert decided.status_code == 200
    assert f'id="inbox-run-{run.pk}"' in body and "Approved by" in body and 'id="inbox-link"' in body
    assert "data-inbox-badge" not in body  # the count went down to nothing
    await settle()
    assert await ApprovalRecord.objects.filter(run=run).acount() == 1
    assert await count(alice) == 0
    # The resume closed the item: the thread went on.
    assert (await WaitingItem.objects.aget(pk=item.pk)).closed_at is not None

    # A second tab, still showing the form, is told; nothing is decided twice.
    again = await alice.post(f"/runs/{run.pk}/decide/", {"inbox": "1", f"decision-{interrupt.id}": "reject"})
    assert f"Already decided by {alice.user.get_username()} at" in again.content.decode()
    assert await ApprovalRecord.objects.filter(run=run).acount() == 1
    # And the conversation shows it decided.
    conversation = (await alice.get(run.conversation.get_absolute_url())).content.decode()
    assert f'data-decided="{interrupt.id}"' in conversation


async def test_the_page_learns_an_item_was_decided_elsewhere(demo):
    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    [item] = await items(alice)
    [interrupt] = (await sync_to_async(replay)(run)).open_interrupts
    quiet = await alice.get("/inbox/changes/", {"item": [item.pk]})
    assert f'id="inbox-run-{run.pk}"' not in quiet.content.decode()  # still waiting: nothing to redraw
    await alice.post(f"/runs/{run.pk}/decide/", {f"decision-{interrupt.id}": "reject"})  # in the conversation
    await settle()
    changed = (await alice.get("/inbox/changes/", {"item": [item.pk]})).content.decode()
    assert f'id="inbox-run-{run.pk}" data-inbox-run="{run.pk}" hx-swap-oob="true"' in changed
    assert f"Already decided by {alice.user.get_username()} at" in changed and "rejected" in changed


async def test_two_tabs_deciding_at_the_same_time_make_one_decision(demo):
    import asyncio

    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    [interrupt] = (await sync_to_async(replay)(run)).open_interrupts
    other_tab = HtmxClient()
    await other_tab.aforce_login(alice.user)
    form = {"inbox": "1", f"decision-{interrupt.id}": "approve"}
    answers = await asyncio.gather(
        alice.post(f"/runs/{run.pk}/decide/", form), other_tab.post(f"/runs/{run.pk}/decide/", form)
    )
    await settle()
    bodies = [a.content.decode() for a in answers]
    assert await ApprovalRecord.objects.filter(run=run).acount() == 1
    assert await Run.objects.filter(conversation=run.conversation).acount() == 2  # one resume
    assert sum("Approved by" in b for b in bodies) == 1
    told = [b for b in bodies if "Approved by" not in b]
    assert told and ("Already decided by" in told[0] or "already decided" in told[0].lower()), told


async def test_an_external_agents_request_waits_while_its_stream_holds_and_is_decided_from_the_inbox(demo):
    alice = await person()
    response = await alice.post("/agents/support-desk/send/", {"content": "I want a refund of 30 euros"})
    assert response.status_code == 200
    await eventually(lambda: WaitingItem.objects.filter(user=alice.user, kind="approval").aexists())
    [item] = await items(alice)
    run = await Run.objects.select_related("conversation__endpoint").aget(pk=item.run_id)
    assert run.status == Run.Status.RUNNING and item.endpoint.slug == "support-desk"
    page = await inbox_page(alice)
    assert f'data-approval="{item.request_id}"' in page
    decided = await alice.post(
        f"/runs/{run.pk}/decide/", {"inbox": "1", f"decision-{item.request_id}": "approve"}
    )
    assert "Approved by" in decided.content.decode()
    await settle()
    run = await Run.objects.aget(pk=run.pk)
    assert run.status == Run.Status.COMPLETED
    assert await count(alice) == 0
    assert (await WaitingItem.objects.aget(pk=item.pk)).closed_at is not None  # the run's end closed it


async def test_an_a2a_task_asking_a_question_waits_and_is_answered_from_the_inbox(demo):
    alice = await person()
    run = await say(alice, "trip-planner", "Plan a trip")
    [item] = await items(alice)
    assert item.kind == "input" and item.title
    page = await inbox_page(alice)
    assert "Asks a question" in page and 'action="/agents/trip-planner/send/"' in page
    empty = await alice.post(
        "/agents/trip-planner/send/", {"inbox": "1", "item": item.pk, "conversation": run.conversation_id}
    )
    assert "Write a message first." in empty.content.decode() and "HX-Retarget" not in empty
    answered = await alice.post(
        "/agents/trip-planner/send/",
        {"inbox": "1", "item": item.pk, "conversation": run.conversation_id, "content": "Lisbon"},
    )
    assert (
        "Answered at" in answered.content.decode() and f'id="inbox-run-{run.pk}"' in answered.content.decode()
    )
    await settle()
    assert await count(alice) == 0
    latest = await Run.objects.filter(conversation_id=run.conversation_id).alatest()
    assert (
        latest.status == Run.Status.COMPLETED
        and (await sync_to_async(replay)(latest)).task.state == "completed"
    )


async def helper_agent(fake_server) -> list[dict]:
    """An AG-UI agent that leaves tool calls for the client (tests/support/client_tool_agent.py)."""
    received: list[dict] = []

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, declaration("offers"))
            return
        received.append(exchange.request.json())
        exchange.start_sse()
        for event in script(received[-1]):
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="helper-agent", base_url=f"{server.url}/agent")
    return received


async def test_a_tool_call_left_for_the_client_waits_and_is_answered_from_the_inbox(fake_server):
    received = await helper_agent(fake_server)
    alice = await person()
    run = await say(alice, "helper-agent", "please ask me")
    [item] = await items(alice)
    assert item.kind == "answer"
    page = await inbox_page(alice)
    assert f'action="/runs/{run.pk}/answer/"' in page and "Which city should the trip start from?" in page
    # The call's card shows its arguments; the item does not repeat them as a line of JSON above it.
    assert 'class="small inbox-detail"' not in page and item.detail
    answered = await alice.post(
        f"/runs/{run.pk}/answer/", {"inbox": "1", "call": item.request_id, "answer": "Porto"}
    )
    assert "Answered at" in answered.content.decode()
    await settle()
    assert json.loads(received[-1]["messages"][-1]["content"]) == {"answer": "Porto"}
    assert await count(alice) == 0


async def test_nobody_else_sees_or_touches_a_persons_items(demo):
    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    [item] = await items(alice)
    bob = await person()
    assert await count(bob) == 0
    page = await inbox_page(bob)
    assert str(run.pk) not in page and "Nothing waits on you" in page
    assert (await bob.post(f"/inbox/{item.pk}/snooze/", {"for": "1h"})).status_code == 404
    changed = (await bob.get("/inbox/changes/", {"item": [item.pk]})).content.decode()
    assert str(run.pk) not in changed
    await bob.post("/inbox/decide/", {"items": [item.pk], "action": "approve", "confirmed": "1"})
    assert not await ApprovalRecord.objects.filter(run=run).aexists()
    assert (await bob.post(f"/runs/{run.pk}/decide/", {"inbox": "1"})).status_code == 404


async def test_an_agent_the_person_may_no_longer_use_leaves_their_inbox(demo):
    from django.contrib.auth.models import Group

    alice = await person()
    await say(alice, "operations", "Pay the vendor 120 euros.")
    assert await count(alice) == 1
    endpoint = (await items(alice))[0].endpoint
    staff_only = await Group.objects.acreate(name="Finance")
    await sync_to_async(endpoint.allowed_groups.add)(staff_only)
    assert await count(alice) == 0
    assert "Operations Agent" not in await inbox_page(alice)


async def test_not_now_puts_an_item_aside_without_deciding_and_back_now_returns_it(demo):
    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    [item] = await items(alice)
    response = await alice.post(f"/inbox/{item.pk}/snooze/", {"for": "4h"})
    assert response.status_code == 302
    item = await WaitingItem.objects.aget(pk=item.pk)
    # Four hours, or back five minutes before the request expires, whichever comes first.
    expected = min(timezone.now() + timedelta(hours=4), item.expires_at - timedelta(minutes=5))
    assert abs(item.snoozed_until - expected) < timedelta(minutes=1)
    assert await count(alice) == 0
    assert not await ApprovalRecord.objects.filter(run=run).aexists()
    page = await inbox_page(alice)
    assert "Put aside for later (1)" in page and f'id="inbox-run-{run.pk}"' not in page
    await alice.post(f"/inbox/{item.pk}/snooze/", {"for": "wake"})
    assert await count(alice) == 1
    assert (await alice.post(f"/inbox/{item.pk}/snooze/", {"for": "forever"})).status_code == 302
    assert (await WaitingItem.objects.aget(pk=item.pk)).snoozed_until is None


async def test_an_expired_request_leaves_the_inbox(demo):
    alice = await person()
    await say(alice, "operations", "Pay the vendor 120 euros.")
    [item] = await items(alice)
    await WaitingItem.objects.filter(pk=item.pk).aupdate(expires_at=timezone.now() - timedelta(seconds=1))
    assert await count(alice) == 0
    assert "Nothing waits on you" in await inbox_page(alice)


async def test_bulk_approval_confirms_the_list_then_decides_each_and_skips_what_was_decided(demo):
    alice = await person()
    runs = [await say(alice, "operations", f"Pay the vendor {n} euros.") for n in (120, 130, 140)]
    found = await items(alice)
    assert len(found) == 3
    page = await inbox_page(alice)
    assert 'data-bulk="operations"' in page and 'form="bulk-' in page
    pks = [i.pk for i in found]
    confirm = await alice.post("/inbox/decide/", {"items": pks, "action": "approve"})
    body = confirm.content.decode()
    assert "Approve 3 requests of Operations Agent?" in body and body.count("data-confirm-item=") == 3
    assert not await ApprovalRecord.objects.aexists()  # nothing decided before the confirmation
    # One of them is decided in its conversation meanwhile.
    [first] = (await sync_to_async(replay)(runs[0])).open_interrupts
    await alice.post(f"/runs/{runs[0].pk}/decide/", {f"decision-{first.id}": "reject"})
    await settle()
    done = await alice.post("/inbox/decide/", {"items": pks, "action": "approve", "confirmed": "1"})
    assert done.status_code == 302
    await settle()
    decisions = {r.run_id: r.decision async for r in ApprovalRecord.objects.all()}
    assert decisions == {runs[0].pk: "rejected", runs[1].pk: "approved", runs[2].pk: "approved"}
    assert await count(alice) == 0


async def test_bulk_takes_only_approvals_of_one_agent(demo):
    alice = await person()
    await say(alice, "operations", "Pay the vendor 120 euros.")
    await say(alice, "trip-planner", "Plan a trip")
    pks = [i.pk for i in await items(alice)]
    response = await alice.post("/inbox/decide/", {"items": pks, "action": "approve"})
    assert response.status_code == 200 and response.content.decode().count("data-confirm-item=") == 1


async def test_the_count_is_two_queries_at_most_and_the_page_folds_only_its_own_runs(demo):
    alice = await person()
    await say(alice, "operations", "Pay the vendor 120 euros.")
    for n in range(3):  # finished conversations: nothing waits in them
        await say(alice, "research-assistant", f"What is a tide {n}?")
    [item] = await items(alice)

    def counted(user, expected):
        with CaptureQueriesContext(connection) as queries:
            assert waiting_summary(user) == expected
        return [q["sql"] for q in queries.captured_queries]

    # A look at the open items' index, then the count itself; only the look for nothing open.
    assert len(await sync_to_async(counted)(alice.user, (1, item.asked_at))) == 2
    nobody = await person()
    [look] = await sync_to_async(counted)(nobody.user, (0, None))
    assert '"closed_at" IS NULL' in look and "LIMIT 1" in look

    def page_queries():
        from django.test import Client

        browser = Client()
        browser.force_login(alice.user)
        with CaptureQueriesContext(connection) as queries:
            assert browser.get("/inbox/").status_code == 200
        return [q["sql"] for q in queries.captured_queries if 'FROM "agents_ui_runevent"' in q["sql"]]

    assert len(await sync_to_async(page_queries)()) == 1  # the waiting run's events, no other run's


async def test_the_header_shows_the_count_on_every_page_and_polls_it(demo):
    alice = await person()
    await say(alice, "operations", "Pay the vendor 120 euros.")
    catalogue = (await alice.get("/")).content.decode()
    assert 'id="inbox-link"' in catalogue and 'hx-get="/inbox/count/"' in catalogue
    assert "data-inbox-badge>1<" in catalogue
    assert "inbox.js" not in catalogue  # loaded only where notifications were turned on
    alice.cookies["inbox_notify"] = "1"
    assert "inbox.js" in (await alice.get("/")).content.decode()
    fragment = (await alice.get("/inbox/count/")).content.decode()
    assert fragment.startswith("<a") or 'id="inbox-link"' in fragment
    assert 'data-inbox-count="1"' in fragment


async def test_an_answer_kept_for_the_runs_other_call_leaves_the_inbox_and_the_other_still_waits(fake_server):
    received = await helper_agent(fake_server)
    alice = await person()
    run = await say(alice, "helper-agent", "ask me both")
    found = await items(alice)
    assert sorted(i.kind for i in found) == ["answer", "answer"]
    ask = next(i for i in found if i.title == "ask_user")
    kept = await alice.post(
        f"/runs/{run.pk}/answer/", {"inbox": "1", "call": ask.request_id, "answer": "Porto"}
    )
    body = kept.content.decode()
    assert f'id="inbox-run-{run.pk}"' in body and "data-inbox-badge>1<" in body
    assert await count(alice) == 1 and len(received) == 1  # nothing goes to the agent before both answers


async def test_a_run_that_failed_or_was_stopped_after_it_asked_waits_for_nothing(demo):
    alice = await person()
    run = await say(alice, "operations", "Pay the vendor 120 euros.")
    assert await count(alice) == 1
    await Run.objects.filter(pk=run.pk).aupdate(status=Run.Status.FAILED)
    assert await count(alice) == 0


async def test_an_a2a_task_needing_authorization_waits_in_the_inbox(demo):
    alice = await person()
    run = await say(alice, "trip-planner", "book a flight to Lisbon")
    assert run.status == Run.Status.AUTH_REQUIRED
    [item] = await items(alice)
    assert item.kind == "auth" and item.title
    page = await inbox_page(alice)
    assert "Needs authorization" in page and f"#run-{run.pk}" in page


async def test_runs_left_waiting_before_the_inbox_are_recorded_by_a_command(demo):
    from io import StringIO

    from django.core.management import call_command

    alice = await person()
    asking = await say(alice, "operations", "Pay the vendor 120 euros.")
    await say(alice, "trip-planner", "Plan a trip")
    await say(alice, "research-assistant", "What is a tide?")
    await WaitingItem.objects.all().adelete()  # as a database from before the inbox
    said = StringIO()
    await sync_to_async(call_command)("record_waiting", stdout=said)
    assert said.getvalue().strip() == "Recorded 2 waiting items."
    found = await items(alice)
    assert sorted(i.kind for i in found) == ["approval", "input"]
    assert asking.pk in {i.run_id for i in found}
    await sync_to_async(call_command)("record_waiting", stdout=StringIO())  # again: nothing twice
    assert await WaitingItem.objects.acount() == 2

"""Compare through the product (without a browser): one message to several demo agents, each answered
by an ordinary run of its own conversation; who may compare what; the throttle; figures from the
event log; the rating; "Continue with this one"."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from ag_ui.core import RunFinishedEvent, RunStartedEvent, TextMessageChunkEvent, TokenUsage
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.test import Client

from agents_ui.comparisons import ComparePane, CompareRating, CompareSession
from agents_ui.models import (
    AgentEndpoint,
    Attachment,
    Conversation,
    Message,
    Run,
    RunEvent,
)
from agents_ui.runs.event_log import event_record
from agents_ui.runs.figures import turn_figures
from agents_ui.sdk.transcript import Transcript
from agents_ui.sdk.usage import stored
from agents_ui.views.compare import shared_upload
from tests.factories import make_endpoint, make_user
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle

PERMS = ["upload_files", "approve_actions", "view_reasoning"]


def text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture
async def demo(live_url):
    from agents_ui.demo.registry import register_demo_agents

    await sync_to_async(register_demo_agents)(live_url)
    return live_url


async def person(perms=PERMS) -> HtmxClient:
    client = HtmxClient()
    client.user = await sync_to_async(make_user)(perms=perms, everyday=True)
    await client.aforce_login(client.user)
    return client


async def compared(client, agents, content="Hello, who are you?", **extra) -> CompareSession:
    response = await client.post("/compare/start/", {"agents": agents, "content": content, **extra})
    assert response.status_code == 302, text(response.content.decode())
    await settle()
    return await CompareSession.objects.aget(user=client.user)


@pytest.mark.django_db(transaction=True)
async def test_one_message_starts_one_ordinary_run_per_agent_shown_side_by_side(demo):
    client = await person()
    session = await compared(client, ["research-assistant", "support-desk", "trip-planner"])
    panes = [p async for p in session.panes.select_related("conversation__endpoint")]
    assert [p.conversation.endpoint.slug for p in panes] == [
        "research-assistant",
        "support-desk",
        "trip-planner",
    ]
    for pane in panes:
        runs = [r async for r in Run.objects.filter(conversation=pane.conversation)]
        assert len(runs) == 1 and runs[0].status != Run.Status.FAILED, runs[0].error
        message = await Message.objects.aget(conversation=pane.conversation, role="user")
        assert message.content == "Hello, who are you?"
    page = await client.get(session.get_absolute_url())
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count('class="compare-pane"') == 3
    assert html.count('class="run"') >= 3  # each pane drawn by the workspace's run partial
    assert "What each declares and showed" in html and "data-differs" in html
    assert html.count('data-figure="first-word"') == 3
    # The answers' figures come from the runs: every run finished, so each has a total.
    assert "still answering" not in html


@pytest.mark.django_db(transaction=True)
async def test_compare_conversations_stay_out_of_the_lists_until_continued(demo):
    client = await person()
    session = await compared(client, ["research-assistant", "planner"])
    pane = await ComparePane.objects.select_related("conversation__endpoint").aget(
        session=session, position=1
    )
    listing = text((await client.get("/conversations/")).content.decode())
    assert "Hello, who are you?" not in listing
    response = await client.post(f"/compare/{session.pk}/1/continue/", headers={"HX-Request": "false"})
    url = pane.conversation.get_absolute_url()
    assert response.status_code == 302 and response["Location"] == url
    await pane.arefresh_from_db()
    assert pane.continued_at is not None
    page = await client.get(url)
    assert page.status_code == 200 and "Hello, who are you?" in page.content.decode()
    listing = text((await client.get("/conversations/")).content.decode())
    assert listing.count("Hello, who are you?") == 1  # the continued one only
    # It goes on in its workspace; the comparison keeps the compared turn, and says where the rest is.
    form = {"content": "And then?", "conversation": str(pane.conversation_id)}
    assert (await client.post("/agents/planner/send/", form)).status_code == 200
    await settle()
    compared_page = (await client.get(session.get_absolute_url())).content.decode()
    planner = compared_page.split('data-pane="planner"')[1]
    assert "1 more answer there" in text(planner) and "And then?" not in planner


@pytest.mark.django_db(transaction=True)
async def test_another_persons_comparison_is_not_found(demo):
    owner = await person()
    session = await compared(owner, ["research-assistant", "planner"])
    stranger = await person()
    for url in (f"/compare/{session.pk}/", f"/compare/{session.pk}/0/figures/"):
        assert (await stranger.get(url)).status_code == 404
    assert (await stranger.post(f"/compare/{session.pk}/rate/", {"winner": "0"})).status_code == 404
    assert (await stranger.post(f"/compare/{session.pk}/0/continue/")).status_code == 404
    assert not await CompareRating.objects.aexists()
    assert not await ComparePane.objects.filter(continued_at__isnull=False).aexists()
    assert (await owner.get(f"/compare/{session.pk}/9/figures/")).status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_an_agent_the_person_may_not_use_is_refused_and_nothing_is_sent(demo):
    await sync_to_async(_restrict)("planner")
    await AgentEndpoint.objects.filter(slug="orchestrator").aupdate(enabled=False)
    client = await person()
    for agents in (
        ["research-assistant", "planner"],
        ["research-assistant", "orchestrator"],
        ["research-assistant", "nope"],
    ):
        response = await client.post("/compare/start/", {"agents": agents, "content": "Hi"})
        assert response.status_code == 422
        assert "not one you can use" in text(response.content.decode())
        assert 'value="Hi"' not in response.content.decode() and "Hi</textarea>" in response.content.decode()
    picker = (await client.get("/compare/")).content.decode()
    assert 'value="planner"' not in picker and 'value="orchestrator"' not in picker
    assert 'value="research-assistant"' in picker
    assert not await Run.objects.aexists() and not await CompareSession.objects.aexists()


def _restrict(slug: str) -> None:
    AgentEndpoint.objects.get(slug=slug).allowed_groups.add(Group.objects.create(name="staff-only"))


@pytest.mark.django_db(transaction=True)
async def test_two_to_four_agents_and_a_message(demo):
    client = await person()
    few = await client.post("/compare/start/", {"agents": ["planner"], "content": "Hi"})
    many = await client.post(
        "/compare/start/",
        {"agents": ["planner", "cipher", "studio", "toolsmith", "research-assistant"], "content": "Hi"},
    )
    empty = await client.post("/compare/start/", {"agents": ["planner", "cipher"], "content": "  "})
    assert [r.status_code for r in (few, many, empty)] == [422, 422, 422]
    assert "Choose 2 to 4 agents" in text(few.content.decode())
    assert "at most 4" in text(many.content.decode())
    assert "Write a message first" in text(empty.content.decode())
    assert not await Run.objects.aexists()


@pytest.mark.django_db(transaction=True)
async def test_each_compare_run_counts_against_its_agents_throttle(demo):
    """The Research Assistant declares a rate limit (custom.rateLimit): a comparison spends one of
    its sends, and once none is left the whole comparison is refused, no agent answering alone."""
    from agents_ui.endpoints.plans import plan_inputs, user_abilities
    from agents_ui.runs.throttle import allowance

    client = await person()
    endpoint = await AgentEndpoint.objects.aget(slug="research-assistant")
    plan = (await plan_inputs(endpoint, await user_abilities(client.user))).plan()
    before = await allowance(plan, endpoint, client.user)
    assert before is not None, "the Research Assistant declares a rate limit"
    picker = (await client.get("/compare/?agents=research-assistant&agents=planner")).content.decode()
    assert f'data-limit="research-assistant" data-left="{before.left}"' in picker
    assert 'data-limit="planner"' not in picker
    await compared(client, ["research-assistant", "planner"])
    after = await allowance(plan, endpoint, client.user)
    assert after.left == before.left - 1
    for _ in range(after.left):
        sent = await client.post("/agents/research-assistant/send/", {"content": "again"})
        assert sent.status_code == 200
        await settle()
    runs_before = await Run.objects.acount()
    refused = await client.post(
        "/compare/start/", {"agents": ["research-assistant", "planner"], "content": "more"}
    )
    assert refused.status_code == 422
    assert "Research Assistant:" in text(refused.content.decode())
    assert await Run.objects.acount() == runs_before
    assert await CompareSession.objects.acount() == 1


@pytest.mark.django_db(transaction=True)
async def test_rating_records_the_winner_and_the_others_and_a_new_choice_replaces_it(demo):
    client = await person()
    session = await compared(client, ["research-assistant", "planner", "support-desk"])
    response = await client.post(f"/compare/{session.pk}/rate/", {"winner": "1"})
    assert response.status_code == 200
    assert 'hx-swap-oob="true"' in response.content.decode()
    assert "You rated this one better" in response.content.decode()
    rating = await CompareRating.objects.select_related("winner").aget(session=session)
    others = sorted([e.slug async for e in rating.others.all()])
    assert rating.winner.slug == "planner" and rating.user_id == client.user.pk
    assert others == ["research-assistant", "support-desk"]
    await client.post(f"/compare/{session.pk}/rate/", {"winner": "2"})
    rating = await CompareRating.objects.select_related("winner").aget(session=session)
    assert rating.winner.slug == "support-desk"
    assert await CompareRating.objects.acount() == 1
    assert (await client.post(f"/compare/{session.pk}/rate/", {"winner": "7"})).status_code == 404


@pytest.mark.django_db(transaction=True)
async def test_the_same_form_sent_twice_makes_one_comparison(demo):
    client = await person()
    form = {"agents": ["planner", "cipher"], "content": "Once", "client_token": "tok-1"}
    first = await client.post("/compare/start/", form)
    second = await client.post("/compare/start/", form)
    await settle()
    assert first["Location"] == second["Location"]
    assert await CompareSession.objects.acount() == 1 and await Run.objects.acount() == 2


@pytest.mark.django_db(transaction=True)
async def test_files_are_offered_only_where_every_chosen_agent_takes_them(demo):
    client = await person()
    # PDFs and images (up to 10 MB) and PDFs and PNGs (up to 5 MB): PDFs and PNGs, up to 5 MB.
    both = (await client.get("/compare/?agents=document-reviewer&agents=support-desk")).content.decode()
    assert 'data-upload="offered"' in both
    assert 'accept="application/pdf,image/png"' in both and "up to 5.0\xa0MB" in both
    none_common = (await client.get("/compare/?agents=document-reviewer&agents=research-assistant")).content
    assert "no file type is taken by every one" in text(none_common.decode())
    sent = await client.post(
        "/compare/start/",
        {"agents": ["document-reviewer", "support-desk"], "content": "Look", "attachment": _pdf()},
    )
    assert sent.status_code == 302
    await settle()
    names = [
        a.name async for a in Attachment.objects.filter(message__conversation__compare_pane__isnull=False)
    ]
    assert names == ["a.pdf", "a.pdf"]  # one copy with each agent's message
    runs = await Run.objects.acount()
    one_refuses = (await client.get("/compare/?agents=document-reviewer&agents=planner")).content.decode()
    assert 'data-upload="off"' in one_refuses and "Launch Planner takes none" in text(one_refuses)
    refused = await client.post(
        "/compare/start/",
        {"agents": ["document-reviewer", "planner"], "content": "Look", "attachment": _pdf()},
    )
    assert refused.status_code == 422 and "Launch Planner takes none" in text(refused.content.decode())
    assert await Run.objects.acount() == runs
    # htmx redraws only the files' row as the choice changes.
    row = await client.get(
        "/compare/?agents=document-reviewer&agents=planner", headers={"HX-Request": "true"}
    )
    assert row.content.decode().lstrip().startswith('<div class="compare-files"')


def _pdf():
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("a.pdf", b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF", "application/pdf")


class _Upload:
    def __init__(self, decision, **details):
        self.hidden = decision == "hidden"
        self.disabled = decision == "disabled"
        self.details = details


def _plan(decision="shown", **details):
    return {"upload": _Upload(decision, **details)}


def test_the_shared_upload_takes_the_types_every_agent_takes_and_the_smallest_limit():
    first, second, third = (type("Agent", (), {"name": n})() for n in ("A", "B", "C"))
    offer = shared_upload(
        [
            (first, _plan(accept=["image/*", "application/pdf"], max_bytes=5_000_000)),
            (second, _plan(accept=["image/png", "text/plain"], max_bytes=1_000_000)),
            (third, _plan()),  # takes any type
        ]
    )
    assert offer.offered and offer.accept == ("image/png",) and offer.max_bytes == 1_000_000
    none_common = shared_upload(
        [(first, _plan(accept=["application/pdf"])), (second, _plan(accept=["image/*"]))]
    )
    assert not none_common.offered and "no file type" in none_common.why_not
    hidden = shared_upload([(first, _plan()), (second, _plan("hidden")), (third, _plan("hidden"))])
    assert not hidden.offered and hidden.why_not == "No files: B and C take none."
    disabled = shared_upload([(first, _plan()), (second, _plan("disabled"))])
    assert not disabled.offered and "permission" in disabled.why_not


@pytest.mark.django_db
def test_figures_come_from_the_event_log_arrival_times_and_the_reported_usage():
    user = make_user()
    endpoint = make_endpoint()
    conversation = Conversation.objects.create(user=user, endpoint=endpoint)
    run = Run.objects.create(
        conversation=conversation,
        status=Run.Status.COMPLETED,
        usage=stored([TokenUsage(model="m-1", input_tokens=10, output_tokens=4)]),
    )
    start = run.created_at
    events = [
        (RunStartedEvent(thread_id="t", run_id="r"), 0.5),
        (TextMessageChunkEvent(message_id="m", role="assistant", delta=""), 1.0),
        (TextMessageChunkEvent(message_id="m", delta="Hi"), 1.5),
        (RunFinishedEvent(thread_id="t", run_id="r"), 2.0),
    ]
    for seq, (event, after) in enumerate(events, start=1):
        kind, payload = event_record(event)
        RunEvent.objects.create(
            run=run,
            seq=seq,
            type=kind,
            payload=json.loads(payload),
            received_at=start + timedelta(seconds=after),
        )
    Run.objects.filter(pk=run.pk).update(finished_at=start + timedelta(seconds=2.25))
    run.refresh_from_db()
    figures = turn_figures([run], [Transcript()], endpoint.protocol)
    assert figures.first_word_seconds == 1.5 and figures.first_word == "1.5 s"
    assert figures.total_seconds == 2.25 and figures.finished
    assert [line.text for line in figures.usage] == ["10 tokens in · 4 out"]
    silent = Run.objects.create(conversation=conversation, status=Run.Status.RUNNING)
    figures = turn_figures([silent], [Transcript()], endpoint.protocol)
    assert figures.first_word == "no words yet" and figures.total == "still answering" and figures.usage == []


def test_a_signed_out_person_is_sent_to_sign_in(db):
    response = Client().get("/compare/")
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.django_db
def test_the_admin_shows_per_pair_of_agents_how_often_each_was_preferred():
    owner = make_user()
    a, b, c = (make_endpoint(name=name) for name in ("Alpha", "Beta", "Gamma"))

    def rate(winner, *others):
        session = CompareSession.objects.create(user=owner, content="Which?")
        rating = CompareRating.objects.create(session=session, user=owner, winner=winner)
        rating.others.set(others)

    rate(a, b)
    rate(a, b, c)
    rate(b, a)
    admin = Client()
    admin.force_login(make_user(superuser=True))
    page = admin.get("/admin/agents_ui/comparerating/")
    assert page.status_code == 200
    html = page.content.decode()
    pairs = text(html.split('id="preference-pairs"')[1].split("</table>")[0])
    assert "Alpha and Beta Alpha 2 (67%) · Beta 1 (33%) 3" in pairs
    assert "Alpha and Gamma Alpha 1 (100%) · Gamma 0 (0%) 1" in pairs
    assert "Beta and Gamma Beta 0 (0%) · Gamma 0 (0%)" not in pairs  # never decided against each other
    filtered = admin.get(f"/admin/agents_ui/comparerating/?winner__id__exact={b.pk}").content.decode()
    assert "Alpha and Beta Alpha 0 (0%) · Beta 1 (100%) 1" in text(filtered)

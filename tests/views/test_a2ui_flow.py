"""A2UI through the product (without a browser): the Booking Desk's surfaces drawn in the
conversation, its catalogue offered in the run's context, a button press sent back as
`forwardedProps.a2uiAction`, the agent's answer to it, and the same page after a reload."""

from __future__ import annotations

import json
import re
from datetime import date, timedelta

import pytest
from ag_ui.core import RunAgentInput
from asgiref.sync import sync_to_async
from django.core.cache import cache

from agents_ui.demo.agui.booking import BookingDesk
from agents_ui.demo.agui.running import run_agent
from agents_ui.models import Run
from agents_ui.runs.event_log import replay
from agents_ui.sdk import a2ui
from agents_ui.sdk.a2ui.catalog import MAX_TEXT
from tests.factories import make_endpoint, make_user
from tests.support.fault_agent import PAYLOADS
from tests.support.htmx import HtmxClient
from tests.support.inert import assert_pages_inert
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


def booking_agent(declare: bool = True):
    agent = BookingDesk()
    received: list[dict] = []

    async def handler(exchange):
        if exchange.request.method == "GET":
            declaration = agent.capabilities("https://example.org/booking").model_dump(
                by_alias=True, exclude_none=True
            )
            if not declare:
                declaration.pop("custom")
            exchange.respond(200, declaration)
            return
        payload = exchange.request.json()
        received.append(payload)
        exchange.start_sse()
        async for event in run_agent(agent, RunAgentInput.model_validate(payload)):
            await exchange.send(f"data: {event.model_dump_json(by_alias=True, exclude_none=True)}\n\n")

    return handler, received


async def browse(fake_server, declare: bool = True):
    handler, received = booking_agent(declare)
    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="booking-desk", base_url=f"{server.url}/agent")
    client = HtmxClient()
    client.user = await sync_to_async(make_user)()
    await client.aforce_login(client.user)
    client.received = received
    return client


async def latest() -> Run:
    return await Run.objects.select_related("conversation__endpoint").order_by("-created_at").afirst()


def surface_of(run: Run) -> tuple[str, a2ui.Surface]:
    activities = [a for a in replay(run).activities.values() if a.activity_type == a2ui.ACTIVITY_TYPE]
    record = activities[-1]
    return record.message_id, a2ui.read_activity(record.content).surfaces[0]


async def test_the_booking_flow_from_form_to_confirmation_survives_a_reload(fake_server):
    client = await browse(fake_server)
    response = await client.post("/agents/booking-desk/send/", {"content": "hello"})
    assert response.status_code == 200
    await settle()
    run = await latest()
    assert run.status == Run.Status.COMPLETED
    # The agent declared A2UI: the run told it which catalogue this product renders.
    [context] = [
        c for c in client.received[-1]["context"] if c["description"] == a2ui.SCHEMA_CONTEXT_DESCRIPTION
    ]
    assert json.loads(context["value"])["catalogId"] == a2ui.BASIC_CATALOG_ID
    assert set(json.loads(context["value"])["components"]) == set(a2ui.COMPONENTS)

    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    for kind in (
        "Card",
        "Column",
        "Text",
        "DateTimeInput",
        "ChoicePicker",
        "Slider",
        "CheckBox",
        "TextField",
    ):
        assert f'data-a2ui="{kind}"' in page, kind
    assert 'name="a2ui:/booking/date"' in page and 'type="date"' in page
    activity_id, surface = await sync_to_async(surface_of)(run)

    # Too many people for the room: the agent brings the form back with a warning.
    day = (date.today() + timedelta(days=3)).isoformat()
    form = {
        "activity": activity_id,
        "surface": surface.id,
        "a2ui-action": "book|/",
        "a2ui:/booking/date": day,
        "a2ui:/booking/room": "focus",
        "a2ui:/booking/guests": "6",
        "a2ui:/booking/notes": "Tea, please",
        "a2ui:/somewhere/else": "ignored",
    }
    response = await client.post(f"/runs/{run.pk}/a2ui/", form)
    body = response.content.decode()
    assert response.status_code == 200
    assert "Pressed “Check and book”" in body and "data-a2ui-sent" in body
    # What was sent, in words: a list joined, a flag as yes or no.
    assert "<dd>focus</dd>" in body and "<dd>no</dd>" in body and "<dd>6</dd>" in body
    await settle()
    action = client.received[-1]["forwardedProps"]["a2uiAction"]["userAction"]
    assert action["name"] == "book_room" and action["surfaceId"] == "booking"
    assert action["sourceComponentId"] == "book"
    assert action["context"] == {
        "date": day,
        "room": ["focus"],
        "guests": 6,
        "projector": False,
        "notes": "Tea, please",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT[\d:.]+Z", action["timestamp"])
    # The surface asked for its data model (sendDataModel): it goes with the action.
    model = client.received[-1]["forwardedProps"]["a2uiClientDataModel"]["surfaces"]["booking"]
    assert model["booking"]["guests"] == 6 and "somewhere" not in model
    second = await latest()
    assert second.status == Run.Status.COMPLETED
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "seats 4, not 6" in page

    # A larger room: booked, and the confirmation card's status moves on with a delta.
    activity_id, surface = await sync_to_async(surface_of)(second)
    response = await client.post(
        f"/runs/{second.pk}/a2ui/", {**form, "activity": activity_id, "a2ui:/booking/room": "garden"}
    )
    assert response.status_code == 200
    await settle()
    third = await latest()
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "Booked: Garden room" in page
    assert "Status: confirmed" in page and 'data-a2ui="Tabs"' in page and 'data-a2ui="List"' in page
    assert page.count("data-a2ui-sent") == 2  # both forms say what was sent, after the reload
    assert 'value="6"' in page  # the person's values stay on the form they sent
    assert third.request["a2ui_action"]["userAction"]["context"]["room"] == ["garden"]

    # Cancelled: the agent updates the card of the earlier turn without creating it again.
    activity_id, surface = await sync_to_async(surface_of)(third)
    response = await client.post(
        f"/runs/{third.pk}/a2ui/", {"activity": activity_id, "surface": surface.id, "a2ui-action": "cancel|/"}
    )
    assert response.status_code == 200
    await settle()
    assert client.received[-1]["forwardedProps"]["a2uiAction"]["userAction"]["context"] == {"room": "garden"}
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert "Status: cancelled" in page and "Status: confirmed" in page  # the earlier card stays as it was
    assert page.count("Garden room, ") == 2


async def test_a_failed_check_is_said_and_nothing_is_sent(fake_server):
    client = await browse(fake_server)
    await client.post("/agents/booking-desk/send/", {"content": "hello"})
    await settle()
    run = await latest()
    activity_id, surface = await sync_to_async(surface_of)(run)
    form = {"activity": activity_id, "surface": surface.id, "a2ui-action": "book|/", "a2ui:/booking/date": ""}
    body = (await client.post(f"/runs/{run.pk}/a2ui/", form)).content.decode()
    assert "Pick a day." in body and "Pick a room." in body and "hx-swap-oob" in body
    assert await Run.objects.acount() == 1
    # An action key the surface does not offer is refused the same way.
    body = (await client.post(f"/runs/{run.pk}/a2ui/", {**form, "a2ui-action": "root|/"})).content.decode()
    assert "does not send anything" in body and await Run.objects.acount() == 1


async def test_an_agent_that_does_not_declare_a2ui_gets_no_catalogue_until_it_shows_it(fake_server):
    client = await browse(fake_server, declare=False)
    await client.post("/agents/booking-desk/send/", {"content": "hello"})
    await settle()
    assert not any(
        c["description"] == a2ui.SCHEMA_CONTEXT_DESCRIPTION for c in client.received[-1]["context"]
    )
    run = await latest()
    # What arrives is drawn all the same (the run showed A2UI), and the next run is offered the catalogue.
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert 'data-a2ui="DateTimeInput"' in page
    await client.post(
        "/agents/booking-desk/send/", {"content": "again", "conversation": str(run.conversation.pk)}
    )
    await settle()
    assert any(c["description"] == a2ui.SCHEMA_CONTEXT_DESCRIPTION for c in client.received[-1]["context"])


async def test_an_action_waits_for_the_run_that_is_going(fake_server):
    client = await browse(fake_server)
    await client.post("/agents/booking-desk/send/", {"content": "hello"})
    await settle()
    run = await latest()
    activity_id, surface = await sync_to_async(surface_of)(run)
    await Run.objects.acreate(conversation=run.conversation, request={}, status=Run.Status.RUNNING)
    form = {
        "activity": activity_id,
        "surface": surface.id,
        "a2ui-action": "book|/",
        "a2ui:/booking/date": "x",
    }
    form["a2ui:/booking/room"] = "focus"
    body = (await client.post(f"/runs/{run.pk}/a2ui/", form)).content.decode()
    assert "still answering" in body and await Run.objects.acount() == 2


async def test_only_a2ui_surfaces_of_the_persons_own_runs_take_actions(fake_server):
    client = await browse(fake_server)
    await client.post("/agents/booking-desk/send/", {"content": "hello"})
    await settle()
    run = await latest()
    activity_id, surface = await sync_to_async(surface_of)(run)
    form = {"activity": activity_id, "surface": surface.id, "a2ui-action": "book|/"}
    assert (await client.post(f"/runs/{run.pk}/a2ui/", {**form, "activity": "nope"})).status_code == 404
    assert (await client.post(f"/runs/{run.pk}/a2ui/", {**form, "surface": "nope"})).status_code == 404
    other = HtmxClient()
    await other.aforce_login(await sync_to_async(make_user)())
    assert (await other.post(f"/runs/{run.pk}/a2ui/", form)).status_code == 404


async def test_markup_a_person_types_into_a_form_is_text_where_it_is_shown_back(fake_server):
    """The notes field of the booking form, filled with every payload of the catalogue: the answer
    saying what was sent, the conversation after a reload and the agent's next surface hold none
    of it as markup."""
    client = await browse(fake_server)
    await client.post("/agents/booking-desk/send/", {"content": "hello"})
    await settle()
    run = await latest()
    activity_id, surface = await sync_to_async(surface_of)(run)
    notes = " ".join(PAYLOADS)[:MAX_TEXT]
    day = (date.today() + timedelta(days=3)).isoformat()
    form = {
        "activity": activity_id, "surface": surface.id, "a2ui-action": "book|/",
        "a2ui:/booking/date": day, "a2ui:/booking/room": "garden", "a2ui:/booking/guests": "2",
        "a2ui:/booking/notes": notes,
    }  # fmt: skip
    sent = (await client.post(f"/runs/{run.pk}/a2ui/", form)).content.decode()
    await settle()
    assert client.received[-1]["forwardedProps"]["a2uiAction"]["userAction"]["context"]["notes"] == notes
    page = (await client.get(run.conversation.get_absolute_url())).content.decode()
    assert_pages_inert({"what was sent": sent, "conversation": page})
    assert "&lt;script&gt;window.__pwned" in page

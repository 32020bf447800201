"""A2UI over A2A (A2UI's A2A extension, v0.9): the card's extension read into the generative-ui
control, the extension and the catalogue advertised on each message, A2UI DataParts folded into the
transcript's surfaces, and a person's action sent back as one A2UI DataPart in the same task."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from google.protobuf.json_format import MessageToDict, ParseDict

from agents_ui.capabilities import read_card
from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.activities import prior_surfaces
from agents_ui.endpoints.discovery import discover_one
from agents_ui.endpoints.plans import plan_inputs
from agents_ui.models import AgentEndpoint, Conversation, Run
from agents_ui.runs.a2a import a2ui_part, outgoing_message
from agents_ui.runs.event_log import replay
from agents_ui.sdk import a2ui
from agents_ui.sdk.a2a.client import A2AAgent, pb
from agents_ui.sdk.a2a.fold import is_a2ui
from agents_ui.sdk.folding import fold
from tests.a2a.test_a2a_runs import finish, turn
from tests.support.waiting import eventually

CATALOG = a2ui.BASIC_CATALOG_ID


def card(extensions: list) -> dict:
    return {
        "name": "Hotels",
        "description": "Finds hotels",
        "version": "1",
        "supportedInterfaces": [{"url": "http://agent/rpc", "protocolBinding": "JSONRPC"}],
        "capabilities": {"streaming": True, "extensions": extensions},
    }


A2UI_EXTENSION = {
    "uri": "https://a2ui.org/a2a-extension/a2ui/v0.9",
    "required": False,
    "params": {"supportedCatalogIds": [CATALOG]},
}


def test_the_cards_a2ui_extension_enables_generative_ui_with_its_field_as_provenance():
    profile = read_card(card([{"uri": "https://example.com/other"}, A2UI_EXTENSION]))
    fact = profile.generative_ui.a2ui
    assert fact.value is True and fact.origin.path == "capabilities.extensions[1]"
    assert profile.generative_ui.catalogs.value == (CATALOG,)
    plan = decide(profile=profile)
    control = plan["generative-ui"]
    assert control.shown and control.details.advertise and control.details.catalogs == (CATALOG,)
    said = " | ".join(reason.text for reason in control.reasons)
    assert "capabilities.extensions[1] declares A2UI v0.9" in said
    shown = [p.note for p in profile.extensions if p.path == "capabilities.extensions[1]"]
    assert shown and "its surfaces are drawn here" in shown[0]


@pytest.mark.parametrize(
    "extensions",
    [[], [{"uri": "https://a2ui.org/a2a-extension/a2ui/v0.8"}], [{"uri": "https://example.com/other"}]],
)
def test_a_card_without_the_v09_extension_does_not_offer_it(extensions):
    plan = decide(profile=read_card(card(extensions)))
    assert not plan["generative-ui"].details.advertise


def surface_part(messages: list, key: str = "metadata") -> dict:
    part = {"data": messages}
    if key == "metadata":
        part["metadata"] = {"mimeType": "application/json+a2ui"}
    else:
        part["mediaType"] = "application/json+a2ui"
    return part


CREATE = [
    {"version": "v0.9", "createSurface": {"surfaceId": "s", "catalogId": CATALOG}},
    {
        "version": "v0.9",
        "updateComponents": {
            "surfaceId": "s",
            "components": [{"id": "root", "component": "Text", "text": "Hi"}],
        },
    },
]


def events(*payloads: dict) -> list[pb.StreamResponse]:
    return [ParseDict(p, pb.StreamResponse()) for p in payloads]


def folded(stream: list[pb.StreamResponse]):
    return fold(stream)


def test_a2ui_dataparts_in_messages_status_updates_and_artifacts_become_surfaces():
    update = {
        "version": "v0.9",
        "updateComponents": {
            "surfaceId": "s",
            "components": [{"id": "root", "component": "Text", "text": "Bye"}],
        },
    }
    transcript = folded(
        events(
            {
                "statusUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "status": {
                        "state": "TASK_STATE_WORKING",
                        "message": {"messageId": "m1", "role": "ROLE_AGENT", "parts": [surface_part(CREATE)]},
                    },
                }
            },
            {
                "artifactUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "artifact": {"artifactId": "ui", "parts": [surface_part(CREATE[:1], "mediaType")]},
                }
            },
            {
                "artifactUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "append": True,
                    "artifact": {"artifactId": "ui", "parts": [surface_part([update])]},
                }
            },
            {
                "statusUpdate": {
                    "taskId": "t",
                    "contextId": "c",
                    "status": {
                        "state": "TASK_STATE_INPUT_REQUIRED",
                        "message": {
                            "messageId": "m2",
                            "role": "ROLE_AGENT",
                            "parts": [{"text": "Choose"}, surface_part([update])],
                        },
                    },
                }
            },
        )
    )
    records = transcript.activities
    assert set(records) == {"a2ui-m1", "a2ui-ui", "a2ui-m2"}
    assert {r.activity_type for r in records.values()} == {a2ui.ACTIVITY_TYPE}
    assert transcript.observed.a2ui
    # The appended chunk goes on from the artifact's first: one surface, updated.
    [surface] = a2ui.read_activity(records["a2ui-ui"].content).surfaces
    assert surface.components["root"]["text"] == "Bye"
    # The artifact is its surface only: not listed again as a data artifact, nor with the answer.
    assert "ui" not in transcript.artifacts and "m2" not in transcript.artifacts
    assert [m.text for m in transcript.messages] == ["Choose"]
    # A later message updates the surface the first one created (as on the AG-UI path).
    before = a2ui.thread_surfaces([records["a2ui-m1"].content], {})
    [after] = a2ui.read_activity(records["a2ui-m2"].content, before).surfaces
    assert after.id == "s" and after.components["root"]["text"] == "Bye"


def test_a_huge_surface_is_bounded_as_on_the_agui_path():
    many = [CREATE[0]] + [
        {"version": "v0.9", "updateDataModel": {"surfaceId": "s", "path": f"/k{n}", "value": "x" * 4000}}
        for n in range(600)
    ]
    transcript = folded(
        events({"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [surface_part(many)]}})
    )
    record = transcript.activities["a2ui-m"]
    assert transcript.errors  # past the activity bound: the last good content stays, with a note
    assert record.content is None or len(str(record.content)) < 2_000_000


def test_a_data_part_of_another_type_stays_a_data_part():
    part = ParseDict({"data": {"a": 1}, "metadata": {"mimeType": "application/json"}}, pb.Part())
    assert not is_a2ui(part)
    assert is_a2ui(ParseDict(surface_part(CREATE), pb.Part()))


def test_the_extension_is_activated_by_header_for_the_request():
    agent = A2AAgent("http://agent", client=None, headers={"Authorization": "Bearer k"})  # type: ignore[arg-type]
    params = agent._context({"Authorization": "Bearer k"}, [a2ui.EXTENSION_URI]).service_parameters
    assert params["A2A-Extensions"] == a2ui.EXTENSION_URI
    assert params["X-A2A-Extensions"] == a2ui.EXTENSION_URI
    assert params["Authorization"] == "Bearer k"
    assert "A2A-Extensions" not in (agent._context({}).service_parameters or {})


def test_an_action_is_one_a2ui_datapart():
    action = {"name": "go", "surfaceId": "s", "sourceComponentId": "b", "timestamp": "t", "context": {"n": 2}}
    part = MessageToDict(a2ui_part(a2ui.action_messages(action)))
    assert part == {
        "data": [{"version": "v0.9", "action": {**action, "context": {"n": 2.0}}}],
        "metadata": {"mimeType": "application/json+a2ui"},
    }


@pytest.mark.django_db(transaction=True)
async def test_the_message_advertises_the_extension_and_the_catalogue_only_when_offered():
    from tests.factories import make_endpoint

    endpoint = await sync_to_async(make_endpoint)(protocol=AgentEndpoint.Protocol.A2A, slug="h", name="H")
    run = await turn(endpoint, "hotels in Porto")
    offered = MessageToDict(await outgoing_message(run, "", offer_a2ui=True))
    # Both versions this product renders: v0.9's extension and v1.0's, each with its catalogue.
    assert offered["extensions"] == [
        "https://a2ui.org/a2a-extension/a2ui/v0.9",
        "https://a2ui.org/a2a-extension/a2ui/v1.0",
    ]
    assert offered["metadata"]["a2uiClientCapabilities"] == {
        "v0.9": {"supportedCatalogIds": [CATALOG]},
        "v1.0": {"supportedCatalogIds": ["https://a2ui.org/specification/v1_0/catalogs/basic/catalog.json"]},
    }
    plain = MessageToDict(await outgoing_message(run, ""))
    assert "extensions" not in plain and "metadata" not in plain


@pytest.mark.django_db(transaction=True)
async def test_the_demo_trip_planner_offers_hotels_and_the_confirm_goes_back_in_the_same_task(
    live_url, client
):
    from agents_ui.demo.registry import register_demo_agents

    endpoints = await sync_to_async(register_demo_agents)(live_url)
    [endpoint] = [e for e in endpoints if e.protocol == AgentEndpoint.Protocol.A2A]
    discovery = await discover_one(endpoint, refresh=True)
    plan = (await plan_inputs(endpoint, UserAbilities(), discovery=discovery)).plan()
    assert plan["generative-ui"].details.advertise
    first = await finish(await turn(endpoint, "Find a hotel in Porto"), plan)
    asked = await sync_to_async(replay)(first)
    assert asked.task.state == "input-required", first.error
    [record] = asked.activities.values()
    [surface] = a2ui.read_activity(record.content).surfaces
    [key] = a2ui.render(surface).actions
    user = await sync_to_async(lambda: first.conversation.user)()
    await sync_to_async(client.force_login)(user)
    form = {
        "activity": record.message_id,
        "surface": "hotels",
        "a2ui-action": key,
        "a2ui:/stay/hotel": "tower",
    }
    response = await sync_to_async(client.post)(f"/runs/{first.pk}/a2ui/", form)
    assert response.status_code == 302
    second = await Run.objects.exclude(pk=first.pk).filter(conversation_id=first.conversation_id).aget()

    async def second_ended() -> Run | None:
        run = await Run.objects.aget(pk=second.pk)
        return run if run.status not in (Run.Status.PENDING, Run.Status.RUNNING) else None

    second = await eventually(second_ended, what="the second turn's run to end")
    done = await sync_to_async(replay)(second)
    assert done.task.task_id == asked.task.task_id and done.task.state == "completed", second.error
    assert [m.text for m in done.messages] == ["Tower Suites in Porto is booked for you."]
    # The booked surface updates the one the first turn made.
    conversation = await Conversation.objects.aget(pk=first.conversation_id)
    assert conversation.remote_id == asked.task.context_id
    [update] = done.activities.values()
    [booked] = a2ui.read_activity(update.content, prior_surfaces([asked])).surfaces
    assert booked.components["done"]["text"] == "Booked: Tower Suites, Porto."


@pytest.mark.django_db(transaction=True)
async def test_the_replies_owed_for_v1_surfaces_go_with_the_next_message_as_an_a2ui_part():
    from tests.factories import make_endpoint

    endpoint = await sync_to_async(make_endpoint)(protocol=AgentEndpoint.Protocol.A2A, slug="r", name="R")
    run = await turn(endpoint, "and now?")
    reply = a2ui.catalog.function_error("call-1", "Function 'openUrl' cannot be called by agent.")
    sent = MessageToDict(await outgoing_message(run, "", replies=[reply]))
    text, data = sent["parts"]
    assert text == {"text": "and now?"}
    assert data == {"data": [reply], "metadata": {"mimeType": "application/json+a2ui"}}
    assert "https://a2ui.org/a2a-extension/a2ui/v1.0" in sent["extensions"]
    # A v1.0 surface's action goes in v1.0's envelope.
    action = {"name": "go", "surfaceId": "s", "sourceComponentId": "b", "timestamp": "t", "context": {}}
    assert MessageToDict(a2ui_part(a2ui.action_messages(action, "v1.0")))["data"][0]["version"] == "v1.0"

"""Trip Planner: a deterministic A2A agent with skills, file input, streaming, artifacts, a question
it asks before it plans, a step that needs authorization, and words that make it fail or decline.

- "plan ..." without a destination: the task asks where to (input-required); the answer continues it;
- "plan a weekend in Lisbon": streams an itinerary (text/markdown artifact) and a budget (data);
- a text, CSV or JSON file attached: a packing list (a CSV file artifact) and what was read;
- "book ...": the task needs authorization (auth-required);
- "fail": the task fails with a reason; "reject": it is declined; "long": a slow answer to stop;
- "find a hotel in Porto", from a client that activates A2UI's A2A extension: a surface to choose among
  three hotels with a confirm button (input-required); the confirm action books the stay. Without
  the extension, the same question is answered in words.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re

from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import a2a_pb2 as pb
from google.protobuf.json_format import MessageToDict
from google.protobuf.struct_pb2 import Struct

SLUG = "trip-planner"
FILE_MODES = ["text/plain", "text/csv", "application/json"]
# What the packing-list skill reads from a file (plain text is what the composer writes).
LIST_MODES = ["text/csv", "application/json"]
# Streamed chunks: slow enough to see, quick enough for a demo.
CHUNK_SECONDS = 0.05
LONG_CHUNK_SECONDS = 0.3
# A2UI's A2A extension, v0.9 (github.com/google/A2UI, specification/v0_9/docs).
A2UI_EXTENSION = "https://a2ui.org/a2a-extension/a2ui/v0.9"
A2UI_MIME_TYPE = "application/json+a2ui"
BASIC_CATALOG = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
HOTELS = {
    "harbour": ("Harbour House", 120),
    "garden": ("Garden Inn", 95),
    "tower": ("Tower Suites", 180),
}
_DESTINATION = re.compile(r"\b(?:in|to)\s+([A-Z][\w-]+(?:\s+[A-Z][\w-]+)?)")


def card(rpc_url: str, docs_url: str = "") -> pb.AgentCard:
    return pb.AgentCard(
        name="Trip Planner",
        description="Plans trips: asks where you want to go, streams an itinerary, reads your lists.",
        version="1.0.0",
        provider=pb.AgentProvider(organization="Agents UI demo", url="https://example.com"),
        documentation_url=docs_url,
        supported_interfaces=[
            pb.AgentInterface(url=rpc_url, protocol_binding="JSONRPC", protocol_version="1.0")
        ],
        capabilities=pb.AgentCapabilities(
            streaming=True,
            push_notifications=False,
            extensions=[
                pb.AgentExtension(
                    uri=A2UI_EXTENSION,
                    description="Hotel choices as A2UI surfaces",
                    required=False,
                    params=_params({"supportedCatalogIds": [BASIC_CATALOG]}),
                ),
                pb.AgentExtension(
                    uri="https://example.com/a2a/ext/trip-budget/v1",
                    description="Budgets arrive as a data artifact",
                    required=False,
                ),
            ],
        ),
        default_input_modes=["text/plain", *FILE_MODES[1:]],
        default_output_modes=["text/markdown", "application/json", "text/csv"],
        skills=[
            pb.AgentSkill(
                id="plan-trip",
                name="Plan a trip",
                description=(
                    "An itinerary, day by day, with a budget. Asks for the destination if you do not say."
                ),
                tags=["travel", "itinerary"],
                examples=["Plan a weekend in Lisbon", "Plan a trip"],
                input_modes=["text/plain"],
                output_modes=["text/markdown", "application/json"],
            ),
            pb.AgentSkill(
                id="packing-list",
                name="Packing list from a file",
                description=("Reads a list you attach (CSV or JSON) and hands back a packing list as CSV."),
                tags=["files"],
                examples=["Make a packing list from my notes"],
                input_modes=["text/plain", *LIST_MODES],
                output_modes=["text/csv"],
            ),
            pb.AgentSkill(
                id="book-hotel",
                name="Book a hotel",
                description="Needs a travel-account token: the task asks for authorization.",
                tags=["booking"],
                examples=["Book a hotel in Porto"],
            ),
        ],
        security_schemes={
            "travel_account": pb.SecurityScheme(
                api_key_security_scheme=pb.APIKeySecurityScheme(
                    description="A travel-account token, needed to book",
                    location="header",
                    name="X-Travel-Token",
                )
            )
        },
    )


def _params(values: dict) -> Struct:
    params = Struct()
    params.update(values)
    return params


def _a2ui(messages: list[dict]) -> pb.Part:
    part = pb.Part()
    part.data.list_value.extend([{"version": "v0.9", **m} for m in messages])
    part.metadata.update({"mimeType": A2UI_MIME_TYPE})
    return part


def a2ui_action(message: pb.Message | None) -> dict | None:
    """The person's action on a surface (the client's A2UI DataPart), if the message carries one."""
    for part in message.parts if message is not None else ():
        if part.WhichOneof("content") == "data" and part.metadata.fields.get("mimeType"):
            if part.metadata["mimeType"] != A2UI_MIME_TYPE:
                continue
            for item in MessageToDict(part.data) or []:
                if isinstance(item, dict) and isinstance(item.get("action"), dict):
                    return item["action"]
    return None


def hotel_surface(place: str) -> pb.Part:
    options = [
        {"label": f"{name} · {price} EUR a night", "value": key} for key, (name, price) in HOTELS.items()
    ]
    components = [
        {"id": "root", "component": "Card", "child": "body"},
        {"id": "body", "component": "Column", "children": ["title", "hotel", "actions"]},
        {"id": "title", "component": "Text", "variant": "h3", "text": f"Where to stay in {place}"},
        {
            "id": "hotel",
            "component": "ChoicePicker",
            "label": "Hotel",
            "variant": "mutuallyExclusive",
            "options": options,
            "value": {"path": "/stay/hotel"},
        },
        {"id": "actions", "component": "Row", "children": ["confirm"], "justify": "end"},
        {
            "id": "confirm",
            "component": "Button",
            "variant": "primary",
            "child": "confirm-label",
            "action": {
                "event": {
                    "name": "confirm_hotel",
                    "context": {"hotel": {"path": "/stay/hotel"}, "place": place},
                }
            },
        },
        {"id": "confirm-label", "component": "Text", "text": "Confirm"},
    ]
    return _a2ui(
        [
            {"createSurface": {"surfaceId": "hotels", "catalogId": BASIC_CATALOG}},
            {"updateComponents": {"surfaceId": "hotels", "components": components}},
            {"updateDataModel": {"surfaceId": "hotels", "path": "/stay", "value": {"hotel": ["garden"]}}},
        ]
    )


def booked_surface(name: str, place: str) -> pb.Part:
    components = [
        {"id": "root", "component": "Card", "child": "done"},
        {"id": "done", "component": "Text", "text": f"Booked: {name}, {place}."},
    ]
    return _a2ui([{"updateComponents": {"surfaceId": "hotels", "components": components}}])


def _files(message: pb.Message | None) -> list[pb.Part]:
    if message is None:
        return []
    return [p for p in message.parts if p.WhichOneof("content") == "raw"]


def itinerary(place: str) -> list[str]:
    return [
        f"# {place} in two days\n\n",
        "## Day 1\n\n",
        f"- Morning: a walk through the old town of {place}.\n",
        "- Lunch: the market hall.\n",
        "- Evening: a viewpoint at sunset.\n\n",
        "## Day 2\n\n",
        "- Morning: the museum quarter.\n",
        "- Afternoon: the river front, by tram.\n\n",
        "| Item | Cost |\n|---|---|\n| Stay | 180 EUR |\n| Food | 90 EUR |\n",
    ]


class TripPlanner(AgentExecutor):
    def __init__(self) -> None:
        self._stopped: set[str] = set()
        # Tasks waiting for a destination.
        self._asked: set[str] = set()

    def reset(self) -> None:
        self._stopped.clear()
        self._asked.clear()

    async def _hotels(self, context: RequestContext, updater: TaskUpdater, said: str) -> None:
        match = _DESTINATION.search(said)
        place = match.group(1).strip().title() if match else "Lisbon"
        if A2UI_EXTENSION not in context.requested_extensions:
            names = ", ".join(name for name, _ in HOTELS.values())
            await updater.complete(updater.new_agent_message([pb.Part(text=f"In {place}: {names}.")]))
            return
        await updater.requires_input(
            updater.new_agent_message(
                [pb.Part(text=f"Three hotels in {place}: choose one."), hotel_surface(place)]
            )
        )

    async def _confirm(self, updater: TaskUpdater, action: dict) -> None:
        context = action.get("context") if isinstance(action.get("context"), dict) else {}
        chosen = context.get("hotel")
        key = chosen[0] if isinstance(chosen, list) and chosen else chosen
        name = HOTELS.get(key if isinstance(key, str) else "", ("no hotel", 0))[0]
        place = str(context.get("place") or "Lisbon")[:60]
        await updater.complete(
            updater.new_agent_message(
                [pb.Part(text=f"{name} in {place} is booked for you."), booked_surface(name, place)]
            )
        )

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        self._stopped.add(task_id)
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        await updater.cancel(updater.new_agent_message([pb.Part(text="Stopped at your request.")]))

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:  # a new task: the SDK wants the Task itself first
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, pb.TASK_STATE_SUBMITTED, history=history)
            )
        said = context.get_user_input().strip()
        words = said.lower()
        action = a2ui_action(context.message)
        if action is not None and action.get("name") == "confirm_hotel":
            await self._confirm(updater, action)
            return
        await updater.start_work(updater.new_agent_message([pb.Part(text="Looking into it…")]))
        if "fail" in words:
            await updater.failed(
                updater.new_agent_message(
                    [pb.Part(text="The weather service did not answer (a demo failure).")]
                )
            )
            return
        if "reject" in words:
            await updater.reject(updater.new_agent_message([pb.Part(text="This planner only plans trips.")]))
            return
        if "hotel" in words and "book" not in words:
            await self._hotels(context, updater, said)
            return
        if "book" in words:
            await updater.requires_auth(
                updater.new_agent_message(
                    [pb.Part(text="Booking needs a travel-account token (X-Travel-Token): an admin sets it.")]
                )
            )
            return
        files = _files(context.message)
        if files:
            await self._packing_list(updater, files)
            return
        match = _DESTINATION.search(said)
        if match is None and task_id in self._asked and said:
            match = re.match(r"\s*([\w-]+(?:\s+[\w-]+)?)", said)
        if match is None:
            self._asked.add(task_id)
            await updater.requires_input(
                updater.new_agent_message([pb.Part(text="Where would you like to go, and for how long?")])
            )
            return
        self._asked.discard(task_id)
        place = match.group(1).strip().title()
        chunks = itinerary(place)
        pause = CHUNK_SECONDS
        if "long" in words:
            chunks = [f"- Stop {n}: somewhere in {place}.\n" for n in range(1, 41)]
            pause = LONG_CHUNK_SECONDS
        for index, chunk in enumerate(chunks):
            if task_id in self._stopped:
                return
            await updater.add_artifact(
                [pb.Part(text=chunk, media_type="text/markdown")],
                artifact_id="itinerary",
                name="Itinerary",
                append=index > 0,
                last_chunk=index == len(chunks) - 1,
            )
            await asyncio.sleep(pause)
        data = pb.Part(media_type="application/json")
        data.data.struct_value.update({"destination": place, "days": 2, "budget": {"stay": 180, "food": 90}})
        await updater.add_artifact([data], artifact_id="budget", name="Budget", last_chunk=True)
        await updater.complete(updater.new_agent_message([pb.Part(text=f"Your {place} itinerary is ready.")]))

    async def _packing_list(self, updater: TaskUpdater, files: list[pb.Part]) -> None:
        lines: list[str] = []
        for part in files:
            text = bytes(part.raw).decode("utf-8", "replace")
            lines += [line.strip(" -*\t") for line in text.splitlines() if line.strip()]
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow(["item", "packed"])
        for line in lines[:200]:
            writer.writerow([line[:100], "no"])
        names = ", ".join(part.filename or "a file" for part in files)
        await updater.add_artifact(
            [pb.Part(raw=out.getvalue().encode(), filename="packing-list.csv", media_type="text/csv")],
            artifact_id="packing-list",
            name="Packing list",
            last_chunk=True,
        )
        await updater.complete(
            updater.new_agent_message([pb.Part(text=f"Read {len(lines)} items from {names}.")])
        )

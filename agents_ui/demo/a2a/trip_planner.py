"""Trip Planner: a deterministic A2A agent with skills, file input, streaming, artifacts, a question
it asks before it plans, a step that needs authorization, and words that make it fail or decline.

- "plan ..." without a destination: the task asks where to (input-required); the answer continues it;
- "plan a weekend in Lisbon": streams an itinerary (text/markdown artifact) and a budget (data);
- a text, CSV or JSON file attached: a packing list (a CSV file artifact) and what was read;
- "book ...": the task needs authorization (auth-required);
- "fail": the task fails with a reason; "reject": it is declined; "long": a slow answer to stop.
"""

from __future__ import annotations

import asyncio
import csv
import io
import re

from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types import a2a_pb2 as pb

SLUG = "trip-planner"
FILE_MODES = ["text/plain", "text/csv", "application/json"]
# What the packing-list skill reads from a file (plain text is what the composer writes).
LIST_MODES = ["text/csv", "application/json"]
# Streamed chunks: slow enough to see, quick enough for a demo.
CHUNK_SECONDS = 0.05
LONG_CHUNK_SECONDS = 0.3
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
                    uri="https://example.com/a2a/ext/trip-budget/v1",
                    description="Budgets arrive as a data artifact",
                    required=False,
                )
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

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id = context.task_id or ""
        self._stopped.add(task_id)
        updater = TaskUpdater(event_queue, task_id, context.context_id or "")
        await updater.cancel(updater.new_agent_message([pb.Part(text="Stopped at your request.")]))

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:  # a new task: the SDK wants the Task itself first
            await event_queue.enqueue_event(
                pb.Task(
                    id=task_id,
                    context_id=context_id,
                    status=pb.TaskStatus(state=pb.TASK_STATE_SUBMITTED),
                    history=[context.message] if context.message else [],
                )
            )
        said = context.get_user_input().strip()
        words = said.lower()
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

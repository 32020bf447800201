"""A2A (docs/PROTOCOLS.md 3): the agent keeps the conversation under its context id; a run sends one
message and follows its task (runs/a2a.py); an action on an A2UI surface goes as a message of one A2UI
DataPart, as A2UI's A2A extension says; a file the agent sent inline in an artifact is handed over."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from agents_ui.models import Run
from agents_ui.runs.a2a import a2a_events
from agents_ui.runs.protocols.base import (
    ArtifactFile,
    NotFound,
    ProtocolAdapter,
    RunContext,
    action_run,
)
from agents_ui.sdk.transcript import Transcript


def file_id(artifact_id: str, index: int) -> str:
    """The id a file part of an artifact is downloaded by: its artifact's id, then the part's place
    in it (`<artifact id>/<index>`; an artifact id may hold a slash, the index is after the last)."""
    return f"{artifact_id}/{index}"


class A2AAdapter(ProtocolAdapter):
    def events(self, agent: Any, run: Run, context: RunContext) -> AsyncIterator[Any]:
        # A task still working when the run is stopped is canceled as the stream closes.
        earlier = [transcript for _, transcript in context.earlier]
        return a2a_events(agent, run, earlier, stream=context.stream, offer_a2ui=context.offer_a2ui)

    def act(self, run: Run, action: dict[str, Any]) -> Run:
        # Sent by runs/a2a.py as one A2UI DataPart in the same context and task.
        return action_run(run, action)

    async def artifact(self, run: Run, transcript: Transcript, artifact_id: str) -> ArtifactFile:
        """A file the agent sent inline in one of this run's artifacts (`file_id`)."""
        owner, _, place = artifact_id.rpartition("/")
        artifact = transcript.artifacts.get(owner) if place.isdigit() else None
        index = int(place) if place.isdigit() else -1
        inline = artifact is not None and not artifact.remote and 0 <= index < len(artifact.parts)
        if not inline or artifact.parts[index].raw is None:
            raise NotFound("No such file.")
        part = artifact.parts[index]
        name = part.filename or f"{artifact.name or artifact.id}-{index + 1}"
        # The agent's type is only a label: the browser is told to save it, never to render it.
        return ArtifactFile(bytes(part.raw), name, "application/octet-stream")


ADAPTER = A2AAdapter()

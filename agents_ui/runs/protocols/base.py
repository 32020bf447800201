"""The interface every protocol adapter has, and what its methods answer (agents_ui.runs.protocols)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agents_ui.models import Run
from agents_ui.runs.a2a import ACTION_KEY
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.turns import next_run

if TYPE_CHECKING:
    from agents_ui.sdk.transcript import Transcript


class NotFound(Exception):
    """What was asked for does not exist for this run (or its agent's protocol has no such thing)."""


class Refused(Exception):
    """Why the agent cannot be asked this now, in the person's words. `about`: the request (an
    approval's id) the refusal concerns, "" for the whole form."""

    def __init__(self, text: str, about: str = "") -> None:
        super().__init__(text)
        self.text, self.about = text, about


class Unavailable(Exception):
    """The agent did not hand over what was asked (its error, in the person's words)."""


@dataclass(frozen=True)
class Decided:
    """Decisions taken: `run` is the new run that takes them to the agent, None where the agent's
    own stream goes on (then `about` is the request decided, for the note that says so)."""

    run: Run | None
    about: str = ""


@dataclass(frozen=True)
class ArtifactFile:
    """An artifact's bytes, to hand over as a download (never shown inline: the content is the agent's)."""

    data: bytes
    name: str
    content_type: str


@dataclass(frozen=True)
class RunContext:
    """What starting a run needs besides the agent's client: the thread before it, and how to read it."""

    # The thread's runs before this one, each with its transcript folded with the ones before it.
    earlier: Sequence[tuple[Run, Transcript]]
    stream: bool = True
    resume: bool = False
    send_state: bool = True
    offer_a2ui: bool = False
    # Receives what the protocol's consumer rules stripped or translated (AG-UI), for staff.
    warnings: list[str] = field(default_factory=list)


class ProtocolAdapter:
    """The interface; a protocol overrides what it has. The defaults say it has no such thing."""

    def events(self, agent: Any, run: Run, context: RunContext) -> AsyncIterator[Any]:
        """The run's events as they come (an event, or an (event, raw line) pair)."""
        raise NotImplementedError

    async def decide(
        self, run: Run, transcript: Transcript, shown: Mapping[str, Any],
        decided: Container[str], posted: Mapping[str, str], user: Any,
    ) -> Decided:  # fmt: skip
        """Apply the decisions of the form (`decision-<id>` = approve | reject | edit, and
        `edited-<id>`: JSON) on the requests `shown` (id -> the approval card the page shows of it,
        display.cards.ApprovalCard: tool, args, edit schema, editable); `decided`: ids already decided."""
        raise NotFound("No such approval.")

    def answer_tools(self, run: Run, answers: Sequence[dict[str, Any]]) -> Run:
        """The new run that takes the client's answers to `run`'s tool calls to the agent (in the
        caller's transaction; runs.turns refuses it once the thread went on or while it is busy)."""
        raise NotFound("No such tool call.")

    def act(self, run: Run, action: dict[str, Any]) -> Run:
        """The new run that takes an action on a generated interface to the agent (runs.turns
        raises Busy while another run of the thread goes on)."""
        raise NotFound("No such interface.")

    async def artifact(self, run: Run, transcript: Transcript, artifact_id: str) -> ArtifactFile:
        """The bytes of an artifact this run made (only an id the run itself named)."""
        raise NotFound("No such artifact.")

    async def send_feedback(self, run: Run, message_id: str, value: str) -> bool:
        """Tell the agent a rating of one of its answers; False where it has nowhere to go."""
        return False


def action_run(run: Run, action: dict[str, Any]) -> Run:
    """An A2UI action as the next run's request, for the protocols that carry one (each reads it
    from `ACTION_KEY` when the run is driven)."""
    request = {**RunRequest(kind="a2ui-action").as_json(), ACTION_KEY: action}
    return next_run(run.conversation, request)

"""One adapter per protocol, behind one interface: what differs when a run of an AG-UI, external or
A2A agent is started, resumed with a decision, answered, acted on, stopped, asked for an artifact's
bytes or told a rating. Views parse the request, call one method of `adapter_for(endpoint)` and
render; they never ask which protocol an agent speaks (tests/test_layers.py keeps it so). Stopping
is the same for all (runs/live.stop_run closes the stream); what a protocol does as its stream
closes is in its `events` (an A2A task is asked to cancel).

What a protocol has no way to do is refused here (`NotFound`), whatever a forged form posts; what
the page offers follows the plan's facts (agents_ui.decisions), decided from the same protocol.
"""

from __future__ import annotations

from agents_ui.models import AgentEndpoint
from agents_ui.runs.protocols import a2a, agui, external
from agents_ui.runs.protocols.base import (
    ArtifactFile,
    Decided,
    NotFound,
    ProtocolAdapter,
    Refused,
    RunContext,
    Unavailable,
)

# The product's generic tools a run offers (ask, form, confirm, choose), and how a person's answer
# to one of them is read: the client-tools view answers them without naming a protocol.
from agents_ui.sdk.agui.answer_forms import read_shaped
from agents_ui.sdk.agui.client_tools import DISMISSED, client_tool, other_answer, read_answer

__all__ = [
    "DISMISSED",
    "ArtifactFile",
    "Decided",
    "NotFound",
    "ProtocolAdapter",
    "Refused",
    "RunContext",
    "Unavailable",
    "adapter_for",
    "client_tool",
    "other_answer",
    "read_answer",
    "read_shaped",
    "task_file_id",
]

# The id by which a file part of a task's artifact is downloaded.
task_file_id = a2a.file_id

ADAPTERS: dict[str, ProtocolAdapter] = {
    AgentEndpoint.Protocol.AGUI: agui.ADAPTER,
    AgentEndpoint.Protocol.EXTERNAL: external.ADAPTER,
    AgentEndpoint.Protocol.A2A: a2a.ADAPTER,
}


def adapter_for(endpoint: AgentEndpoint) -> ProtocolAdapter:
    """The adapter of the protocol the endpoint speaks."""
    return ADAPTERS[endpoint.protocol]

"""CrewAI (`ag-ui-crewai`'s `get_capabilities()`): the standard categories plus its own.

Read as a standard declaration; CrewAI's own top-level categories (`wireShape`, `rawEvents`,
`conversationalFlows`, `crewChat`) and extra keys (`identity.crewaiVersion`, `transport.streamFrames`,
the reasoning channels) are kept and explained, not acted on. `humanInTheLoop.mechanism:
"frontend-tool-calls"` means it asks people through tool calls the client answers, so it takes
client-provided tools (read by the standard reader wherever it is sent). Source:
integrations/crew-ai/python/ag_ui_crewai/_capabilities.py in ag-ui-protocol/ag-ui.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents_ui.capabilities.profile import CREWAI, CapabilityProfile
from agents_ui.capabilities.readers import agui

CATEGORIES = ("wireShape", "rawEvents", "conversationalFlows", "crewChat")

NOTES: dict[str, str] = {
    "wireShape": "how CrewAI sends text and tool calls (start/content/end triples or chunks): both are read",
    "rawEvents": "whether CrewAI passes its own events through as RAW: shown in runs as they come",
    "conversationalFlows": "CrewAI's turn-by-turn flows, keyed by threadId: no control of their own",
    "crewChat": "CrewAI's crew chat helpers: no control of their own",
    "identity.crewaiVersion": "the CrewAI version the agent runs: shown, not relied on",
    "transport.streamFrames": "CrewAI's ordered stream envelope: how it streams, not what it streams",
}


def looks_like(raw: Mapping[str, Any]) -> bool:
    identity = raw.get("identity")
    framework = identity.get("type") if isinstance(identity, Mapping) else None
    return any(name in raw for name in CATEGORIES) or framework == "crewai"


def read(raw: Mapping[str, Any]) -> CapabilityProfile:
    return agui.read(raw, shape=CREWAI, notes=NOTES)

"""The capability model between what agents declare and what the workspace decides.

readers (one per declaration shape) -> one CapabilityProfile, each fact with its provenance ->
decisions (agents_ui.decisions, reading only the profile). Pure Python: no Django, no I/O.
"""

from agents_ui.capabilities.observations import Observations
from agents_ui.capabilities.profile import CapabilityProfile, Shape
from agents_ui.capabilities.provenance import UNSAID, Fact, Kind, Provenance
from agents_ui.capabilities.readers import read_agui, read_card, read_declaration, read_policy
from agents_ui.capabilities.values import RateLimit, SpendLimit, SubagentInfo, ToolInfo

__all__ = [
    "UNSAID",
    "CapabilityProfile",
    "Fact",
    "Kind",
    "Observations",
    "Provenance",
    "RateLimit",
    "Shape",
    "SpendLimit",
    "SubagentInfo",
    "ToolInfo",
    "read_agui",
    "read_card",
    "read_declaration",
    "read_policy",
]

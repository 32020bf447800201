"""One reader per declaration shape, each giving one CapabilityProfile.

- AG-UI discovery (`GET {url}/capabilities`) answers in several shapes, told apart by their keys:
  `{}` (Google ADK when nothing is configured: the agent declares nothing), the standard
  `AgentCapabilities` (agui.py), CrewAI's (standard plus categories of its own, crewai.py), AWS
  Strands' (strands.py), or an object in none of these (kept and shown raw, nothing read from it).
- An external agent's public policy, with what `prepare()` negotiated (external.py).
- No declaration at all: every fact unknown.

- An A2A Agent Card, read in the SDK's 1.0 form (a2a.py).

Decisions never change for a new shape: they read the profile.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from agents_ui.capabilities.profile import AGUI_EMPTY, NONE, UNKNOWN, CapabilityProfile
from agents_ui.capabilities.readers import a2a, agui, crewai, external, strands
from agents_ui.capabilities.readers.document import as_json, capped, kept

UNKNOWN_SHAPE = "declaration in an unknown shape"


def read_agui(declaration: Any) -> CapabilityProfile:
    """An AG-UI discovery answer (a JSON object, or an `AgentCapabilities` model), in its shape."""
    profile = _read_agui(declaration)
    return profile if profile.shape is NONE else replace(profile, thread=agui.THREAD)


def _read_agui(declaration: Any) -> CapabilityProfile:
    raw = as_json(declaration)
    if not isinstance(raw, Mapping):
        return CapabilityProfile(shape=NONE)
    if not raw:
        return agui.read(raw, shape=AGUI_EMPTY)
    if agui.is_standard(raw):
        return crewai.read(raw) if crewai.looks_like(raw) else agui.read(raw)
    if strands.looks_like(raw):
        return strands.read(raw)
    # Kept whole and shown; nothing in it is taken for a capability.
    unread = capped(UNKNOWN_SHAPE, kept(UNKNOWN_SHAPE, raw, lambda _: "not read: the shape is unknown"))
    return CapabilityProfile(shape=UNKNOWN, unread=unread, raw=raw)


def read_policy(policy: Any, negotiated: Any = None) -> CapabilityProfile:
    """An external agent's policy (JSON, or the SDK's model) and, once prepared, what was granted."""
    raw = as_json(policy)
    if not isinstance(raw, Mapping):
        return CapabilityProfile(shape=NONE)
    granted = as_json(negotiated) if negotiated is not None else None
    return external.read(raw, granted if isinstance(granted, Mapping) else None)


def read_card(card: Any, sent: Any = None) -> CapabilityProfile:
    """An A2A Agent Card in the SDK's 1.0 field names (`agents_ui.sdk.a2a.normalised_card`), and the
    card as it was sent (kept for the explain view)."""
    if not isinstance(card, Mapping):
        return CapabilityProfile(shape=NONE)
    profile = a2a.read(card)
    return replace(profile, raw=sent) if isinstance(sent, Mapping) else profile


def read_declaration(
    *, capabilities: Any = None, policy: Any = None, negotiated: Any = None, card: Any = None
) -> CapabilityProfile:
    """The profile of whatever the agent declared; nothing declared gives a profile of unknowns."""
    if sum(x is not None for x in (capabilities, policy, card)) > 1:
        raise ValueError(
            "An agent declares AG-UI capabilities, an external policy or an Agent Card, not both"
        )
    if card is not None:
        return read_card(card)
    if capabilities is not None:
        return read_agui(capabilities)
    if policy is not None:
        return read_policy(policy, negotiated)
    return CapabilityProfile(shape=NONE)

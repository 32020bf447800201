"""Small value types a profile and a plan share: tools, sub-agents, limits.

Each reads by attribute, and by name like a mapping too (`tool["name"]`, `tool.get("schema")`),
because Django templates and older callers read both ways.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache
from typing import Any


@cache
def _field_names(cls: type) -> frozenset[str]:
    return frozenset(f.name for f in fields(cls))


class Readable:
    """Reading a dataclass's fields by name, as a template or a mapping-minded caller does."""

    __slots__ = ()

    def __getitem__(self, name: str) -> Any:
        if name not in _field_names(type(self)):
            raise KeyError(name)
        return getattr(self, name)

    def get(self, name: str, default: Any = None) -> Any:
        try:
            return self[name]
        except KeyError:
            return default


@dataclass(frozen=True, slots=True)
class ToolInfo(Readable):
    """A tool the agent provides: an AG-UI `tools.items` entry or an external agent's domain tool."""

    name: str
    description: str | None = None
    schema: Any = None  # JSON Schema of its input
    output_schema: Any = None
    status: str | None = None  # active | degraded | disabled (external agents)
    kind: str | None = None
    side_effect_class: str | None = None
    idempotency: str | None = None
    approval_required: bool | None = None


@dataclass(frozen=True, slots=True)
class SubagentInfo(Readable):
    name: str
    description: str | None = None


@dataclass(frozen=True, slots=True)
class RateLimit(Readable):
    scope: str
    limit: int
    window_seconds: int


@dataclass(frozen=True, slots=True)
class SpendLimit(Readable):
    scope: str
    limit: float
    currency: str
    window_seconds: int


@dataclass(frozen=True, slots=True)
class SkillInfo(Readable):
    """A skill an A2A agent's card names: what the person may ask it for, with example prompts."""

    id: str
    name: str
    description: str = ""
    tags: tuple[str, ...] = ()
    examples: tuple[str, ...] = ()
    input_modes: tuple[str, ...] | None = None  # None: the card's default input modes
    output_modes: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class CredentialInfo(Readable):
    """A security scheme an A2A agent's card requires: what an admin must set for it."""

    name: str
    kind: str  # api-key | http | oauth2 | openid-connect | mutual-tls
    description: str = ""
    detail: str = ""  # the header or scheme named ("header X-Api-Key", "bearer JWT" ...)

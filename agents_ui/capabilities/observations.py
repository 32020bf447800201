"""What runs have shown an agent doing: one record, whatever the protocol, kept apart from any
declaration (docs/PROTOCOLS.md 1.2).

The same record serves every reader of evidence: the fold of one run (`Observations.of(...)` over
the transcript's flags), what an endpoint has shown over all its runs (`from_json` / `to_json` of
its stored JSON), and the decisions (folded into the profile as observed facts).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

# Field -> the flag of the run fold (agents_ui.sdk.transcript.Observed) it is read from.
_FOLD_FLAGS: dict[str, tuple[str, ...]] = {
    "reasoning_seen": ("reasoning",),
    "encrypted_reasoning_seen": ("encrypted_reasoning",),
    "interrupts_seen": ("interrupts",),
    "state_seen": ("state_snapshots", "state_deltas"),
    "tool_calls_seen": ("tool_calls",),
    "subagents_seen": ("subagents",),
    "approvals_seen": ("approvals",),
    "modules_seen": ("modules",),
    "grounding_seen": ("grounding",),
    "media_seen": ("media",),
    "a2ui_seen": ("a2ui",),
}
# Sub-agents named by runs: at most this many names are kept, each this long (agents name them freely).
MAX_SUBAGENT_NAMES = 50
MAX_SUBAGENT_NAME = 200
NAMES = "subagent_names"


@dataclass(frozen=True, slots=True)
class Observations:
    """Evidence from runs: each flag is true once a run showed it, and never goes back."""

    reasoning_seen: bool = False
    encrypted_reasoning_seen: bool = False
    interrupts_seen: bool = False
    state_seen: bool = False
    tool_calls_seen: bool = False
    subagents_seen: bool = False
    approvals_seen: bool = False
    modules_seen: bool = False
    grounding_seen: bool = False
    # The sub-agents runs showed at work, by name, in the order first seen.
    subagent_names: tuple[str, ...] = ()
    media_seen: bool = False
    a2ui_seen: bool = False

    @classmethod
    def of(cls, observed: Any, subagent_names: Iterable[str] = ()) -> Observations:
        """From the flags one run's fold set (any object with the fold's attribute names), and the
        names of the sub-agents it showed."""
        return cls(
            **{
                name: any(bool(getattr(observed, flag, False)) for flag in flags)
                for name, flags in _FOLD_FLAGS.items()
            },
            subagent_names=_names((), subagent_names),
        )

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> Observations:
        """From what an endpoint stores: {"reasoning": true, "state": true, "subagent_names": [...]}."""
        data = data if isinstance(data, Mapping) else {}
        names = data.get(NAMES)
        return cls(
            **{f.name: data.get(_json_key(f.name)) is True for f in _flags()},
            subagent_names=_names((), names if isinstance(names, list) else ()),
        )

    def to_json(self) -> dict[str, Any]:
        """Only what was seen, so what an endpoint stores grows by merging."""
        found: dict[str, Any] = {_json_key(f.name): True for f in _flags() if getattr(self, f.name)}
        if self.subagent_names:
            found[NAMES] = list(self.subagent_names)
        return found

    def __or__(self, other: Observations) -> Observations:
        return replace(
            self,
            **{f.name: True for f in _flags() if getattr(other, f.name)},
            subagent_names=_names(self.subagent_names, other.subagent_names),
        )

    def covers(self, other: Observations) -> bool:
        """Whether everything `other` saw is already here (nothing new to store)."""
        return (self | other) == self


def _json_key(name: str) -> str:
    return name.removesuffix("_seen")


def _flags() -> list[Any]:
    return [f for f in fields(Observations) if f.name != NAMES]


def _names(known: tuple[str, ...], more: Iterable[Any]) -> tuple[str, ...]:
    """``known`` and then the new names of ``more``, bounded in count and length."""
    names = list(known)
    for name in more:
        if len(names) >= MAX_SUBAGENT_NAMES:
            break
        if isinstance(name, str) and name and name[:MAX_SUBAGENT_NAME] not in names:
            names.append(name[:MAX_SUBAGENT_NAME])
    return tuple(names)

"""The conformance report: every capability an agent declares against what its runs showed.

TCK-style (A2A's TCK makes every declared capability a test and skips the undeclared ones), each
capability of `CHECKS` is one of:

- **holds**: declared, and runs showed it;
- **not yet shown**: declared, and no run showed it yet;
- **contradiction**: declared unsupported but a run showed it, or declared and a run was refused it
  (an agent that declares uploads and refuses a file);
- **undeclared feature**: never declared, but a run showed it.

A capability neither declared nor seen is no row: there is nothing to check. Pure: what is
declared comes from the profile (agents_ui.decisions.declared_support, with the explain view's
reasons), what runs showed from the evidence summed up per capability
(agents_ui.endpoints.conformance reads it from the database).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum

from agents_ui.capabilities import CapabilityProfile, Observations
from agents_ui.decisions import CONTROL_LABELS, declared_support


class Verdict(StrEnum):
    HOLDS = "holds"
    NOT_YET_SHOWN = "not yet shown"
    CONTRADICTION = "contradiction"
    UNDECLARED = "undeclared feature"


@dataclass(frozen=True)
class Check:
    """One capability the report checks: the control its declaration decides, and the flags of
    the runs' observations that show it (none for uploads: a run with a file shows it)."""

    key: str
    control: str
    flags: tuple[str, ...]
    seen_as: str  # what a run did, in a sentence's words


CHECKS: tuple[Check, ...] = (
    Check("reasoning", "reasoning", ("reasoning_seen", "encrypted_reasoning_seen"), "sent reasoning"),
    Check("approvals", "approvals", ("approvals_seen", "interrupts_seen"), "asked for a decision"),
    Check("tools", "tools", ("tool_calls_seen",), "called a tool"),
    Check("state", "state", ("state_seen",), "sent state"),
    Check("subagents", "subagents", ("subagents_seen",), "delegated to a sub-agent"),
    Check("structured-output", "structured-output", ("modules_seen",), "sent structured output"),
    Check("grounding", "grounding", ("grounding_seen",), "sent grounding sources"),
    Check("media-output", "media-output", ("media_seen",), "sent an image or audio"),
    Check("generative-ui", "generative-ui", ("a2ui_seen",), "sent an A2UI surface"),
    Check("uploads", "upload", (), "took a file"),
)
NOTHING_SEEN = Observations()
BY_KEY = {check.key: check for check in CHECKS}
BY_FLAG = {flag: check.key for check in CHECKS for flag in check.flags}


@dataclass(frozen=True)
class EvidenceRun:
    """One run (or probe) that is evidence: the newest few of each capability are shown."""

    run_id: str | None
    outcome: str  # "seen" | "refused"
    at: datetime
    detail: str = ""
    probe_id: int | None = None


@dataclass(frozen=True)
class Evidence:
    """What the runs of one agent showed of one capability, summed up (bounded: counts, the
    newest moment, and a few runs)."""

    seen: int = 0
    refused: int = 0
    last_seen: datetime | None = None
    last_refused: datetime | None = None
    recent: tuple[EvidenceRun, ...] = ()


@dataclass(frozen=True)
class Row:
    check: Check
    verdict: Verdict
    declared: bool | None
    sentence: str
    reasons: tuple[str, ...]
    evidence: Evidence = Evidence()
    # Seen only in the endpoint's record of observations (runs from before evidence was kept).
    seen_before_records: bool = False

    @property
    def label(self) -> str:
        return CONTROL_LABELS[self.check.control]

    @property
    def key(self) -> str:
        return self.check.key

    @property
    def css(self) -> str:
        return self.verdict.name.lower().replace("_", "-")


@dataclass(frozen=True)
class Report:
    rows: tuple[Row, ...] = field(default=())

    def count(self, verdict: Verdict) -> int:
        return sum(row.verdict is verdict for row in self.rows)

    @property
    def contradictions(self) -> tuple[Row, ...]:
        return tuple(row for row in self.rows if row.verdict is Verdict.CONTRADICTION)

    @property
    def summary(self) -> str:
        """The short badge: "3 hold · 1 contradiction" (verdicts with no row left out)."""
        parts = []
        for verdict in Verdict:
            count = self.count(verdict)
            if count:
                parts.append(f"{count} {_counted(verdict, count)}")
        return " · ".join(parts) or "nothing declared to check"


def _counted(verdict: Verdict, count: int) -> str:
    if verdict is Verdict.HOLDS:
        return "hold" if count != 1 else "holds"
    if verdict is Verdict.CONTRADICTION:
        return "contradictions" if count != 1 else "contradiction"
    if verdict is Verdict.UNDECLARED:
        return "undeclared features" if count != 1 else "undeclared feature"
    return str(verdict)


def report(
    profile: CapabilityProfile,
    evidence: Mapping[str, Evidence],
    observed: Observations = NOTHING_SEEN,
) -> Report:
    """The report of one agent: its declared profile, the evidence per capability key, and the
    observations its endpoint kept (they count as seen where no evidence row says so)."""
    rows = []
    for check in CHECKS:
        found = evidence.get(check.key, Evidence())
        declared, reasons = declared_support(profile, check.control)
        recorded = any(getattr(observed, flag) for flag in check.flags)
        seen = found.seen > 0 or recorded
        row = _row(check, declared, seen, found, tuple(r.text for r in reasons), recorded and not found.seen)
        if row is not None:
            rows.append(row)
    return Report(tuple(rows))


def _row(
    check: Check, declared: bool | None, seen: bool, found: Evidence, reasons: tuple[str, ...], before: bool
) -> Row | None:
    runs = _runs(found.seen) if found.seen else "earlier runs"

    def row(verdict: Verdict, sentence: str) -> Row:
        return Row(check, verdict, declared, sentence, reasons, found, seen_before_records=before)

    if declared is True and found.refused:
        refused = _runs(found.refused)
        return row(
            Verdict.CONTRADICTION,
            f"Declared, but {refused} refused it: the agent does not do what it declares.",
        )
    if declared is True and seen:
        return row(Verdict.HOLDS, f"Declared, and {runs} {check.seen_as}.")
    if declared is True:
        return row(Verdict.NOT_YET_SHOWN, "Declared; no run has shown it yet.")
    if declared is False and seen:
        return row(Verdict.CONTRADICTION, f"Declared unsupported, but {runs} {check.seen_as}.")
    if declared is None and seen:
        return row(Verdict.UNDECLARED, f"Never declared, but {runs} {check.seen_as}.")
    return None


def _runs(count: int) -> str:
    return "1 run" if count == 1 else f"{count:,} runs"


def evidence_keys(observations: Observations, *, with_file: bool = False) -> list[str]:
    """The capabilities one run showed, from its observations (and whether it took a file)."""
    keys = [check.key for check in CHECKS if any(getattr(observations, flag) for flag in check.flags)]
    if with_file:
        keys.append("uploads")
    return keys


def contradictions_in_words(found: Report) -> list[dict[str, str]]:
    """What the drift alarm keeps: each contradiction's capability and sentence."""
    return [
        {"capability": row.key, "label": row.label, "sentence": row.sentence} for row in found.contradictions
    ]


__all__: Sequence[str] = (
    "BY_FLAG",
    "BY_KEY",
    "CHECKS",
    "Check",
    "Evidence",
    "EvidenceRun",
    "Report",
    "Row",
    "Verdict",
    "contradictions_in_words",
    "evidence_keys",
    "report",
)

"""The conformance report's data: evidence kept as runs end, summed up with bounded queries, and
the drift alarm kept on the endpoint (agents_ui.conformance decides the verdicts).

An agent with thousands of runs costs the same as one with ten: the report reads one aggregate
over the evidence rows (indexed by endpoint, capability, outcome, moment) and, per capability,
its newest few rows; it never folds a run's events.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Any

from django.db.models import Count, Max, Q
from django.utils import timezone

from agents_ui.capabilities import CapabilityProfile, Observations
from agents_ui.conformance import (
    Evidence,
    EvidenceRun,
    Report,
    contradictions_in_words,
    evidence_keys,
    report,
)
from agents_ui.endpoints import errors
from agents_ui.models import AgentEndpoint, Attachment, CapabilitySnapshot
from agents_ui.models import CapabilityEvidence as EvidenceRow
from agents_ui.sdk import AgentError
from agents_ui.snapshot_diff import Declaration, plan_for

# The newest runs shown as evidence of each capability, and the most contradictions an alarm keeps.
RECENT = 5
MAX_ALARMS = 20
# An agent's answers that refuse what it was sent (rather than fail for another reason).
REFUSING_STATUSES = frozenset({400, 403, 406, 413, 415, 422})
DETAIL = 300
USABLE = (CapabilitySnapshot.Status.DECLARED, CapabilitySnapshot.Status.NONE)


def refusal(exc: AgentError) -> str:
    """What the agent's error says, when it says no to what the run carried (a file it declares it
    takes) rather than failing for another reason; "" otherwise."""
    if exc.code != "unsupported_capability" and exc.status not in REFUSING_STATUSES:
        return ""
    status = f"HTTP {exc.status}, " if exc.status is not None else ""
    return f"{errors.describe(exc)} ({status}{exc.code})"


def declared_profile(endpoint: AgentEndpoint) -> CapabilityProfile:
    """What the endpoint declares, from its newest stored declaration (nothing observed folded in):
    a declaration that could not be read this time leaves the last good one in force."""
    snapshot = (
        endpoint.snapshots.filter(status__in=USABLE)
        .order_by("-last_seen_at", "-pk")
        .only("status", "payload")
        .first()
    )
    if snapshot is None:
        return plan_for(Declaration(endpoint.protocol, CapabilitySnapshot.Status.NONE, None)).profile
    return plan_for(Declaration(endpoint.protocol, snapshot.status, snapshot.payload)).profile


def evidence_of(endpoint_ids: Iterable[int], *, recent: int = RECENT) -> dict[int, dict[str, Evidence]]:
    """Per endpoint and capability: how many runs showed it or were refused it, when last, and
    (with `recent`) its newest runs."""
    counts: dict[tuple[int, str], dict[str, Any]] = defaultdict(dict)
    rows = (
        EvidenceRow.objects.filter(endpoint_id__in=list(endpoint_ids))
        .values("endpoint_id", "capability", "outcome")
        .annotate(count=Count("id"), last=Max("at"))
        .order_by()
    )
    for row in rows:
        counts[(row["endpoint_id"], row["capability"])][row["outcome"]] = (row["count"], row["last"])
    found: dict[int, dict[str, Evidence]] = defaultdict(dict)
    for (endpoint_id, capability), outcomes in counts.items():
        seen, last_seen = outcomes.get(EvidenceRow.Outcome.SEEN, (0, None))
        refused, last_refused = outcomes.get(EvidenceRow.Outcome.REFUSED, (0, None))
        newest: tuple[EvidenceRun, ...] = ()
        if recent:
            newest = tuple(
                EvidenceRun(str(item.run_id) if item.run_id else None, item.outcome, item.at, item.detail)
                for item in EvidenceRow.objects.filter(endpoint_id=endpoint_id, capability=capability)
                .order_by("-at", "-id")
                .only("run_id", "outcome", "at", "detail")[:recent]
            )
        found[endpoint_id][capability] = Evidence(seen, refused, last_seen, last_refused, newest)
    return found


def report_of(endpoint: AgentEndpoint, *, recent: int = RECENT) -> Report:
    return report(
        declared_profile(endpoint),
        evidence_of([endpoint.pk], recent=recent).get(endpoint.pk, {}),
        Observations.from_json(endpoint.observed),
    )


def badges(endpoints: Iterable[tuple[AgentEndpoint, CapabilityProfile | None]]) -> dict[int, Report]:
    """The catalogue's short reports, one aggregate query for every card (no runs listed): each
    endpoint with the profile its card was planned from."""
    pairs = list(endpoints)
    evidence = evidence_of([endpoint.pk for endpoint, _ in pairs], recent=0)
    return {
        endpoint.pk: report(
            profile if profile is not None else declared_profile(endpoint),
            evidence.get(endpoint.pk, {}),
            Observations.from_json(endpoint.observed),
        )
        for endpoint, profile in pairs
    }


def record_run(
    endpoint: AgentEndpoint,
    run_id: Any,
    observations: Observations,
    *,
    message_id: int | None,
    refused: str = "",
    ended_well: bool = False,
) -> None:
    """Keep what one run showed: a row per capability it showed, and for a run that carried a
    file, whether the agent took it or refused it; then the drift alarm is brought up to date."""
    took_file = bool(message_id) and Attachment.objects.filter(message_id=message_id).exists()
    now = timezone.now()
    seen = EvidenceRow.Outcome.SEEN
    rows = [
        EvidenceRow(endpoint=endpoint, run_id=run_id, capability=key, outcome=seen, at=now)
        for key in evidence_keys(observations, with_file=took_file and ended_well and not refused)
    ]
    if took_file and refused:
        outcome, detail = EvidenceRow.Outcome.REFUSED, refused[:DETAIL]
        rows.append(
            EvidenceRow(
                endpoint=endpoint, run_id=run_id, capability="uploads", outcome=outcome, detail=detail, at=now
            )
        )
    if not rows:
        return
    # A verdict changes only when a capability is seen (or refused) for the first time: only then
    # is the alarm read again, so a busy agent's runs cost one indexed query here, not a report.
    shown = {(row.capability, row.outcome) for row in rows}
    known = set(
        EvidenceRow.objects.filter(endpoint=endpoint, capability__in={key for key, _ in shown})
        .order_by()
        .values_list("capability", "outcome")
        .distinct()
    )
    EvidenceRow.objects.bulk_create(rows)
    if shown - known:
        refresh_drift(endpoint.pk)


def refresh_drifts(endpoint_ids: list[int]) -> None:
    """The alarms of endpoints whose declaration changed: only those with something to contradict
    (evidence, observations or an alarm already raised) are read again."""
    if not endpoint_ids:
        return
    worth = (
        AgentEndpoint.objects.filter(pk__in=endpoint_ids)
        .filter(Q(evidence__isnull=False) | Q(drift_since__isnull=False) | ~Q(observed={}))
        .order_by()
        .values_list("pk", flat=True)
        .distinct()
    )
    for endpoint_id in worth:
        refresh_drift(endpoint_id)


def refresh_drift(endpoint_id: int) -> list[dict[str, str]]:
    """The alarm as the declaration and the evidence stand now: each contradiction keeps the moment
    it was first raised; none left clears it."""
    fields = ("pk", "protocol", "observed", "drift", "drift_since")
    endpoint = AgentEndpoint.objects.only(*fields).filter(pk=endpoint_id).first()
    if endpoint is None:
        return []
    found = contradictions_in_words(report_of(endpoint, recent=0))
    kept = [item for item in endpoint.drift or () if isinstance(item, dict)]
    raised = {item.get("capability"): item.get("at") for item in kept}
    now = timezone.now()
    alarm = [{**item, "at": raised.get(item["capability"]) or now.isoformat()} for item in found[:MAX_ALARMS]]
    if alarm != (endpoint.drift or []):
        since = (endpoint.drift_since or now) if alarm else None
        AgentEndpoint.objects.filter(pk=endpoint.pk).update(drift=alarm, drift_since=since)
    return alarm

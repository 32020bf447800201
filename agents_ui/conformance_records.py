"""What the conformance report keeps (agents_ui.endpoints.conformance): the evidence runs and
probes give about each capability of an agent, and each run of the read-only probe."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

PROBE_EVERY_HELP = (
    "Run the read-only conformance probe this often (0: never on a schedule). Honoured by "
    "`manage.py probe_agents`, which cron or a systemd timer runs every minute (docs/operations.md)."
)


class CapabilityEvidence(models.Model):
    """What one run (or one probe) showed about one capability of its agent: the conformance
    report aggregates these rows, never the runs' events (agents_ui.endpoints.conformance)."""

    class Outcome(models.TextChoices):
        SEEN = "seen", "Seen"
        REFUSED = "refused", "Refused"

    endpoint = models.ForeignKey("agents_ui.AgentEndpoint", on_delete=models.CASCADE, related_name="evidence")
    run = models.ForeignKey(
        "agents_ui.Run", on_delete=models.CASCADE, null=True, blank=True, related_name="evidence"
    )
    # A capability of agents_ui.capabilities.conformance.CHECKS ("reasoning", "uploads" ...).
    capability = models.CharField(max_length=32)
    outcome = models.CharField(max_length=8, choices=Outcome.choices)
    detail = models.CharField(max_length=300, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-at", "-id"]
        verbose_name_plural = "evidence"
        indexes = [
            models.Index(fields=["endpoint", "capability", "outcome", "at"], name="evidence_by_capability")
        ]

    def __str__(self) -> str:
        return f"{self.capability} {self.outcome}"


class Probe(models.Model):
    """One run of the read-only conformance probe against an agent (agents_ui.runs.probe)."""

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        PASSED = "passed", "Every step passed"
        FINDINGS = "findings", "Found something"
        FAILED = "failed", "Could not reach the agent"

    endpoint = models.ForeignKey("agents_ui.AgentEndpoint", on_delete=models.CASCADE, related_name="probes")
    # Who pressed "Probe now"; empty for the schedule.
    started_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.RUNNING)
    # [{"step", "outcome", "sentence", "run"}], one per step, in order.
    steps = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        get_latest_by = "started_at"
        indexes = [models.Index(fields=["endpoint", "started_at"], name="probe_by_endpoint")]

    def __str__(self) -> str:
        return f"Probe of {self.endpoint_id} at {self.started_at:%Y-%m-%d %H:%M}"

"""Run the read-only conformance probe against the agents whose schedule says it is time.

Meant to be run every minute (cron, a systemd timer: docs/operations.md). An endpoint is probed
when it is enabled, its "probe every (minutes)" is set, and its last probe began at least that long
ago; `--endpoint` probes the named ones now, `--all` every enabled one now.
"""

from __future__ import annotations

from datetime import timedelta

from asgiref.sync import async_to_sync
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from agents_ui.models import AgentEndpoint, Probe
from agents_ui.runs.probe import run_probe

# A probe still marked running after this long was cut off (a restart): it no longer holds the next.
STALE = timedelta(minutes=10)


def due(endpoints: list[AgentEndpoint], now=None) -> list[AgentEndpoint]:
    """Those whose interval has passed since their last probe began (or never probed)."""
    now = now or timezone.now()
    found = []
    for endpoint in endpoints:
        last = endpoint.probes.order_by("-started_at").first()
        if last is None:
            found.append(endpoint)
        elif last.outcome == Probe.Outcome.RUNNING and now - last.started_at < STALE:
            continue
        elif now - last.started_at >= timedelta(minutes=endpoint.probe_every):
            found.append(endpoint)
    return found


class Command(BaseCommand):
    help = (
        "Probe agents with the read-only conformance probe (discovery, a plain text run, an upload of "
        "a declared type, a cancel): those whose schedule is due, or those named now."
    )

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--endpoint", action="append", default=[], metavar="SLUG", help="Probe this agent now."
        )
        parser.add_argument("--all", action="store_true", help="Probe every enabled agent now.")

    def handle(self, *args, **options) -> None:
        enabled = AgentEndpoint.objects.filter(enabled=True)
        if options["endpoint"]:
            endpoints = list(AgentEndpoint.objects.filter(slug__in=options["endpoint"]))
            missing = set(options["endpoint"]) - {endpoint.slug for endpoint in endpoints}
            if missing:
                raise CommandError(f"No agent endpoint with the slug {', '.join(sorted(missing))}.")
        elif options["all"]:
            endpoints = list(enabled)
        else:
            endpoints = due(list(enabled.filter(probe_every__gt=0)))
        if not endpoints:
            self.stdout.write("No agent is due for a probe.")
            return
        for endpoint in endpoints:
            probe = async_to_sync(run_probe)(endpoint)
            self.stdout.write(f"Probed {endpoint.name}: {probe.get_outcome_display().lower()}.")
            for step in probe.steps:
                self.stdout.write(f"  {step['step']}: {step['outcome']} — {step['sentence']}")

"""Write the inbox's items of runs that were left waiting before the inbox kept them."""

from django.core.management.base import BaseCommand
from django.db.models import OuterRef, Subquery

from agents_ui.models import Run, WaitingItem
from agents_ui.runs.event_log import replay
from agents_ui.runs.waiting import record


class Command(BaseCommand):
    help = (
        "Record what the newest run of each conversation leaves waiting on its person (interrupts, "
        "a task's question or need for authorization), for runs older than the inbox. Safe to run again."
    )

    def handle(self, *args, **options) -> None:
        newest = (
            Run.objects.filter(conversation=OuterRef("conversation"), superseded_at__isnull=True)
            .order_by("-created_at", "-pk")
            .values("pk")[:1]
        )
        runs = (
            Run.objects.filter(pk=Subquery(newest))
            .filter(status__in=(Run.Status.INTERRUPTED, Run.Status.AUTH_REQUIRED, Run.Status.COMPLETED))
            .exclude(waiting_items__isnull=False)
            .select_related("conversation")
        )
        written = 0
        for run in runs.iterator():
            before = WaitingItem.objects.filter(run=run).count()
            # Without the run's plan, a tool call left without a result is not taken for one the
            # person must answer (the agent may finish its own calls): those wait for the run's page.
            record(run, replay(run), None, run.status if run.status != Run.Status.COMPLETED else "")
            written += WaitingItem.objects.filter(run=run).count() - before
        self.stdout.write(f"Recorded {written} waiting item{'s' if written != 1 else ''}.")

"""Register the embedded demo agents on first start; afterwards only keep their URLs current."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from agents_ui.demo.gate import enabled
from agents_ui.demo.registry import DEMO_AGENTS, register_demo_agents
from agents_ui.models import AgentEndpoint


class Command(BaseCommand):
    help = (
        "Register the demo agents as endpoints the first time (no demo endpoint exists yet), and point "
        "existing demo endpoints at --base-url with this installation's demo key. Agents an admin "
        "deleted stay deleted unless --force. Nothing happens while AGENTS_UI_DEMO_AGENTS is off."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--base-url",
            default=None,
            help="Where this server is reachable (default: settings.AGENTS_UI_PUBLIC_URL).",
        )
        parser.add_argument(
            "--force",
            action="store_true",
            help="Create missing demo agents even if some were registered before, or if "
            "AGENTS_UI_DEMO_AUTOREGISTER is off.",
        )

    def handle(self, *args: Any, base_url: str | None, force: bool, **options: Any) -> None:
        base_url = base_url or settings.AGENTS_UI_PUBLIC_URL
        if not enabled():
            self.stdout.write("Demo agents: not served here (AGENTS_UI_DEMO_AGENTS is off), none registered.")
            return
        if not settings.AGENTS_UI_DEMO_AUTOREGISTER and not force:
            self.stdout.write("Demo agents: automatic registration is off (AGENTS_UI_DEMO_AUTOREGISTER).")
            return
        before = set(AgentEndpoint.objects.filter(is_demo=True).values_list("slug", flat=True))
        before_urls = dict(AgentEndpoint.objects.filter(is_demo=True).values_list("slug", "base_url"))
        # First start: no demo endpoint was ever registered. After that, an admin's deletion is final.
        first_start = not before
        endpoints = register_demo_agents(base_url, create_missing=first_start or force)

        created = [e.slug for e in endpoints if e.slug not in before]
        moved = [e.slug for e in endpoints if e.slug in before and before_urls[e.slug] != e.base_url]
        taken = sorted(
            AgentEndpoint.objects.filter(slug__in=[d.slug for d in DEMO_AGENTS], is_demo=False).values_list(
                "slug", flat=True
            )
        )
        if created:
            self.stdout.write(
                self.style.SUCCESS(f"Demo agents registered at {base_url}: {', '.join(created)}.")
            )
        if moved:
            self.stdout.write(f"Demo agents now pointing at {base_url}: {', '.join(moved)}.")
        if taken:
            self.stdout.write(f"Demo agents skipped, slug used by another endpoint: {', '.join(taken)}.")
        if not created and not moved:
            self.stdout.write(f"Demo agents: {len(endpoints)} registered, nothing to change.")

"""System checks of the product's own settings (`manage.py check`, and every command that checks)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Error, register


@register()
def run_workers_need_postgresql(app_configs: Any = None, **kwargs: Any) -> list[Error]:
    """Separate run workers claim runs with SELECT ... FOR UPDATE SKIP LOCKED: PostgreSQL only."""
    if settings.AGENTS_UI_RUN_WORKERS != "separate":
        return []
    engine = settings.DATABASES["default"]["ENGINE"]
    if engine.endswith("postgresql"):
        return []
    name = engine.rsplit(".", 1)[-1]
    return [
        Error(
            f"AGENTS_UI_RUN_WORKERS=separate needs PostgreSQL, and the database is {name}.",
            hint="Set DATABASE_URL=postgres://... (docs/deploy.md), or leave AGENTS_UI_RUN_WORKERS "
            "at embedded.",
            id="agents_ui.E001",
        )
    ]

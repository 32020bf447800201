"""The runs this process drives (agents_ui.runs.live.LiveRun), by run id: apart from live.py so that
the protocol adapters, which live.py uses, can find a run that streams without importing it."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents_ui.runs.live import LiveRun

LIVE: dict[str, LiveRun] = {}


def live_run(run_id: uuid.UUID | str) -> LiveRun | None:
    return LIVE.get(str(run_id))

"""Log lines: JSON when asked, one at a run's start and end, never what was said."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest
from asgiref.sync import sync_to_async

from agents_ui.monitoring.logs import JsonLinesFormatter
from agents_ui.monitoring.runs import token_counts
from tests.runs.test_runs import finish, new_turn


def test_a_json_line_has_the_message_and_the_fields_given():
    record = logging.makeLogRecord(
        {"name": "agents_ui.runs", "levelname": "INFO", "msg": "run %s ended", "args": ("r1",), "run": "r1"}
    )
    line = json.loads(JsonLinesFormatter().format(record))
    assert line["message"] == "run r1 ended" and line["run"] == "r1" and line["level"] == "info"
    assert set(line) == {"time", "level", "logger", "message", "run"}


def test_the_json_format_is_chosen_by_the_environment():
    script = (
        "import django; django.setup(); from django.conf import settings; "
        "print(settings.LOGGING['handlers']['console'].get('formatter', 'text'))"
    )
    env = {"AGENTS_UI_LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "project.test_settings"}
    found = subprocess.run(
        [sys.executable, "-c", script], env={**os.environ, **env}, capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "json"


@pytest.mark.django_db(transaction=True)
async def test_a_run_logs_its_start_and_end_with_ids_and_durations_and_nothing_said(caplog, live_url):
    from agents_ui.demo.registry import register_demo_agents

    endpoints = {e.slug: e for e in await sync_to_async(register_demo_agents)(live_url)}
    caplog.set_level(logging.INFO, logger="agents_ui.runs")
    run = await finish(await new_turn(endpoints["support-desk"], "my parcel code is ZEBRA-42"))
    lines = [r for r in caplog.records if r.name == "agents_ui.runs"]
    start, end = [r for r in lines if getattr(r, "run", "") == str(run.pk)]
    assert (start.phase, end.phase) == ("start", "end")
    assert end.agent == "support-desk" and end.protocol == "external" and end.outcome == "completed"
    assert end.conversation == str(run.conversation_id)
    assert 0 < end.first_event_seconds <= end.duration_seconds and end.events == run.event_count
    formatted = [JsonLinesFormatter().format(r) for r in lines]
    assert not any("ZEBRA" in text for text in formatted)
    credential = (
        await sync_to_async(lambda: type(endpoints["support-desk"]).objects.get(slug="support-desk"))()
    ).credential
    assert credential and not any(credential in text for text in formatted)


def test_token_counts_read_every_protocols_usage():
    from ag_ui.core.events import TokenUsage

    agui = [TokenUsage(input_tokens=10, output_tokens=4), TokenUsage(input_tokens=5, output_tokens=1)]
    assert token_counts(agui) == {"input_tokens": 15, "output_tokens": 5}
    assert token_counts({"inputTokens": 3, "outputTokens": 2, "model": "x"}) == {
        "input_tokens": 3,
        "output_tokens": 2,
    }
    assert token_counts(None) is None and token_counts({"inputTokens": "many"}) is None

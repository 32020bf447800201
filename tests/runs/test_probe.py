"""The conformance probe against agents that contradict themselves, and against one that asks: it
finds the contradictions, and nothing it sends can approve, answer, run a tool or act."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.core.management import CommandError, call_command
from django.urls import reverse
from django.utils import timezone

from agents_ui.conformance import Verdict
from agents_ui.endpoints.conformance import report_of
from agents_ui.management.commands.probe_agents import due
from agents_ui.models import AgentEndpoint, Conversation, Probe, Run, WaitingItem
from agents_ui.runs.probe import AT_REQUEST, PROBE_USERNAME, run_probe, sample_file
from tests.factories import make_endpoint, make_user
from tests.support.contradicting_agent import RECEIVED, ContradictingAgentServer, carries_file

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def agents():
    server = ContradictingAgentServer().start()
    yield server
    server.stop()


def _endpoint(agents, name: str) -> AgentEndpoint:
    return make_endpoint(name=name.title(), slug=f"{name}-agent", base_url=agents.url_for(name))


async def test_the_probe_finds_undeclared_reasoning_and_a_refused_upload(agents):
    endpoint = await sync_to_async(_endpoint)(agents, "liar")
    staff = await sync_to_async(make_user)(staff=True)

    probe = await run_probe(endpoint, staff)

    steps = {step["step"]: step for step in probe.steps}
    assert [step["step"] for step in probe.steps] == ["discovery", "text", "upload", "cancel"]
    assert steps["discovery"]["outcome"] == "passed"
    assert steps["text"]["outcome"] == "passed", steps["text"]
    assert "contradicting agent" in steps["text"]["sentence"]
    assert steps["upload"]["outcome"] == "refused", steps["upload"]
    assert "415" in steps["upload"]["sentence"] or "refused" in steps["upload"]["sentence"]
    assert steps["cancel"]["outcome"] == "passed", steps["cancel"]
    assert probe.outcome == Probe.Outcome.FINDINGS
    assert probe.started_by_id == staff.pk

    found = await sync_to_async(report_of)(endpoint)
    rows = {row.key: row for row in found.rows}
    assert rows["reasoning"].verdict is Verdict.CONTRADICTION
    assert rows["reasoning"].declared is False
    assert "Declared unsupported" in rows["reasoning"].sentence
    assert rows["reasoning"].evidence.recent, "the runs that showed it are its evidence"
    assert rows["uploads"].verdict is Verdict.CONTRADICTION
    assert rows["uploads"].evidence.refused == 1
    assert rows["uploads"].evidence.recent[0].outcome == "refused"
    assert found.summary == "2 contradictions"

    # The drift alarm: both, each with when it was raised.
    endpoint = await AgentEndpoint.objects.aget(pk=endpoint.pk)
    assert {item["capability"] for item in endpoint.drift} == {"reasoning", "uploads"}
    assert endpoint.drift_since is not None and all(item["at"] for item in endpoint.drift)


async def test_the_probe_stops_at_a_request_and_never_answers_it(agents):
    endpoint = await sync_to_async(_endpoint)(agents, "asker")
    before = len(RECEIVED["asker"])

    probe = await run_probe(endpoint)

    steps = {step["step"]: step for step in probe.steps}
    assert steps["text"]["outcome"] == "stopped"
    assert AT_REQUEST in steps["text"]["sentence"]
    assert steps["upload"]["outcome"] == "skipped"  # it declares no files
    assert probe.started_by_id is None
    sent = RECEIVED["asker"][before:]
    assert len(sent) == 2, "one run for the text step, one for the cancel step, nothing after"
    for run in sent:
        assert not run.get("resume"), "no interrupt is ever answered"
        assert all(message.get("role") in ("user",) for message in run["messages"]), run["messages"]
        assert "a2uiAction" not in (run.get("forwardedProps") or {})
        assert not carries_file(run)
    # Its runs are the probe account's, never a person's: no one's conversations or inbox.
    conversations = Conversation.objects.filter(endpoint=endpoint)
    owners = {owner async for owner in conversations.values_list("user__username", flat=True)}
    assert owners == {PROBE_USERNAME}
    people = WaitingItem.objects.filter(endpoint=endpoint).exclude(user__username=PROBE_USERNAME)
    assert not await people.aexists()
    runs = Run.objects.filter(conversation__endpoint=endpoint)
    assert {status async for status in runs.values_list("status", flat=True)} <= {
        Run.Status.CANCELLED,
        Run.Status.INTERRUPTED,
    }


async def test_a_probe_of_an_unreachable_agent_tries_nothing_else():
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent")
    probe = await run_probe(endpoint)
    assert probe.outcome == Probe.Outcome.FAILED
    assert [step["outcome"] for step in probe.steps] == ["failed", "skipped", "skipped", "skipped"]
    assert not await Run.objects.filter(conversation__endpoint=endpoint).aexists()


def test_the_sample_file_is_of_a_type_the_agent_takes():
    assert sample_file(())[1] == "text/plain"
    assert sample_file(("image/*",))[1] == "image/png"
    assert sample_file(("application/pdf",))[1] == "application/pdf"
    assert sample_file(("text/plain",), refuse=("text/plain",)) is None
    assert sample_file(("video/mp4",)) is None


def test_the_schedule_probes_only_agents_whose_interval_has_passed(agents):
    scheduled = _endpoint(agents, "liar")
    scheduled.probe_every = 30
    scheduled.save()
    make_endpoint(name="Never scheduled", slug="unscheduled", base_url=agents.url_for("liar"))

    out = StringIO()
    call_command("probe_agents", stdout=out)
    assert "Probed Liar: found something." in out.getvalue()
    assert list(Probe.objects.values_list("endpoint__slug", flat=True)) == ["liar-agent"]

    again = StringIO()
    call_command("probe_agents", stdout=again)  # a minute later, as cron runs it: not due yet
    assert again.getvalue().strip() == "No agent is due for a probe."
    Probe.objects.update(started_at=timezone.now() - timedelta(minutes=31))
    assert [e.slug for e in due(list(AgentEndpoint.objects.filter(probe_every__gt=0)))] == ["liar-agent"]

    named = StringIO()
    call_command("probe_agents", "--endpoint", "unscheduled", stdout=named)
    assert "Probed Never scheduled" in named.getvalue()
    with pytest.raises(CommandError):
        call_command("probe_agents", "--endpoint", "no-such-agent")


def test_probe_now_in_the_admin_probes_and_shows_the_steps_on_the_report(agents, admin_client):
    endpoint = _endpoint(agents, "liar")
    url = reverse("admin:agents_ui_agentendpoint_probe", args=[endpoint.pk])
    answer = admin_client.post(url, follow=True)
    assert answer.redirect_chain[-1][0] == reverse(
        "admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk]
    )
    text = answer.content.decode()
    assert "Probed Liar: found something." in text
    assert 'data-step="upload" data-step-outcome="refused"' in text
    assert "HTTP 415" in text
    assert Probe.objects.get().started_by.username == "admin"


def test_the_list_action_probes_the_selected_agents(agents, admin_client):
    liar, asker = _endpoint(agents, "liar"), _endpoint(agents, "asker")
    listing = reverse("admin:agents_ui_agentendpoint_changelist")
    form = {"action": "probe_now", "_selected_action": [liar.pk, asker.pk]}
    answer = admin_client.post(listing, form, follow=True)
    said = [str(message) for message in answer.context["messages"]]
    assert "Probed Liar: found something." in said and "Probed Asker: every step passed." in said, said
    assert Probe.objects.count() == 2


async def test_only_the_newest_probes_are_kept_with_their_runs(agents, monkeypatch):
    monkeypatch.setattr("agents_ui.runs.probe.KEEP", 2)
    endpoint = await sync_to_async(_endpoint)(agents, "asker")
    for _ in range(3):
        await run_probe(endpoint)
    assert await Probe.objects.filter(endpoint=endpoint).acount() == 2
    # Two steps with a run each (the text run and the cancel) per probe kept.
    assert await Conversation.objects.filter(endpoint=endpoint).acount() == 4

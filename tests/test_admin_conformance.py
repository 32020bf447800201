"""The conformance report in the admin: its verdicts from stored evidence, bounded however many runs
an agent has; the drift alarm in the list and on the endpoint's page; who may read it and probe."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from agents_ui.capabilities import Observations
from agents_ui.conformance import Verdict
from agents_ui.endpoints.conformance import record_run, refresh_drift, report_of
from agents_ui.models import CapabilityEvidence, CapabilitySnapshot, Conversation, Message, Probe, Run
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

DECLARES = {
    "reasoning": {"supported": False},
    "tools": {"supported": True, "items": [{"name": "search", "description": "Search.", "parameters": {}}]},
    "state": {"snapshots": True},
    "multimodal": {"input": {"file": True}},
}


def declared(endpoint, payload=DECLARES):
    return CapabilitySnapshot.objects.create(
        endpoint=endpoint, status="declared", content_hash=str(hash(str(payload))), source="test",
        payload=payload, last_seen_at=timezone.now(),
    )  # fmt: skip


def a_run(endpoint, *, file=False):
    conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint)
    message = Message.objects.create(conversation=conversation, role="user", content="hi")
    if file:
        message.attachments.create(name="a.txt", mime_type="text/plain", size=1, data=b"a")
    return Run.objects.create(
        conversation=conversation, status=Run.Status.COMPLETED, request={"message_id": message.pk}
    )


def test_each_verdict_comes_from_the_declaration_and_the_evidence():
    endpoint = make_endpoint()
    declared(endpoint)
    tools = a_run(endpoint)
    record_run(endpoint, tools.pk, Observations(tool_calls_seen=True), message_id=None, ended_well=True)
    reasons = a_run(endpoint)
    record_run(endpoint, reasons.pk, Observations(reasoning_seen=True), message_id=None, ended_well=True)
    sub = a_run(endpoint)
    record_run(endpoint, sub.pk, Observations(subagents_seen=True), message_id=None, ended_well=True)
    refused = a_run(endpoint, file=True)
    record_run(endpoint, refused.pk, Observations(), message_id=refused.request["message_id"], refused="415")

    rows = {row.key: row for row in report_of(endpoint).rows}
    assert rows["tools"].verdict is Verdict.HOLDS
    assert rows["tools"].evidence.recent[0].run_id == str(tools.pk)
    assert rows["state"].verdict is Verdict.NOT_YET_SHOWN
    assert rows["reasoning"].verdict is Verdict.CONTRADICTION
    assert rows["subagents"].verdict is Verdict.UNDECLARED
    assert rows["uploads"].verdict is Verdict.CONTRADICTION
    assert rows["uploads"].reasons, "explain's reasons go with each row"
    assert "grounding" not in rows, "neither declared nor seen: nothing to check"
    assert (
        report_of(endpoint).summary == "1 holds · 1 not yet shown · 2 contradictions · 1 undeclared feature"
    )


def test_a_new_declaration_that_contradicts_the_runs_raises_the_alarm_and_one_that_agrees_clears_it():
    endpoint = make_endpoint()
    declared(endpoint, {"reasoning": {"supported": True}})
    run = a_run(endpoint)
    record_run(endpoint, run.pk, Observations(reasoning_seen=True), message_id=None, ended_well=True)
    endpoint.refresh_from_db()
    assert endpoint.drift == [] and endpoint.drift_since is None

    declared(endpoint, {"reasoning": {"supported": False}})
    refresh_drift(endpoint.pk)
    endpoint.refresh_from_db()
    assert [item["capability"] for item in endpoint.drift] == ["reasoning"]
    raised = endpoint.drift[0]["at"]

    refresh_drift(endpoint.pk)  # still so: the moment it was raised is kept
    endpoint.refresh_from_db()
    assert endpoint.drift[0]["at"] == raised

    declared(endpoint, {"reasoning": {"supported": True}})
    refresh_drift(endpoint.pk)
    endpoint.refresh_from_db()
    assert endpoint.drift == [] and endpoint.drift_since is None


def test_the_report_of_an_agent_with_ten_thousand_runs_is_a_bounded_read(admin_client):
    endpoint = make_endpoint()
    declared(endpoint)
    conversation = Conversation.objects.create(user=make_user(), endpoint=endpoint)
    runs = Run.objects.bulk_create(
        [Run(conversation=conversation, status=Run.Status.COMPLETED) for _ in range(10_000)]
    )
    now = timezone.now()
    CapabilityEvidence.objects.bulk_create(
        [
            CapabilityEvidence(
                endpoint=endpoint,
                run=run,
                capability="tools" if n % 2 else "reasoning",
                outcome="seen",
                at=now - timedelta(seconds=n),
            )
            for n, run in enumerate(runs)
        ],
        batch_size=2000,
    )
    url = reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk])
    started = time.perf_counter()
    with CaptureQueriesContext(connection) as queries:
        page = admin_client.get(url)
    took = time.perf_counter() - started
    assert page.status_code == 200
    text = page.content.decode()
    assert (
        "Seen in 5000 runs" in text
        and 'data-verdict="holds"' in text
        and 'data-verdict="contradiction"' in text
    )
    # The same number of queries for 10,000 runs as for one: an aggregate and a few newest rows each.
    assert len(queries) < 30, [q["sql"][:120] for q in queries]
    assert text.count("data-evidence-run=") == 10, "five newest runs per capability, no more"
    print(f"\nconformance report, 10,000 runs: {took * 1000:.0f} ms, {len(queries)} queries")


def test_the_list_shows_the_drift_alarm_and_filters_by_it(admin_client):
    calm, drifting = make_endpoint(name="Calm agent"), make_endpoint(name="Drifting agent")
    sentence = "Declared unsupported, but 1 run sent reasoning."
    at = timezone.now().isoformat()
    drifting.drift = [{"capability": "reasoning", "label": "Reasoning panel", "sentence": sentence, "at": at}]
    drifting.drift_since = timezone.now()
    drifting.save()
    listing = admin_client.get(reverse("admin:agents_ui_agentendpoint_changelist")).content.decode()
    assert "Drift: 1 contradiction" in listing and "No drift" in listing
    only = admin_client.get(
        reverse("admin:agents_ui_agentendpoint_changelist") + "?drift=alarm"
    ).content.decode()
    assert "Drifting agent" in only and "Calm agent" not in only
    page = admin_client.get(
        reverse("admin:agents_ui_agentendpoint_change", args=[drifting.pk])
    ).content.decode()
    assert (
        "Drift alarm: the agent contradicts its declaration" in page
        and 'data-drift-capability="reasoning"' in page
    )
    assert 'data-tool="probe"' in page and 'data-tool="conformance"' in page
    assert calm.probe_every == 0  # off by default


def test_people_who_are_not_staff_never_reach_the_report_or_the_probe(client):
    endpoint = make_endpoint()
    report = reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk])
    probe = reverse("admin:agents_ui_agentendpoint_probe", args=[endpoint.pk])
    client.force_login(make_user())
    assert client.get(report).status_code == 302  # the admin's sign-in, as for every admin page
    assert client.post(probe).status_code == 302
    assert not Probe.objects.exists()


def test_staff_who_may_only_view_read_the_report_but_cannot_probe(client):
    endpoint = make_endpoint()
    report = reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk])
    probe = reverse("admin:agents_ui_agentendpoint_probe", args=[endpoint.pk])
    client.force_login(make_user(staff=True))
    assert client.get(report).status_code == 403
    client.force_login(make_user(staff=True, perms=["view_agentendpoint"]))
    page = client.get(report)
    assert page.status_code == 200 and 'data-tool="probe"' not in page.content.decode()
    assert client.post(probe).status_code == 403
    assert client.get(probe).status_code == 405
    assert not Probe.objects.exists()
    missing = reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk + 1000])
    assert client.get(missing).status_code in (302, 404)


def test_staff_see_a_short_conformance_badge_on_each_card_and_others_do_not(client):
    endpoint = make_endpoint(name="Badged agent", slug="badged", observed={"reasoning": True})
    run = a_run(endpoint, file=True)
    record_run(endpoint, run.pk, Observations(), message_id=run.request["message_id"], refused="415")
    client.force_login(make_user(staff=True, everyday=True))
    card = client.get("/").content.decode().split('data-agent="badged"')[1].split("</article>")[0]
    assert "Conformance: 1 undeclared feature" in card
    assert reverse("admin:agents_ui_agentendpoint_conformance", args=[endpoint.pk]) in card
    refreshed = client.get("/agents/badged/card/", headers={"HX-Request": "true"}).content.decode()
    assert "Conformance: 1 undeclared feature" in refreshed

    client.force_login(make_user(everyday=True))
    assert "Conformance:" not in client.get("/").content.decode()
    assert (
        "Conformance:"
        not in client.get("/agents/badged/card/", headers={"HX-Request": "true"}).content.decode()
    )


def test_a_run_that_shows_nothing_new_does_not_read_the_report_again():
    endpoint = make_endpoint()
    declared(endpoint)
    first, second = a_run(endpoint), a_run(endpoint)
    record_run(endpoint, first.pk, Observations(reasoning_seen=True), message_id=None, ended_well=True)
    with CaptureQueriesContext(connection) as queries:
        record_run(endpoint, second.pk, Observations(reasoning_seen=True), message_id=None, ended_well=True)
    assert len(queries) <= 3, [q["sql"][:120] for q in queries]  # what it knew, and the new row
    endpoint.refresh_from_db()
    assert [item["capability"] for item in endpoint.drift] == ["reasoning"]

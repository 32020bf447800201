"""Agent health in the admin: the list's column with its rule, the endpoint's page, the runs it links."""

from __future__ import annotations

from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from agents_ui.admin.health import RULE, Health, health_of, percentile, windows
from agents_ui.models import CapabilitySnapshot, Conversation, Message, Run
from tests.factories import make_endpoint, make_user
from tests.runs.test_runs import finish, new_turn

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("ended", "failed", "last_failed", "health"),
    [
        (0, 0, False, Health.UNUSED),
        (1, 1, True, Health.FAILING),
        (4, 2, True, Health.FAILING),
        (5, 2, True, Health.DEGRADED),
        (10, 2, False, Health.DEGRADED),
        (10, 1, False, Health.HEALTHY),
        (3, 0, False, Health.HEALTHY),
    ],
)
def test_the_health_rule(ended, failed, last_failed, health):
    assert health_of(ended, failed, last_failed) == health


def test_percentiles_are_nearest_rank():
    values = [float(n) for n in range(1, 101)]
    assert percentile(values, 0.5) == 50 and percentile(values, 0.95) == 95
    assert percentile([3.0], 0.95) == 3 and percentile([], 0.5) is None


def ended_run(
    endpoint, status=Run.Status.COMPLETED, *, ago=timedelta(minutes=5), first=0.5, seconds=2.0, **fields
):
    user = make_user()
    conversation = Conversation.objects.create(user=user, endpoint=endpoint)
    finished = timezone.now() - ago
    started = finished - timedelta(seconds=seconds)
    return Run.objects.create(
        conversation=conversation,
        status=status,
        started_at=started,
        first_event_at=started + timedelta(seconds=first) if first is not None else None,
        finished_at=finished,
        **fields,
    )


def test_the_list_shows_each_agents_health_and_the_rule_beside_it(admin_client):
    failing, healthy, unused, degraded = (make_endpoint(name=name) for name in ("F", "H", "U", "D"))
    ended_run(failing, Run.Status.FAILED, error="The agent cannot be reached.")
    ended_run(healthy)
    ended_run(healthy, ago=timedelta(days=3), status=Run.Status.FAILED)  # outside the day
    for _ in range(3):
        ended_run(degraded)
    ended_run(degraded, Run.Status.FAILED, ago=timedelta(minutes=1))
    html = admin_client.get("/admin/agents_ui/agentendpoint/").content.decode()
    assert RULE in html
    for endpoint, health in [
        (failing, "failing"),
        (healthy, "healthy"),
        (unused, "unused"),
        (degraded, "degraded"),
    ]:
        url = f"/admin/agents_ui/agentendpoint/{endpoint.pk}/health/"
        assert f'<a href="{url}"><span class="agent-health agent-health-{health}"' in html, health
    assert 'title="1 of 4 runs that ended in the last day failed"' in html


def test_the_health_page_shows_each_window_its_failures_tokens_and_discoveries(admin_client):
    endpoint = make_endpoint(name="Weather", credential="s3cret-key", auth_kind="bearer")
    ended_run(endpoint, first=0.2, seconds=1.0, usage={"input_tokens": 100, "output_tokens": 20})
    ended_run(endpoint, first=0.4, seconds=3.0, ago=timedelta(hours=5), usage={"input_tokens": 50})
    failed = ended_run(endpoint, Run.Status.FAILED, ago=timedelta(days=2), first=None,
                       error="The agent answered 500: s3cret-key")  # fmt: skip
    ended_run(endpoint, ago=timedelta(days=9))  # older than a week: not counted
    CapabilitySnapshot.objects.create(
        endpoint=endpoint, status="unreachable", content_hash="h", source="http://x", error="refused",
        last_seen_at=timezone.now(),
    )  # fmt: skip
    hour, day, week = windows(endpoint)
    assert (hour.ended, day.ended, week.ended) == (1, 2, 3)
    assert (week.failed, week.success_rate, week.health) == (1, "67%", Health.DEGRADED)
    assert day.health == Health.HEALTHY
    assert day.first_event_p50 == "0.20 s" and day.first_event_p95 == "0.40 s"
    assert day.duration_p95 == "3.00 s" and day.tokens == {"input_tokens": 150, "output_tokens": 20}

    page = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/health/")
    html = page.content.decode()
    assert page.status_code == 200 and "Health: Weather" in html
    assert f'href="/admin/agents_ui/run/{failed.pk}/change/"' in html
    assert "The agent answered 500: [credential]" in html and "s3cret-key" not in html
    assert "Input tokens" in html and "150" in html
    assert "Unreachable" in html and "refused" in html
    change = admin_client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/").content.decode()
    assert f'href="/admin/agents_ui/agentendpoint/{endpoint.pk}/health/"' in change


def test_a_run_page_shows_how_it_went_and_not_what_was_said(admin_client):
    endpoint = make_endpoint()
    run = ended_run(
        endpoint, Run.Status.FAILED, error="The agent cannot be reached.", usage={"input_tokens": 7}
    )
    Message.objects.create(conversation=run.conversation, run=run, role="user", content="my secret diary")
    html = admin_client.get(f"/admin/agents_ui/run/{run.pk}/change/").content.decode()
    assert "The agent cannot be reached." in html and "0.50 s" in html and "2.00 s" in html
    assert "my secret diary" not in html
    assert admin_client.post(f"/admin/agents_ui/run/{run.pk}/delete/").status_code == 403


def test_staff_without_the_view_permission_see_no_health_page(client):
    endpoint = make_endpoint()
    client.force_login(make_user(staff=True))
    assert client.get(f"/admin/agents_ui/agentendpoint/{endpoint.pk}/health/").status_code in (403, 404)


@pytest.mark.django_db(transaction=True)
async def test_one_failed_run_makes_an_unused_agent_failing():
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent", connect_timeout=0.5)
    assert (await sync_to_async(windows)(endpoint))[1].health == Health.UNUSED
    run = await finish(await new_turn(endpoint))
    assert run.status == Run.Status.FAILED
    day = (await sync_to_async(windows)(endpoint))[1]
    assert day.health == Health.FAILING and day.duration and not day.first_event


def test_the_health_column_costs_no_query_per_row(admin_client):
    def queries_for_list() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert admin_client.get("/admin/agents_ui/agentendpoint/").status_code == 200
        return len(captured)

    ended_run(make_endpoint(), Run.Status.FAILED)
    few = queries_for_list()
    for _ in range(4):
        ended_run(make_endpoint())
    assert queries_for_list() == few

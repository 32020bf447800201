"""Hostile agents: each attack of the fault agent met by the product's bounds, with nothing lost.

Each test records the `fault` it tried, so `make reliability` lists it among the faults survived. The
bounds are set small here (a run of 2 MB, a second of silence) so each attack takes a second or so;
their defaults and where they are set are in docs/security.md.
"""

from __future__ import annotations

import asyncio
import json
import time
import tracemalloc

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from agents_ui.models import Message, Run
from tests.factories import make_user
from tests.support.fault_agent import SAID_AFTER, SAID_BEFORE
from tests.support.htmx import HtmxClient
from tests.support.waiting import settle
from tests.test_faults import (
    COMPLETED,
    FAILED,
    MEMORY_LIMIT,
    assert_next_request_works,
    fault_agent,
    fault_endpoint,
    follow,
    person,
    send,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["fault_agent", "person"]  # the fixtures, imported so pytest finds them here

RUN_BYTES = 2 * 1024 * 1024


@pytest.fixture(autouse=True)
def small_bounds(settings):
    settings.AGENTS_UI_RUN_MAX_BYTES = RUN_BYTES
    settings.AGENTS_UI_RUN_IDLE_SECONDS = 1.0


async def said(run_id: str) -> list[str]:
    return [m.content async for m in Message.objects.filter(run_id=run_id, role="assistant")]


async def attacked(fault_agent, person, fault: str, question: str = "Hello?", **fields):
    """Send one message to the fault; (the run, its live stream, the peak memory the run allocated)."""
    endpoint = await fault_endpoint(fault_agent, fault, **fields)
    tracemalloc.start()
    try:
        base, _ = tracemalloc.get_traced_memory()
        run_id = await send(person, endpoint.slug, question)
        stream = await follow(person, run_id, limit=20)
        await settle(20)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert stream.rstrip().endswith("event: done\ndata:"), stream[-500:]
    assert await Message.objects.filter(role="user", content=question).aexists()
    return await Run.objects.select_related("conversation__endpoint").aget(pk=run_id), stream, peak - base


async def test_a_never_ending_answer_is_cut_at_the_run_limit(fault_agent, person, record_property):
    record_property("fault", "endless")
    run, stream, peak = await attacked(fault_agent, person, "endless")
    assert run.status == FAILED
    assert run.error == "The agent sent more than 2 MB in one run; the answer was cut there."
    assert f"{run.error} What the agent said before is kept." in stream
    assert SAID_BEFORE in await said(run.pk)
    assert peak < MEMORY_LIMIT, f"peak {peak:,} bytes"
    # The conversation it leaves opens fast, showing the end of the huge answer with a note.
    started = time.monotonic()
    page = await person.get(run.conversation.get_absolute_url())
    assert page.status_code == 200 and time.monotonic() - started < 1
    await assert_next_request_works(person, fault_agent)


async def test_a_frame_dripping_for_ever_meets_the_idle_limit(fault_agent, person, record_property):
    record_property("fault", "drip-forever")
    started = time.monotonic()
    run, _, _ = await attacked(fault_agent, person, "drip-forever?delay=0.05")
    assert run.status == FAILED and "sent no complete event for 1 second" in run.error
    assert time.monotonic() - started < 10
    assert await said(run.pk) == [SAID_BEFORE]
    await assert_next_request_works(person, fault_agent)


async def test_patch_amplification_keeps_the_last_good_state(fault_agent, person, record_property):
    record_property("fault", "patch-amplification")
    run, stream, peak = await attacked(fault_agent, person, "patch-amplification")
    assert run.status == COMPLETED
    assert peak < MEMORY_LIMIT, f"peak {peak:,} bytes"
    assert len(json.dumps(run.state)) <= 1024 * 1024
    assert len(stream) < 8 * 1024 * 1024  # the browser is not sent the amplified state
    assert await said(run.pk) == [SAID_BEFORE]
    await assert_next_request_works(person, fault_agent)


async def test_nesting_ten_thousand_deep_breaks_no_page(fault_agent, person, record_property):
    record_property("fault", "deep-nesting")
    endpoint = await fault_endpoint(fault_agent, "deep-nesting")
    other = AsyncClient()
    await other.aforce_login(await sync_to_async(make_user)())
    assert (await other.get("/")).status_code == 200  # the catalogue, for someone else
    workspace = (await person.get(f"/agents/{endpoint.slug}/")).content.decode()
    assert "declaration is invalid" in workspace
    run_id = await send(person, endpoint.slug, "Deep?")
    await settle()
    run = await Run.objects.aget(pk=run_id)
    assert run.status in (FAILED, COMPLETED) and "Recursion" not in run.error
    assert await said(run_id) == [SAID_BEFORE]
    assert (await person.get(f"/agents/{endpoint.slug}/c/{run.conversation_id}/")).status_code == 200
    await assert_next_request_works(person, fault_agent)


async def decide_with_edit(person: HtmxClient, run: Run, edited: dict):
    return await person.post(
        f"/runs/{run.pk}/decide/", {"decision-ask-1": "edit", "edited-ask-1": json.dumps(edited)}
    )


async def test_a_schema_ref_to_a_local_server_is_never_fetched(
    fault_agent, fake_server, person, record_property
):
    record_property("fault", "schema-ref")
    fetched = []

    async def local_service(exchange):
        fetched.append(str(exchange.request.url))
        exchange.respond(200, {"type": "string"})

    local = await fake_server(local_service)
    person_user = await sync_to_async(make_user)(perms=["approve_actions"])
    await person.aforce_login(person_user)
    run, _, _ = await attacked(fault_agent, person, f"schema-ref?ref={local.url}/schema.json")
    assert run.status == Run.Status.INTERRUPTED
    answer = (await decide_with_edit(person, run, {"to": "b"})).content.decode()
    assert "never fetched" in answer and fetched == []
    assert await Run.objects.acount() == 1


async def test_a_backtracking_pattern_does_not_stall_the_server(fault_agent, person, record_property):
    record_property("fault", "redos")
    await person.aforce_login(await sync_to_async(make_user)(perms=["approve_actions"]))
    run, _, _ = await attacked(fault_agent, person, "redos")
    started = asyncio.get_running_loop().time()
    answer = (await decide_with_edit(person, run, {"to": "a" * 40 + "!"})).content.decode()
    assert asyncio.get_running_loop().time() - started < 3 and "do not fit" in answer


async def test_a_frame_that_is_not_utf8_loses_only_itself(fault_agent, person, record_property):
    record_property("fault", "bad-utf8")
    run, _, _ = await attacked(fault_agent, person, "bad-utf8")
    assert run.status == COMPLETED
    assert await said(run.pk) == [SAID_BEFORE, SAID_AFTER]
    await assert_next_request_works(person, fault_agent)


async def test_a_redirect_to_another_port_never_gets_the_credential(
    fault_agent, fake_server, person, record_property
):
    record_property("fault", "redirect-port")
    seen = []

    async def other_port(exchange):
        seen.append(dict(exchange.request.headers))
        exchange.respond(404, {"error": {"code": "not_found", "message": "nothing here"}})

    other = await fake_server(other_port)
    run, _, _ = await attacked(
        fault_agent,
        person,
        f"redirect-port?to={other.url}/fault/ok/",
        auth_kind="bearer",
        credential="s3cret-key",
    )
    assert run.status == FAILED
    assert all("s3cret-key" not in json.dumps(headers) for headers in seen)
    await assert_next_request_works(person, fault_agent)

"""A request's synchronous parts run on a thread kept from one request to the next: every part of
one request on the same thread, the next request on that thread again, two at once on two threads,
and a request that did not end normally leaves its thread to end."""

from __future__ import annotations

import asyncio
import threading

import httpx
import pytest

from project.asgi import AgentsUIASGIHandler, OneTrip, RequestThreads

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def threads_seen(monkeypatch) -> list[tuple[str, int]]:
    """The thread each OneTrip ran on, in order: ("in", ident) and ("out", ident)."""
    seen: list[tuple[str, int]] = []
    requests, responses = OneTrip._requests, OneTrip._responses

    def on_the_way_in(self, request):
        seen.append(("in", threading.get_ident()))
        return requests(self, request)

    def on_the_way_out(self, request, response, entered):
        seen.append(("out", threading.get_ident()))
        return responses(self, request, response, entered)

    monkeypatch.setattr(OneTrip, "_requests", on_the_way_in)
    monkeypatch.setattr(OneTrip, "_responses", on_the_way_out)
    return seen


async def _get(handler: AgentsUIASGIHandler, path: str = "/accounts/login/") -> httpx.Response:
    transport = httpx.ASGITransport(app=handler)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return await client.get(path)


async def test_one_request_keeps_one_thread_and_the_next_request_gets_it_again(threads_seen):
    handler = AgentsUIASGIHandler()
    assert (await _get(handler)).status_code == 200
    assert (await _get(handler)).status_code == 200
    idents = {ident for _, ident in threads_seen}
    assert [way for way, _ in threads_seen] == ["in", "out", "in", "out"]
    assert len(idents) == 1 and threading.get_ident() not in idents
    assert handler.threads.idle == 1


async def test_two_requests_at_once_run_on_two_threads(threads_seen, monkeypatch):
    handler = AgentsUIASGIHandler()
    both_in = threading.Barrier(2, timeout=10)
    requests = OneTrip._requests

    def meet(self, request):  # each waits on its thread for the other: only two threads get past
        both_in.wait()
        return requests(self, request)

    monkeypatch.setattr(OneTrip, "_requests", meet)
    first, second = await asyncio.gather(_get(handler), _get(handler))
    assert first.status_code == second.status_code == 200
    outs = [ident for way, ident in threads_seen if way == "out"]
    assert len(set(outs)) == 2
    assert handler.threads.idle == 2


async def test_a_request_that_raises_leaves_its_thread_to_end(monkeypatch):
    handler = AgentsUIASGIHandler()

    async def broken(scope, receive, send):
        raise RuntimeError("the server broke")

    monkeypatch.setattr(handler, "handle", broken)
    with pytest.raises(RuntimeError):
        await _get(handler)
    assert handler.threads.idle == 0


def test_the_threads_kept_are_bounded_and_a_thread_given_back_to_end_ends():
    threads = RequestThreads()
    leased = [threads.lease() for _ in range(RequestThreads.KEEP + 2)]
    assert len(set(map(id, leased))) == len(leased)  # none idle: each lease a thread of its own
    idents = [thread.submit(threading.get_ident).result(timeout=10) for thread in leased]
    for thread in leased:
        threads.give_back(thread)
    assert threads.idle == RequestThreads.KEEP
    again = threads.lease()
    assert again in leased[: RequestThreads.KEEP]
    assert again.submit(threading.get_ident).result(timeout=10) in idents  # the same thread, kept
    threads.give_back(again, reusable=False)
    assert threads.idle == RequestThreads.KEEP - 1
    with pytest.raises(RuntimeError):  # shut down: it takes no more work
        again.submit(threading.get_ident)

"""Django's synchronous middleware runs in one trip to the request's thread each way, with the
outcome of Django's own chain: the same answers, headers and cookies, the same calls in the same
order when a middleware answers early or raises."""

from __future__ import annotations

import re
from collections import Counter

import httpx
import pytest
from asgiref.sync import SyncToAsync
from django.core.handlers.asgi import ASGIHandler
from django.http import HttpResponse
from django.utils.deprecation import MiddlewareMixin

from project.asgi import AgentsUIASGIHandler, OneTrip

pytestmark = pytest.mark.django_db(transaction=True)


async def _request(
    handler: ASGIHandler, method: str, path: str, cookies: dict[str, str] | None = None, **kwargs
) -> httpx.Response:
    transport = httpx.ASGITransport(app=handler)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", cookies=cookies) as client:
        return await client.request(method, path, **kwargs)


@pytest.fixture
def trips(monkeypatch) -> Counter:
    """What each request sent to a thread, by the function's name."""
    seen: Counter = Counter()
    call = SyncToAsync.__call__

    async def counted(self, *args, **kwargs):
        seen[getattr(self.func, "__qualname__", None) or type(self.func).__name__] += 1
        return await call(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counted)
    return seen


async def test_the_middleware_of_a_page_goes_to_its_thread_once_each_way(trips):
    response = await _request(AgentsUIASGIHandler(), "GET", "/accounts/login/")
    assert response.status_code == 200
    assert trips["OneTrip._requests"] == 1 and trips["OneTrip._responses"] == 1
    one_by_one = [name for name in trips if name.endswith(("process_request", "process_response"))]
    assert one_by_one == []
    # Each middleware still did its part: security headers, the CSP, the CSRF cookie.
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert "content-security-policy" in response.headers
    assert "csrftoken" in response.cookies


def _shape(response: httpx.Response) -> tuple:
    """What a response is, leaving out what differs on every request (dates, nonces, tokens)."""
    headers = {
        name: re.sub(r"'nonce-[^']+'", "'nonce'", value)
        for name, value in response.headers.items()
        if name not in {"date", "set-cookie", "content-length"}
    }
    return response.status_code, headers, sorted(response.cookies.keys())


@pytest.mark.parametrize(
    ("method", "path", "kwargs"),
    [
        ("GET", "/accounts/login/", {}),
        ("GET", "/", {}),  # sign-in needed: a redirect
        ("POST", "/accounts/login/", {"data": {"username": "x", "password": "y"}}),  # no CSRF token: 403
        ("GET", "/accounts/login/", {"headers": {"host": "evil.example"}}),  # a host not allowed: 400
        ("GET", "/no/such/page/", {}),
        ("GET", "/healthz", {}),
    ],
    ids=["page", "sign-in-needed", "csrf-refused", "host-refused", "not-found", "probe"],
)
async def test_the_answers_are_those_of_djangos_own_chain(method, path, kwargs):
    ours = await _request(AgentsUIASGIHandler(), method, path, **kwargs)
    djangos = await _request(ASGIHandler(), method, path, **kwargs)
    assert _shape(ours) == _shape(djangos)


CALLS: list[str] = []


class Recording(MiddlewareMixin):
    name = ""
    answers = raises_in = raises_out = False

    def process_request(self, request):
        CALLS.append(f"{self.name}.in")
        if self.raises_in and request.path.endswith("/raise-in/"):
            raise ValueError("in")
        if self.answers and request.path.endswith("/answer/"):
            return HttpResponse("answered early", status=299)
        return None

    def process_response(self, request, response):
        CALLS.append(f"{self.name}.out:{response.status_code}")
        if self.raises_out and request.path.endswith("/raise-out/"):
            raise ValueError("out")
        return response


class Outer(Recording):
    name = "outer"


class Middle(Recording):
    name = "middle"
    answers = raises_in = True


class Inner(Recording):
    name = "inner"
    raises_out = True


@pytest.mark.parametrize("path", ["/accounts/login/", "/x/answer/", "/x/raise-in/", "/x/raise-out/"])
async def test_answers_and_errors_go_through_the_same_hooks_in_the_same_order(settings, path):
    settings.MIDDLEWARE = [f"{__name__}.Outer", f"{__name__}.Middle", f"{__name__}.Inner"]
    seen = {}
    for handler_class in (AgentsUIASGIHandler, ASGIHandler):
        CALLS.clear()
        handler = handler_class()
        response = await _request(handler, "GET", path)
        seen[handler_class.__name__] = (response.status_code, list(CALLS))
    assert isinstance(AgentsUIASGIHandler()._middleware_chain.__wrapped__, OneTrip)  # type: ignore[attr-defined]
    assert seen["AgentsUIASGIHandler"] == seen["ASGIHandler"]


# --- The person signed in ------------------------------------------------------------------------


async def _signed_in_cookies() -> dict[str, str]:
    from asgiref.sync import sync_to_async
    from django.test import Client

    from tests.factories import PASSWORD, make_user

    def sign_in() -> dict[str, str]:
        user = make_user(everyday=True)
        client = Client()
        assert client.login(username=user.username, password=PASSWORD)
        return {name: morsel.value for name, morsel in client.cookies.items()}

    return await sync_to_async(sign_in)()


async def test_the_person_is_read_in_the_middlewares_trip_and_auser_costs_nothing_after(trips):
    cookies = await _signed_in_cookies()
    trips.clear()
    response = await _request(AgentsUIASGIHandler(), "GET", "/", cookies=cookies)
    assert response.status_code == 200  # the catalogue, signed in
    # Django's auser() reads the session and then the person, each a QuerySet.aget: a trip each.
    assert "QuerySet.get" not in trips, dict(trips)


async def test_reading_the_person_leaves_nothing_for_the_cycle_collector(settings):
    import gc

    settings.DEBUG = False  # DEBUG keeps every query's text on the connection
    cookies = await _signed_in_cookies()
    handler = AgentsUIASGIHandler()
    await _request(handler, "GET", "/", cookies=cookies)  # what a first request loads and keeps
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        await _request(handler, "GET", "/", cookies=cookies)
        gc.collect()
        kinds = {type(found).__name__ for found in gc.garbage}
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    # Django's own auser() left an AttributeError whose traceback held the request's frames. (What
    # is left is Django's handler's own: the exception class it makes for each request it ends.)
    assert "AttributeError" not in kinds


def test_sign_in_and_out_change_who_auser_answers(client):
    from tests.factories import PASSWORD, make_user

    user = make_user(everyday=True)
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})
    assert response.status_code == 302
    assert client.get("/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302

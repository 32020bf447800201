"""/healthz, /readyz and /metrics, answered before any other middleware (docs/operations.md).

Probes and scrapers come by a pod's address or a bare host name, over plain HTTP inside the
cluster, with no cookie: answered first, they skip the host check (ALLOWED_HOSTS), the HTTPS
redirect, sessions, sign-in and CSRF, and never touch a session. Every other request passes with
one dictionary lookup.

/metrics is off (404) until AGENTS_UI_METRICS_TOKEN or AGENTS_UI_METRICS_NETWORKS is set; with
both, a scrape needs both.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from asgiref.sync import iscoroutinefunction, sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.decorators import sync_and_async_middleware

from agents_ui.monitoring import health, metrics, readings


def _plain(text: str, status: int = 200, **headers: str) -> HttpResponse:
    response = HttpResponse(f"{text}\n", content_type="text/plain; charset=utf-8", status=status)
    response["Cache-Control"] = "no-store"
    response["X-Content-Type-Options"] = "nosniff"
    for name, value in headers.items():
        response[name.replace("_", "-")] = value
    return response


def healthz(request: HttpRequest) -> HttpResponse:
    return _plain("ok")


def readyz(request: HttpRequest) -> HttpResponse:
    return _plain("ok") if health.ready() else _plain("unavailable", 503)


@lru_cache(maxsize=8)
def _networks(cidrs: tuple[str, ...]) -> tuple[Any, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def metrics_refusal(request: HttpRequest) -> HttpResponse | None:
    """Why this scrape is refused, or None when it may read the metrics."""
    token: str = settings.AGENTS_UI_METRICS_TOKEN
    cidrs = tuple(settings.AGENTS_UI_METRICS_NETWORKS)
    if not token and not cidrs:
        return _plain("Not found", 404)
    if cidrs:
        try:
            address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
        except ValueError:
            return _plain("Forbidden", 403)
        if not any(address in network for network in _networks(cidrs)):
            return _plain("Forbidden", 403)
    if token:
        given = request.META.get("HTTP_AUTHORIZATION", "")
        if not hmac.compare_digest(given.encode(), f"Bearer {token}".encode()):
            return _plain("Unauthorized", 401, WWW_Authenticate='Bearer realm="metrics"')
    return None


def metrics_page(request: HttpRequest) -> HttpResponse:
    refusal = metrics_refusal(request)
    if refusal is not None:
        return refusal
    response = HttpResponse(metrics.exposition(readings.READINGS), content_type=metrics.CONTENT_TYPE)
    response["Cache-Control"] = "no-store"
    return response


# Path -> (its answer, whether it reads the database and so runs in a thread).
ANSWERS: dict[str, tuple[Callable[[HttpRequest], HttpResponse], bool]] = {
    "/healthz": (healthz, False),
    "/readyz": (readyz, True),
    "/metrics": (metrics_page, True),
}


def _answer(request: HttpRequest) -> tuple[Callable[[HttpRequest], HttpResponse], bool] | None:
    found = ANSWERS.get(request.path_info)
    if found is not None and request.method not in ("GET", "HEAD"):
        return (lambda request: _plain("Method not allowed", 405, Allow="GET, HEAD")), False
    return found


@sync_and_async_middleware
def operations_middleware(get_response: Callable) -> Callable:
    if iscoroutinefunction(get_response):

        async def middleware(request: HttpRequest) -> HttpResponse:
            found = _answer(request)
            if found is None:
                return await get_response(request)
            answer, in_thread = found
            return await sync_to_async(answer)(request) if in_thread else answer(request)

    else:

        def middleware(request: HttpRequest) -> HttpResponse:
            found = _answer(request)
            return get_response(request) if found is None else found[0](request)

    return middleware

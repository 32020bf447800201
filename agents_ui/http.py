"""The one place the product makes HTTP clients for talking to agents.

Every request to an agent (discovery, prepare, runs, uploads) goes through a client made here, so
every one of them passes the address guard (agents_ui.sdk.guard): loopback, private, link-local and
cloud-metadata addresses are refused unless settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES allows the
first three, and at most MAX_REDIRECTS redirects are followed, each one checked again.
"""

from __future__ import annotations

import functools
import ssl

import httpx
from django.conf import settings

from agents_ui.sdk.guard import GuardedTransport
from agents_ui.sdk.stream_transport import StreamingHTTPTransport

MAX_REDIRECTS = 3


def allow_private_addresses() -> bool:
    """Whether agents may live on loopback and private networks (development, the demo agents)."""
    return bool(getattr(settings, "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES", settings.DEBUG))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle costs tens of milliseconds."""
    return httpx.create_ssl_context(trust_env=False)


def agent_http_client(
    *,
    allow_private: bool | None = None,
    inner: httpx.AsyncBaseTransport | None = None,
    pooled: bool = True,
) -> httpx.AsyncClient:
    """A client for agent traffic: guarded, at most MAX_REDIRECTS redirects, a generous pool.

    `pooled=False`: a client for one request at a time, each on a connection of its own (a run,
    whose answer is a long stream of small events; one agent's discovery). It uses
    StreamingHTTPTransport, which costs a fraction of httpcore's CPU per request and per event.
    `allow_private` defaults to the setting; `inner` replaces the network transport (tests).
    `trust_env=False`: no proxy from the environment (the proxy would resolve the host, not the
    guard) and no ~/.netrc credentials added to an agent's requests.
    """
    if inner is None and not pooled:
        inner = StreamingHTTPTransport(verify=tls_context())
    elif inner is None:
        inner = httpx.AsyncHTTPTransport(
            # Idle connections are dropped before the 5 s keep-alive many servers use, so a request is
            # never sent on a connection the agent is closing.
            limits=httpx.Limits(max_connections=200, max_keepalive_connections=50, keepalive_expiry=2.0),
            trust_env=False,
            verify=tls_context(),
        )
    guarded = GuardedTransport(
        inner,
        allow_private=allow_private_addresses() if allow_private is None else allow_private,
        max_redirects=MAX_REDIRECTS,
    )
    # One more than the guard's limit, so the guard's clear ConnectError wins over TooManyRedirects.
    return httpx.AsyncClient(
        transport=guarded, follow_redirects=True, max_redirects=MAX_REDIRECTS + 1, trust_env=False
    )

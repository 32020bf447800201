"""The one place the product makes HTTP clients for talking to agents.

Every request to an agent (discovery, prepare, runs, uploads) goes through a client made here, so
every one of them passes the address guard (agents_ui.sdk.guard): loopback, private, link-local and
cloud-metadata addresses are refused unless settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES allows the
first three, and at most MAX_REDIRECTS redirects are followed, each one checked again.

Two kinds of client, for two kinds of traffic:
- `agent_client()`: many short requests, possibly at once (prepare, approvals, feedback, the admin's
  checks), on a shared pool of connections;
- `streaming_agent_client()`: one request at a time, on a connection of its own (a run's long event
  stream, one agent's discovery), through StreamingHTTPTransport, which costs a fraction of
  httpcore's CPU per request and per event.
`trust_env=False` for both: no proxy from the environment (the proxy would resolve the host, not the
guard) and no ~/.netrc credentials added to an agent's requests.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections import OrderedDict
from collections.abc import Callable

import httpx
from django.conf import settings

from agents_ui.models import AgentEndpoint
from agents_ui.sdk import AgUiAgent, ExternalAgentClient
from agents_ui.sdk.a2a.client import A2AAgent
from agents_ui.sdk.guard import GuardedTransport
from agents_ui.sdk.stream_transport import StreamingHTTPTransport

MAX_REDIRECTS = 3


def allow_private_addresses() -> bool:
    """Whether agents may live on loopback and private networks (development, the demo agents)."""
    return bool(getattr(settings, "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES", settings.DEBUG))


@functools.cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle is slow."""
    return httpx.create_ssl_context(trust_env=False)


def agent_client(
    *, allow_private: bool | None = None, inner: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A pooled client, for short requests that may overlap.

    `allow_private` defaults to the setting; `inner` replaces the network transport (tests).
    """
    return _guarded(inner or PoolPerName(_pool), allow_private)


def _pool() -> httpx.AsyncHTTPTransport:
    return httpx.AsyncHTTPTransport(
        # Idle connections are dropped before the 5 s keep-alive many servers use, so a request is
        # never sent on a connection the agent is closing.
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=50, keepalive_expiry=2.0),
        trust_env=False,
        verify=tls_context(),
    )


class PoolPerName(httpx.AsyncBaseTransport):
    """One connection pool per TLS name.

    The guard sends each request to the address it checked, with the host's name for TLS in
    `sni_hostname`; httpcore pools connections by the URL's address, so two agents behind one
    address (a CDN) would otherwise share a TLS connection made for the other's name. Plain http
    shares one pool (the Host header names the agent on every request). Past `MAX_NAMES` names the
    least recently used pool is closed.
    """

    MAX_NAMES = 128

    def __init__(self, make: Callable[[], httpx.AsyncBaseTransport]) -> None:
        self._make = make
        self._pools: OrderedDict[str, httpx.AsyncBaseTransport] = OrderedDict()
        self._closing: set[asyncio.Task] = set()

    def _for(self, name: str) -> httpx.AsyncBaseTransport:
        pool = self._pools.get(name)
        if pool is None:
            pool = self._pools[name] = self._make()
            if len(self._pools) > self.MAX_NAMES:
                _, oldest = self._pools.popitem(last=False)
                task = asyncio.get_running_loop().create_task(oldest.aclose())
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
        self._pools.move_to_end(name)
        return pool

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._for(request.extensions.get("sni_hostname") or "").handle_async_request(request)

    async def aclose(self) -> None:
        pools, self._pools = list(self._pools.values()), OrderedDict()
        for pool in pools:
            await pool.aclose()


def streaming_agent_client(
    *, allow_private: bool | None = None, inner: httpx.AsyncBaseTransport | None = None
) -> httpx.AsyncClient:
    """A client for one request at a time, each on a connection of its own: cheap per event.

    `allow_private` defaults to the setting; `inner` replaces the network transport (tests).
    """
    return _guarded(inner or StreamingHTTPTransport(verify=tls_context()), allow_private)


def _guarded(inner: httpx.AsyncBaseTransport, allow_private: bool | None) -> httpx.AsyncClient:
    guarded = GuardedTransport(
        inner,
        allow_private=allow_private_addresses() if allow_private is None else allow_private,
        max_redirects=MAX_REDIRECTS,
    )
    # One more than the guard's limit, so the guard's clear ConnectError wins over TooManyRedirects.
    return httpx.AsyncClient(
        transport=guarded, follow_redirects=True, max_redirects=MAX_REDIRECTS + 1, trust_env=False
    )


def sdk_client(
    endpoint: AgentEndpoint, client: httpx.AsyncClient
) -> AgUiAgent | ExternalAgentClient | A2AAgent:
    """The SDK client for an endpoint, carrying its credential (server-side only)."""
    timeout = httpx.Timeout(endpoint.read_timeout, connect=endpoint.connect_timeout)
    headers = endpoint.auth_headers()
    # One run's bounds, from settings: what it may send, its wait for a whole event, its length.
    limits = {
        "max_total_bytes": settings.AGENTS_UI_RUN_MAX_BYTES,
        "event_idle_timeout": max(settings.AGENTS_UI_RUN_IDLE_SECONDS, endpoint.read_timeout),
        "run_time_limit": settings.AGENTS_UI_RUN_MAX_SECONDS,
    }
    if endpoint.protocol == AgentEndpoint.Protocol.A2A:
        return A2AAgent(
            endpoint.base_url,
            headers=headers,
            timeout=timeout,
            client=client,
            card_url=endpoint.discovery_url or None,
            **limits,
        )
    if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL:
        return ExternalAgentClient(
            endpoint.base_url,
            headers=headers,
            timeout=timeout,
            client=client,
            policy_url=endpoint.discovery_url or None,
            **limits,
        )
    return AgUiAgent(
        endpoint.base_url,
        headers=headers,
        timeout=timeout,
        client=client,
        discovery_url=endpoint.discovery_url or None,
        **limits,
    )

"""The one place the product makes HTTP clients for talking to agents."""

from __future__ import annotations

import httpx


def agent_http_client() -> httpx.AsyncClient:
    """A client for agent traffic: no automatic redirects, generous connection pool."""
    return httpx.AsyncClient(
        follow_redirects=False,
        limits=httpx.Limits(max_connections=200, max_keepalive_connections=50),
    )

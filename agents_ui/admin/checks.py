"""Asking agents now, from the admin: test a connection, re-discover, and say what happened.

A test asks each discovery route once and records nothing; a re-discovery refreshes what users see
and records a snapshot when the answer changed. Every message is scrubbed of a credential the agent
may have echoed back.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

import httpx
from django.contrib import messages

from agents_ui.admin.listing import age
from agents_ui.endpoints import discovery as discovery_service
from agents_ui.endpoints.clients import agent_client
from agents_ui.models import AgentEndpoint, CapabilitySnapshot

Status = CapabilitySnapshot.Status

# An action on more agents than this reports a summary, and a line only for those needing a look.
SUMMARY_AFTER = 3


@dataclass(frozen=True)
class ConnectionCheck:
    endpoint: AgentEndpoint
    discovery: discovery_service.Discovery
    elapsed_ms: int

    @property
    def content_hash(self) -> str:
        # The same hash the snapshot of this answer has (or will have), so the admin can match them.
        return discovery_service.content_hash(self.discovery)


async def check_connections(endpoints: Iterable[AgentEndpoint]) -> list[ConnectionCheck]:
    """Ask each discovery route once, now, and time it. Nothing is recorded or cached: a check."""

    async def one(endpoint: AgentEndpoint, client: httpx.AsyncClient) -> ConnectionCheck:
        started = time.perf_counter()
        found = await discovery_service.probe(endpoint, client)
        return ConnectionCheck(endpoint, found, round((time.perf_counter() - started) * 1000))

    async with agent_client() as client:
        return list(await asyncio.gather(*(one(endpoint, client) for endpoint in endpoints)))


def _what_it_declared(endpoint: AgentEndpoint) -> str:
    if endpoint.protocol == AgentEndpoint.Protocol.A2A:
        return "an Agent Card"
    return "a policy" if endpoint.protocol == AgentEndpoint.Protocol.EXTERNAL else "capabilities"


def connection_message(check: ConnectionCheck) -> tuple[int, str]:
    endpoint, found, ms = check.endpoint, check.discovery, check.elapsed_ms
    if found.status == Status.UNREACHABLE:
        return messages.ERROR, endpoint.scrub(f"{endpoint.name}: unreachable after {ms} ms: {found.error}")
    head = f"{endpoint.name}: reachable in {ms} ms; "
    if found.status == Status.DECLARED:
        text = f"declared {_what_it_declared(endpoint)} (hash {check.content_hash[:8]})"
        return messages.SUCCESS, head + text
    if found.status == Status.NONE:
        text = f"no discovery at {found.source_url} (capabilities unknown, a normal state)"
        return messages.WARNING, head + text
    if found.status == Status.UNSUPPORTED:
        return messages.WARNING, endpoint.scrub(head + f"no interface this product can use: {found.error}")
    if found.status == Status.UNTRUSTED:
        return messages.WARNING, endpoint.scrub(head + f"signature required: {found.error}")
    return messages.WARNING, endpoint.scrub(head + f"invalid declaration: {found.error}")


def rediscovery_message(
    endpoint: AgentEndpoint, found: discovery_service.Discovery, since: datetime
) -> tuple[int, str]:
    snapshot = endpoint.snapshots.order_by("-last_seen_at", "-pk").first()
    short = snapshot.content_hash[:8] if snapshot else ""
    if snapshot is not None and snapshot.first_seen_at >= since:
        news = "a new snapshot was recorded"
    elif snapshot is not None:
        news = f"unchanged since {age(snapshot.first_seen_at)}"
    else:
        news = "nothing recorded"
    if found.status == Status.DECLARED:
        return (
            messages.SUCCESS,
            f"{endpoint.name}: declared {_what_it_declared(endpoint)} (hash {short}); {news}.",
        )
    if found.status == Status.NONE:
        return messages.WARNING, f"{endpoint.name}: no discovery (capabilities unknown); {news}."
    if found.status == Status.INVALID:
        return messages.WARNING, endpoint.scrub(
            f"{endpoint.name}: invalid declaration: {found.error}; {news}."
        )
    if found.status in (Status.UNTRUSTED, Status.UNSUPPORTED):
        return messages.WARNING, endpoint.scrub(
            f"{endpoint.name}: {Status(found.status).label.lower()}: {found.error}; {news}."
        )
    return messages.ERROR, endpoint.scrub(f"{endpoint.name}: unreachable: {found.error}; {news}.")


def summed_up(verb: str, results: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """One message per agent for a few; for many, a summary and a line per agent needing a look."""
    if len(results) <= SUMMARY_AFTER:
        return results
    fine = sum(1 for level, _ in results if level == messages.SUCCESS)
    summary = f"{verb} {len(results)} agents: {fine} declared what they can do" + (
        f", {len(results) - fine} need a look (below)." if fine < len(results) else "."
    )
    overall = messages.SUCCESS if fine == len(results) else messages.WARNING
    return [(overall, summary), *(result for result in results if result[0] != messages.SUCCESS)]

"""Capability discovery: what each endpoint declares, fetched concurrently, cached, kept as history.

Every endpoint is asked at once (a slow agent delays nobody but itself, up to its own timeout), the
answers are cached for AGENTS_UI_DISCOVERY_TTL seconds, and every distinct answer is stored as a
CapabilitySnapshot so admins can see how a declaration changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from functools import cached_property
from typing import Any

import httpx
from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.cache import cache
from django.db import transaction
from django.utils import timezone

from agents_ui.endpoints import card_trust, conformance
from agents_ui.endpoints.card_trust import CardTrust
from agents_ui.endpoints.clients import sdk_client, streaming_agent_client
from agents_ui.endpoints.memo import MISSING, Memo
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.monitoring import metrics
from agents_ui.sdk import SDK_VERSION, AgentCapabilities, AgentError, PublicExternalAgentPolicy
from agents_ui.sdk.a2a.client import A2AAgent, normalised_card
from agents_ui.sdk.a2a.client import pb as a2a_types
from agents_ui.sdk.agui.client import parse_capabilities
from agents_ui.sdk.external.client import parse_policy

logger = logging.getLogger(__name__)

Status = CapabilitySnapshot.Status
AgentCard = a2a_types.AgentCard


@dataclass(frozen=True)
class Discovery:
    """What one endpoint's discovery route answered, as the pages need it."""

    endpoint_id: int
    protocol: str
    status: str
    source_url: str
    checked_at: datetime
    raw: dict[str, Any] | None = None
    error: str = ""
    # When unreachable: the last declaration it did give, and when.
    last_known: dict[str, Any] | None = None
    last_known_at: datetime | None = None
    # Names the declaration the plan is built from (its snapshot's hash): parsed once per process.
    digest: str = ""
    # A2A: what checking the card's signatures found (sdk.a2a.signing.SignatureCheck as JSON), and
    # the extended card asked with the credential ({"payload", "signature"} or {"error"}).
    signature: dict[str, Any] | None = None
    extended: dict[str, Any] | None = None

    @property
    def declaration(self) -> dict[str, Any] | None:
        """The declaration the plan is built from: the current one, or the last known one (an A2A
        agent's extended card when it gave one)."""
        if self.status not in (Status.DECLARED, Status.UNREACHABLE):
            return None
        extended = (self.extended or {}).get("payload")
        if isinstance(extended, dict):
            return extended
        return self.raw if self.status == Status.DECLARED else self.last_known

    @property
    def refused(self) -> bool:
        """The admin's rules refuse this agent (its card must be signed, and is not): not usable."""
        return self.status == Status.UNTRUSTED

    @property
    def in_words(self) -> str:
        """Why discovery failed, for anyone (the technical `error` is for admins)."""
        if self.status == Status.UNREACHABLE:
            if self.error.startswith("No answer within") or "timed out" in self.error.lower():
                return "It did not answer in time."
            return "Nothing answered at its address: it may be stopped, or moved."
        if self.status == Status.INVALID:
            return "Its declaration of what it can do is not valid."
        if self.status == Status.UNSUPPORTED:
            return "It offers only connections this product cannot use."
        if self.status == Status.UNTRUSTED:
            if (self.signature or {}).get("state") == "unsigned":
                return "Its card must be signed, and it is not: an administrator requires a signature."
            return (
                "Its card must be signed, and its signature does not verify with the keys "
                "an administrator set."
            )
        return ""

    @cached_property
    def card(self) -> dict[str, Any] | None:
        """An A2A agent's card in the SDK's 1.0 field names (None when it no longer parses)."""
        if self.protocol != AgentEndpoint.Protocol.A2A or self.declaration is None:
            return None
        return _parse(AgentCard, self.declaration, self.digest)

    @cached_property
    def capabilities(self) -> AgentCapabilities | None:
        if self.protocol != AgentEndpoint.Protocol.AGUI or self.declaration is None:
            return None
        return _parse(AgentCapabilities, self.declaration, self.digest)

    @cached_property
    def policy(self) -> PublicExternalAgentPolicy | None:
        if self.protocol != AgentEndpoint.Protocol.EXTERNAL or self.declaration is None:
            return None
        return _parse(PublicExternalAgentPolicy, self.declaration, self.digest)

    @property
    def needs_newer_client(self) -> bool:
        policy = self.policy
        minimum = policy.sdk.min_version if policy and policy.sdk else None
        return bool(minimum) and _version_tuple(minimum) > _version_tuple(SDK_VERSION)

    @property
    def min_version(self) -> str | None:
        policy = self.policy
        return policy.sdk.min_version if policy and policy.sdk else None


# A declaration's hash names its content: the same one is validated once per process.
_PARSED = Memo("parsed declarations", size=2048)


# The SDK's parsers bound depth and size before any validator recurses into a declaration.
_PARSERS = {
    AgentCapabilities: parse_capabilities,
    PublicExternalAgentPolicy: parse_policy,
    AgentCard: normalised_card,
}


def _parse(model: Any, data: dict[str, Any], digest: str = "") -> Any:
    """The validated declaration (None when it no longer validates)."""
    key = (model.__name__, digest)
    if digest:
        parsed = _PARSED.get(key, MISSING)
        if parsed is not MISSING:
            return parsed
    try:
        parsed = _PARSERS[model](data)
    except AgentError:  # stored as declared, so it validated once; be safe with old snapshots
        logger.warning("a stored declaration no longer validates", exc_info=True)
        parsed = None
    return _PARSED.put(key, parsed) if digest else parsed


def _version_tuple(version: str) -> tuple[int, ...]:
    parts = []
    for piece in version.split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


def _cache_key(endpoint: AgentEndpoint) -> str:
    # The endpoint's update time is part of the key: editing its URL or credential invalidates it.
    return f"discovery:{endpoint.pk}:{endpoint.updated_at.timestamp():.6f}"


def discovery_timeout(endpoint: AgentEndpoint) -> float:
    """How long one discovery may take: the endpoint's own timeouts, capped for page rendering."""
    return min(endpoint.connect_timeout + endpoint.read_timeout, settings.AGENTS_UI_DISCOVERY_TIMEOUT)


async def probe(endpoint: AgentEndpoint, client: httpx.AsyncClient, *, refresh: bool = False) -> Discovery:
    """Ask one endpoint now (no cache, nothing stored); an echoed credential is blanked out.

    An A2A card's signature is checked and its extended card read within the same time (`refresh`:
    the signing keys at the endpoint's URL are fetched again, not taken from the cache)."""
    agent = sdk_client(endpoint, client)
    limit = discovery_timeout(endpoint)
    deadline = asyncio.get_running_loop().time() + limit
    try:
        result = await asyncio.wait_for(agent.discover(), timeout=limit)
    except TimeoutError:
        return Discovery(
            endpoint_id=endpoint.pk,
            protocol=endpoint.protocol,
            status=Status.UNREACHABLE,
            source_url=agent.discovery_url,
            checked_at=timezone.now(),
            error=f"No answer within {limit:g} seconds.",
        )
    trust = CardTrust(result.status)
    if isinstance(agent, A2AAgent):  # what is left of the time: a slow extended card keeps the card
        trust = await card_trust.weigh(endpoint, agent, result, client, refresh=refresh, deadline=deadline)
    raw = result.raw if isinstance(result.raw, dict) else None
    return Discovery(
        endpoint_id=endpoint.pk,
        protocol=endpoint.protocol,
        status=trust.status,
        source_url=result.source_url,
        checked_at=timezone.now(),
        raw=endpoint.scrub_payload(raw),
        error=endpoint.scrub(result.error or trust.error or ""),
        signature=trust.signature,
        extended=trust.extended,
    )


def content_hash(discovery: Discovery) -> str:
    content: dict[str, Any] = {"status": discovery.status, "payload": discovery.raw}
    # Only A2A cards have these: every other declaration keeps the hash it always had.
    for name in ("signature", "extended"):
        if getattr(discovery, name) is not None:
            content[name] = getattr(discovery, name)
    body = json.dumps(content, sort_keys=True, default=str)
    return hashlib.sha256(body.encode()).hexdigest()


def _record(discoveries: list[Discovery]) -> list[Discovery]:
    """Store every distinct answer as a snapshot (one pass over the database for all endpoints)."""
    if not discoveries:
        return discoveries
    ids = [d.endpoint_id for d in discoveries]
    latest: dict[int, CapabilitySnapshot] = {}
    last_declared: dict[int, CapabilitySnapshot] = {}
    for snapshot in CapabilitySnapshot.objects.filter(endpoint_id__in=ids).order_by("-last_seen_at"):
        latest.setdefault(snapshot.endpoint_id, snapshot)
        if snapshot.status == Status.DECLARED:
            last_declared.setdefault(snapshot.endpoint_id, snapshot)
    now = timezone.now()
    to_create, to_touch, enriched = [], [], []
    for discovery in discoveries:
        digest = content_hash(discovery)
        previous = latest.get(discovery.endpoint_id)
        if previous is not None and previous.content_hash == digest:
            to_touch.append(previous.pk)
        else:
            to_create.append(
                CapabilitySnapshot(
                    endpoint_id=discovery.endpoint_id,
                    status=discovery.status,
                    content_hash=digest,
                    source=discovery.source_url[:500],
                    payload=discovery.raw,
                    error=discovery.error,
                    signature=discovery.signature,
                    extended=discovery.extended,
                    last_seen_at=now,
                )
            )
        known = last_declared.get(discovery.endpoint_id)
        if discovery.status == Status.DECLARED:
            discovery = replace(discovery, digest=digest)
        elif discovery.status == Status.UNREACHABLE and known is not None:
            discovery = replace(
                discovery,
                last_known=known.payload,
                last_known_at=known.last_seen_at,
                digest=known.content_hash,
                signature=known.signature,
                extended=known.extended,
            )
        enriched.append(discovery)
    with transaction.atomic():
        if to_create:
            CapabilitySnapshot.objects.bulk_create(to_create)
        if to_touch:
            CapabilitySnapshot.objects.filter(pk__in=to_touch).update(last_seen_at=now)
    # A new declaration may contradict what runs showed: the drift alarm says so.
    conformance.refresh_drifts([s.endpoint_id for s in to_create if s.status in conformance.USABLE])
    return enriched


async def _probe_alone(endpoint: AgentEndpoint, refresh: bool) -> Discovery:
    async with streaming_agent_client() as client:
        return await probe(endpoint, client, refresh=refresh)


# The shared cache (Redis, or local memory) is the truth for every server process; each process
# also keeps what it read for a few seconds, which spares unpickling every declaration on every page.
# Keyed like the shared cache: by the endpoint and its last edit.
LOCAL_SECONDS = 10.0
_RECENT = Memo(
    "recent discoveries", size=4096, seconds=lambda: min(LOCAL_SECONDS, settings.AGENTS_UI_DISCOVERY_TTL)
)


async def discover(
    endpoints: Iterable[AgentEndpoint], *, refresh: bool = False, client: httpx.AsyncClient | None = None
) -> dict[int, Discovery]:
    """Discovery for many endpoints at once: from the cache when fresh, else from the agents."""
    endpoints = list(endpoints)
    found: dict[int, Discovery] = {}
    if not refresh:
        for endpoint in endpoints:
            recent = _RECENT.get(_cache_key(endpoint))
            if recent is not None:
                found[endpoint.pk] = recent
        wanted = [e for e in endpoints if e.pk not in found]
        cached = await cache.aget_many([_cache_key(e) for e in wanted]) if wanted else {}
        for endpoint in wanted:
            entry = cached.get(_cache_key(endpoint))
            if entry is not None:
                found[endpoint.pk] = _RECENT.put(_cache_key(endpoint), Discovery(**entry))
    missing = [e for e in endpoints if e.pk not in found]
    if missing:
        if client is None:
            # A client per agent, each request on a connection of its own: httpcore's pool costs
            # O(requests x connections) per request, which a shared pool pays many times over on a
            # cold catalogue, and the streaming client costs less CPU per request besides.
            fetched = await asyncio.gather(*(_probe_alone(e, refresh) for e in missing))
        else:
            fetched = await asyncio.gather(*(probe(e, client, refresh=refresh) for e in missing))
        fetched = await sync_to_async(_record, thread_sensitive=True)(list(fetched))
        _count_failures(missing, fetched)
        await cache.aset_many(
            {_cache_key(e): asdict(d) for e, d in zip(missing, fetched, strict=True)},
            timeout=settings.AGENTS_UI_DISCOVERY_TTL,
        )
        found.update({e.pk: _RECENT.put(_cache_key(e), d) for e, d in zip(missing, fetched, strict=True)})
    return found


def _count_failures(endpoints: list[AgentEndpoint], found: list[Discovery]) -> None:
    for endpoint, discovery in zip(endpoints, found, strict=True):
        if discovery.status not in (Status.DECLARED, Status.NONE):
            metrics.DISCOVERY_FAILURES.labels(endpoint.slug, discovery.status).inc()


async def discover_one(
    endpoint: AgentEndpoint, *, refresh: bool = False, client: httpx.AsyncClient | None = None
) -> Discovery:
    return (await discover([endpoint], refresh=refresh, client=client))[endpoint.pk]

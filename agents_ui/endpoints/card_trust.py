"""What an A2A card is worth: its signature checked against the admin's keys, and its extended card.

The keys are the admin's (the endpoint's pasted key set, and the key set at its URL, fetched through
the address guard, bounded, cached for KEY_SET_SECONDS and fetched again on a re-discovery); the
endpoint's policy says what a card that is unsigned or does not verify means (docs/PROTOCOLS.md 3.1a).
A card that declares an extended card has it asked with the endpoint's credential and checked the
same way; when that fails, the public card stays, with a note for staff.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass
from typing import Any

import httpx
from django.core.cache import cache

from agents_ui.endpoints.clients import allow_private_addresses
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.sdk import AgentError
from agents_ui.sdk.a2a.client import A2AAgent, pb
from agents_ui.sdk.a2a.signing import (
    KeySet,
    KeySetError,
    SignatureCheck,
    check_card,
    fetch_key_set,
    parse_key_set,
)
from agents_ui.sdk.discovery import DiscoveryResult
from agents_ui.sdk.guard import host_refusal

logger = logging.getLogger(__name__)

Policy = AgentEndpoint.SignaturePolicy
Status = CapabilitySnapshot.Status
KEY_SET_SECONDS = 3600


@dataclass(frozen=True)
class CardTrust:
    """The discovery status once the policy is applied (declared, or untrusted), the signature
    check's record, the extended card's record, and why the card is refused ("" when it is not)."""

    status: str
    signature: dict[str, str] | None = None
    extended: dict[str, Any] | None = None
    error: str = ""


def pasted_keys(endpoint: AgentEndpoint) -> KeySet | None:
    if not endpoint.signing_keys:
        return None
    try:
        return parse_key_set(endpoint.signing_keys)
    except KeySetError:  # the admin's form checks it; an older row is read as no keys
        logger.warning("endpoint %s has a key set that is not usable", endpoint.pk)
        return None


def _left(deadline: float | None) -> float | None:
    """Seconds left of discovery's time (at least a moment, so a late step fails as a timeout)."""
    return None if deadline is None else max(deadline - asyncio.get_running_loop().time(), 0.05)


async def url_keys(
    endpoint: AgentEndpoint, client: httpx.AsyncClient, *, refresh: bool, deadline: float | None = None
) -> tuple[KeySet | None, str]:
    """The key set at the endpoint's URL (from the cache unless `refresh`), or why there is none."""
    url = endpoint.signing_keys_url
    if not url:
        return None, ""
    key = f"signing-keys:{endpoint.pk}:{hashlib.sha256(url.encode()).hexdigest()[:32]}"
    if not refresh and (kept := await cache.aget(key)) is not None:
        return KeySet(tuple(kept)), ""
    timeout = httpx.Timeout(endpoint.read_timeout, connect=endpoint.connect_timeout)
    try:
        keys = await asyncio.wait_for(fetch_key_set(client, url, bounds=timeout), timeout=_left(deadline))
    except (AgentError, KeySetError) as exc:
        return None, f"the key set at {url} could not be used: {exc}"[:400]
    except TimeoutError:
        return None, f"the key set at {url} did not come in time"
    await cache.aset(key, [dict(k) for k in keys.keys], timeout=KEY_SET_SECONDS)
    return keys, ""


async def check_signature(
    endpoint: AgentEndpoint,
    card: pb.AgentCard,
    client: httpx.AsyncClient,
    *,
    refresh: bool,
    deadline: float | None = None,
) -> SignatureCheck:
    if endpoint.signature_policy == Policy.OFF:
        return SignatureCheck("off")
    fetched, problem = await url_keys(endpoint, client, refresh=refresh, deadline=deadline)
    found = check_card(
        card, pasted=pasted_keys(endpoint), fetched=fetched, key_set_url=endpoint.signing_keys_url
    )
    if problem and found.state == "invalid":
        return SignatureCheck("invalid", reason=f"{found.reason}; {problem}"[:600])
    return found


def refusal(check: SignatureCheck) -> str:
    """Why a card the admin requires signed is refused, for the record (technical)."""
    if check.state == "unsigned":
        return "Its Agent Card is unsigned, and this endpoint requires a signature."
    return f"Its Agent Card's signature does not verify ({check.reason}), and this endpoint requires one."


async def weigh(
    endpoint: AgentEndpoint,
    agent: A2AAgent,
    result: DiscoveryResult[pb.AgentCard],
    client: httpx.AsyncClient,
    *,
    refresh: bool = False,
    deadline: float | None = None,
) -> CardTrust:
    """A declared card's signature and extended card, under the endpoint's policy, by `deadline`
    (the event loop's time)."""
    card = result.declaration
    if result.status != "declared" or card is None:
        return CardTrust(result.status)
    check = await check_signature(endpoint, card, client, refresh=refresh, deadline=deadline)
    if endpoint.signature_policy == Policy.REQUIRE and not check.verified:
        return CardTrust(Status.UNTRUSTED, check.to_json(), error=refusal(check))
    inside = interface_inside(agent, card)
    if inside:  # nor is its extended card asked there
        return CardTrust(Status.UNSUPPORTED, check.to_json(), error=inside)
    extended = await _extended(endpoint, agent, card, client, deadline)
    return CardTrust(Status.DECLARED, check.to_json(), extended)


def interface_inside(agent: A2AAgent, card: pb.AgentCard) -> str:
    """Why the card's interface is one this server never reaches, when its address says so without
    DNS (loopback, private, metadata, in any spelling); "" otherwise. Said at discovery, so the admin
    reads it in the connection test rather than a person meeting "cannot be reached" at a run."""
    url = agent.interface_url(card)
    try:
        host = httpx.URL(url).host if url else ""
    except httpx.InvalidURL:
        return ""
    refused = host_refusal(host, allow_private=allow_private_addresses()) if host else None
    if not refused:
        return ""
    return (
        f"Its Agent Card names its interface at {url}, and {refused.removeprefix('refused: ')}: "
        "this server never sends requests there."
    )


async def _extended(
    endpoint: AgentEndpoint,
    agent: A2AAgent,
    card: pb.AgentCard,
    client: httpx.AsyncClient,
    deadline: float | None,
) -> dict[str, Any] | None:
    if not card.capabilities.extended_agent_card:
        return None
    try:
        found = await asyncio.wait_for(agent.extended_card(card), timeout=_left(deadline))
    except TimeoutError:
        return {"error": "The extended card was not read: it did not come in time."}
    if found.status != "declared" or found.declaration is None:
        return {"error": endpoint.scrub(f"The extended card was not read: {found.error}")[:600]}
    check = await check_signature(endpoint, found.declaration, client, refresh=False, deadline=deadline)
    if endpoint.signature_policy == Policy.REQUIRE and not check.verified:
        return {"error": endpoint.scrub(f"The extended card is not used: {refusal(check)}")[:600]}
    return {"payload": endpoint.scrub_payload(found.raw), "signature": check.to_json()}

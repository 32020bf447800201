"""Agent Card signatures (A2A "Agent Card Signing": a JWS, RFC 7515, over the RFC 8785 canonical card),
checked with the SDK's own verifier against keys the admin gave.

The card and its signatures' headers are the agent's word, so nothing they name is trusted or fetched:
a signature's `kid` is looked up among the admin's keys (a key set pasted, and/or the one at the key
set URL the admin entered), and its `jku` only chooses the URL's keys when it is that very URL. Only
asymmetric algorithms are accepted, never `none` nor an HMAC (whose "key" would be a public key read
as a shared secret). No Django import in here.
"""

from __future__ import annotations

import binascii
import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import httpx
from a2a.types import a2a_pb2 as pb
from a2a.utils.signing import SignatureVerificationError, create_signature_verifier
from jwt import PyJWK
from jwt.exceptions import PyJWKError
from jwt.utils import base64url_decode

from ..transport import raise_for_status, read_json, translate_transport_errors

__all__ = [
    "ALGORITHMS",
    "KeySet",
    "KeySetError",
    "SignatureCheck",
    "check_card",
    "fetch_key_set",
    "parse_key_set",
]

# RFC 7518's asymmetric signature algorithms (and RFC 8037's EdDSA): the only ones a card may use.
ALGORITHMS: tuple[str, ...] = ("ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "EdDSA")
KEY_TYPES = ("EC", "RSA", "OKP")
# Members only a private or a symmetric key has: a key set holding one was pasted by mistake.
_SECRET_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "oth", "k")
MAX_KEYS = 50
MAX_KEY_SET_BYTES = 64 * 1024
KEY_SET_TYPES = ("application/json", "application/jwk-set+json")


class KeySetError(ValueError):
    """A key set that cannot be used, with a sentence for the admin."""


@dataclass(frozen=True)
class KeySet:
    """Public keys (JWKs), each with its `kid`."""

    keys: tuple[Mapping[str, Any], ...] = ()

    def find(self, kid: str) -> Mapping[str, Any] | None:
        return next((key for key in self.keys if key.get("kid") == kid), None)


def parse_key_set(data: Any) -> KeySet:
    """A JWKS (`{"keys": [...]}`) of public signing keys, or KeySetError saying what is wrong."""
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise KeySetError(f"It is not valid JSON ({exc}).") from exc
    if not isinstance(data, Mapping) or not isinstance(data.get("keys"), list):
        raise KeySetError('A key set is a JSON object with a "keys" list (a JWKS).')
    keys = data["keys"]
    if not keys:
        raise KeySetError("The key set has no keys.")
    if len(keys) > MAX_KEYS:
        raise KeySetError(f"The key set has {len(keys)} keys; at most {MAX_KEYS} are read.")
    seen: set[str] = set()
    for number, key in enumerate(keys, start=1):
        if not isinstance(key, Mapping):
            raise KeySetError(f"Key {number} is not a JSON object.")
        kid = key.get("kid")
        name = f"Key {kid!r}" if isinstance(kid, str) and kid else f"Key {number}"
        if not isinstance(kid, str) or not kid:
            raise KeySetError(f"{name} has no “kid”: signatures name their key by it.")
        if kid in seen:
            raise KeySetError(f"Two keys have the kid {kid!r}.")
        seen.add(kid)
        kty = key.get("kty")
        if kty not in KEY_TYPES:
            raise KeySetError(
                f"{name} is of type {kty!r}: only public keys of type {', '.join(KEY_TYPES)} sign cards."
            )
        if any(member in key for member in _SECRET_MEMBERS):
            raise KeySetError(f"{name} holds its private part: paste only the public key.")
        if key.get("use") not in (None, "sig"):
            raise KeySetError(f"{name} is for {key.get('use')!r}, not for signatures (“use”: “sig”).")
        alg = key.get("alg")
        if alg is not None and alg not in ALGORITHMS:
            raise KeySetError(f"{name} is for {alg!r}; accepted: {', '.join(ALGORITHMS)}.")
        try:
            PyJWK(dict(key), algorithm=alg or None)
        except PyJWKError as exc:
            raise KeySetError(f"{name} is not a usable key ({exc}).") from exc
    return KeySet(tuple(dict(key) for key in keys))


async def fetch_key_set(client: httpx.AsyncClient, url: str, *, bounds: httpx.Timeout) -> KeySet:
    """The key set at the admin's URL, bounded; sent no credential (it is public, and elsewhere).

    Raises AgentError (not read) or KeySetError (read, not usable)."""
    with translate_transport_errors("the key set"):
        async with client.stream(
            "GET", url, headers={"Accept": ", ".join(reversed(KEY_SET_TYPES))}, timeout=bounds
        ) as response:
            await raise_for_status(response)
            body = await read_json(
                response, "the key set", limit=MAX_KEY_SET_BYTES, content_types=KEY_SET_TYPES
            )
    return parse_key_set(body)


State = Literal["signed", "unsigned", "invalid", "off"]


@dataclass(frozen=True)
class SignatureCheck:
    """What checking a card's signatures found: signed by a key (`kid`, `alg`, where the key came
    from: "pasted" or "url"), unsigned, or not verifying (`reason`); "off" when not checked."""

    state: State
    kid: str = ""
    alg: str = ""
    key_source: str = ""
    reason: str = ""

    @property
    def verified(self) -> bool:
        return self.state == "signed"

    def to_json(self) -> dict[str, str]:
        return {name: value for name, value in asdict(self).items() if value}

    @classmethod
    def from_json(cls, data: Any) -> SignatureCheck | None:
        if not isinstance(data, Mapping) or data.get("state") not in ("signed", "unsigned", "invalid", "off"):
            return None
        names = ("state", "kid", "alg", "key_source", "reason")
        return cls(**{name: str(data.get(name) or "") for name in names})


def check_card(
    card: pb.AgentCard, *, pasted: KeySet | None = None, fetched: KeySet | None = None, key_set_url: str = ""
) -> SignatureCheck:
    """The first of the card's signatures that verifies with an admin's key, or why none does."""
    if not card.signatures:
        return SignatureCheck("unsigned")
    reasons: list[str] = []
    for signature in card.signatures:
        header = _protected_header(signature)
        if header is None:
            reasons.append("a signature's protected header cannot be read")
            continue
        kid, alg, jku = (header.get(name) for name in ("kid", "alg", "jku"))
        kid = kid if isinstance(kid, str) else ""
        if alg not in ALGORITHMS:
            reasons.append(
                f"it is signed with {alg if isinstance(alg, str) and alg else 'no algorithm'}, which is not "
                f"accepted (only {', '.join(ALGORITHMS)})"
            )
            continue
        key, source = _key_for(kid, jku, pasted, fetched, key_set_url)
        if key is None:
            known = pasted is not None or fetched is not None
            reasons.append(
                f"no key given for this agent has the id {kid!r}"
                if kid and known
                else "it names no key id"
                if not kid
                else "no signing keys are set for this agent"
            )
            continue
        if key.get("alg") not in (None, alg):
            reasons.append(f"key {kid!r} is for {key['alg']}, but the signature says {alg}")
            continue
        try:
            jwk = PyJWK(dict(key), algorithm=alg)
        except PyJWKError:
            reasons.append(f"key {kid!r} ({key.get('kty')}) cannot check a {alg} signature")
            continue
        alone = pb.AgentCard()
        alone.CopyFrom(card)
        del alone.signatures[:]
        alone.signatures.append(signature)
        try:
            create_signature_verifier(lambda _kid, _jku, jwk=jwk: jwk, [alg])(alone)
        except SignatureVerificationError:
            reasons.append(
                f"the signature by key {kid!r} does not match the card: the card changed after it was "
                "signed, or another key signed it"
            )
            continue
        return SignatureCheck("signed", kid=kid, alg=alg, key_source=source)
    return SignatureCheck("invalid", reason="; ".join(dict.fromkeys(reasons))[:500])


def _protected_header(signature: pb.AgentCardSignature) -> dict[str, Any] | None:
    try:
        header = json.loads(base64url_decode(signature.protected.encode()).decode())
    except (binascii.Error, UnicodeError, ValueError):
        return None
    return header if isinstance(header, dict) else None


def _key_for(
    kid: str, jku: Any, pasted: KeySet | None, fetched: KeySet | None, key_set_url: str
) -> tuple[Mapping[str, Any] | None, str]:
    """The admin's key with this id: a `jku` equal to the admin's URL picks that URL's keys; any
    other `jku` is the card's word and changes nothing."""
    if not kid:
        return None, ""
    if key_set_url and jku == key_set_url:
        key = fetched.find(kid) if fetched else None
        return key, "url" if key is not None else ""
    for keys, source in ((pasted, "pasted"), (fetched, "url")):
        key = keys.find(kid) if keys else None
        if key is not None:
            return key, source
    return None, ""

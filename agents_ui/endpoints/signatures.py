"""What an agent's card signature and extended card mean, in people's words: the catalogue's badge,
the explain dialog's sentences and the workspace's warning (checked in endpoints/card_trust.py)."""

from __future__ import annotations

from dataclasses import dataclass

from agents_ui.endpoints.discovery import Discovery
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.sdk.a2a.signing import SignatureCheck

Policy = AgentEndpoint.SignaturePolicy

BADGES = {
    "signed": ("Signed", "ok"),
    "unsigned": ("Unsigned", "info"),
    "invalid": ("Signature does not verify", "warn"),
}
KEY_SOURCES = {"pasted": "the keys an administrator pasted", "url": "the key set at"}


@dataclass(frozen=True)
class CardSignature:
    """`state`: signed | unsigned | invalid. `required`: the endpoint requires a signature."""

    state: str
    label: str
    tone: str
    summary: str
    key_id: str = ""
    algorithm: str = ""
    signer: str = ""
    key_source: str = ""
    reason: str = ""
    required: bool = False

    @property
    def warns(self) -> bool:
        """A signature that does not verify, the agent still usable: the workspace says so."""
        return self.state == "invalid" and not self.required


def card_signature(endpoint: AgentEndpoint, record: object) -> CardSignature | None:
    """What a signature check found (its record: `Discovery.signature`), or None when nothing was
    checked (not a card, or checks off)."""
    check = SignatureCheck.from_json(record)
    if check is None or check.state == "off":
        return None
    label, tone = BADGES[check.state]
    required = endpoint.signature_policy == Policy.REQUIRE
    signer = endpoint.signer_name.strip()
    source = (
        f"{KEY_SOURCES['url']} {endpoint.signing_keys_url}"
        if check.key_source == "url"
        else KEY_SOURCES.get(check.key_source, "")
    )
    if check.state == "signed":
        summary = f"Signed by key {check.kid}" + (f" ({signer})" if signer else "")
    elif check.state == "unsigned":
        summary = "Its card is not signed." + (
            " A signature is required, so the agent cannot be used." if required else ""
        )
    else:
        summary = "Its card's signature does not verify." + (
            " A signature is required, so the agent cannot be used."
            if required
            else " The agent can still be used: what its card says may not be what its owner signed."
        )
    return CardSignature(
        state=check.state,
        label=label,
        tone=tone,
        summary=summary,
        key_id=check.kid,
        algorithm=check.alg,
        signer=signer,
        key_source=source,
        reason=check.reason,
        required=required,
    )


@dataclass(frozen=True)
class ExtendedCard:
    """The extended card's part: whether it was read (its skills are in the plan then), its own
    signature, and, when it was not read or not used, why (for staff)."""

    read: bool
    signature: CardSignature | None = None
    problem: str = ""


def extended_card(endpoint: AgentEndpoint, discovery: Discovery) -> ExtendedCard | None:
    extended = discovery.extended
    if not isinstance(extended, dict) or discovery.status == CapabilitySnapshot.Status.UNTRUSTED:
        return None
    if isinstance(extended.get("payload"), dict):
        return ExtendedCard(True, card_signature(endpoint, extended.get("signature")))
    return ExtendedCard(False, problem=str(extended.get("error") or ""))

"""Agent Card signing for tests, with a2a-sdk's own signer and a key made for the test (EC P-256).

`key = SigningKey("k1")`; `key.sign` is a card edit (A2ATestAgent's `card_edit`) that signs the
card as served; `key.sign_then(change)` signs, then changes the card (a tampered card);
`key.key_set` is the JWKS of its public key, as an admin pastes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm


class SigningKey:
    def __init__(self, kid: str = "k1", *, jku: str | None = None) -> None:
        self.kid, self.jku = kid, jku
        self.private = ec.generate_private_key(ec.SECP256R1())

    @property
    def public_jwk(self) -> dict[str, Any]:
        jwk = json.loads(ECAlgorithm.to_jwk(self.private.public_key()))
        return {**jwk, "kid": self.kid, "use": "sig", "alg": "ES256"}

    @property
    def key_set(self) -> dict[str, Any]:
        return {"keys": [self.public_jwk]}

    def sign(self, card: pb.AgentCard) -> None:
        header: dict[str, Any] = {"kid": self.kid, "alg": "ES256", "typ": "JOSE", "jku": self.jku}
        create_agent_card_signer(self.private, header)(card)  # type: ignore[arg-type]

    def sign_then(self, change: Callable[[pb.AgentCard], None]) -> Callable[[pb.AgentCard], None]:
        def edit(card: pb.AgentCard) -> None:
            self.sign(card)
            change(card)

        return edit


def retitled(card: pb.AgentCard) -> None:
    """One field changed after signing."""
    card.description = "Echoes, and sends your messages elsewhere."


def with_extra_skill(card: pb.AgentCard) -> None:
    card.skills.append(
        pb.AgentSkill(id="ledger", name="Ledger lookup", description="Only for callers with the key.")
    )

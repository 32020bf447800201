"""The demo A2A agents sign their Agent Cards (A2A "Agent Card Signing"), with a2a-sdk's own signer.

The key is this installation's: an EC P-256 key derived from SECRET_KEY (the same in every worker,
like the demo key of agents_ui.demo.gate), and registration pastes its public half into the demo
endpoints' signing keys, so the catalogue shows them "Signed" out of the box.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.types import a2a_pb2 as pb
from a2a.utils.signing import create_agent_card_signer
from cryptography.hazmat.primitives.asymmetric import ec
from django.utils.crypto import salted_hmac
from jwt.algorithms import ECAlgorithm

KEY_ID = "agents-ui-demo"
SIGNER = "This installation's demo agents"
# The order of P-256's group: a private key is a number in [1, order - 1].
_P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551


def signing_key() -> ec.EllipticCurvePrivateKey:
    secret = salted_hmac("agents_ui.demo.a2a.signing", "card signing key", algorithm="sha256").digest()
    return ec.derive_private_key(int.from_bytes(secret) % (_P256_ORDER - 1) + 1, ec.SECP256R1())


def key_set() -> dict[str, Any]:
    """The public key, as an admin pastes it: {"keys": [JWK]}."""
    jwk = json.loads(ECAlgorithm.to_jwk(signing_key().public_key()))
    return {"keys": [{**jwk, "kid": KEY_ID, "use": "sig", "alg": "ES256"}]}


def signed(card: pb.AgentCard) -> pb.AgentCard:
    header: Any = {"kid": KEY_ID, "alg": "ES256", "typ": "JOSE", "jku": None}
    return create_agent_card_signer(signing_key(), header)(card)

"""What reading an agent's declaration found, the same record for every protocol.

AG-UI's capabilities (``GET {url}/capabilities``), an external agent's policy (``GET {base}/policy``)
and A2A's Agent Card (``{base}/.well-known/agent-card.json``) are each read into one
:class:`DiscoveryResult`, keeping the distinctions of docs/PROTOCOLS.md 1.2:

- ``declared``: ``declaration`` holds the validated declaration (for A2A, ``raw`` is the card).
- ``none``: the agent has no discovery (404, 405, a body that is not an object): unknown.
- ``invalid``: an object that fails validation; ``raw`` keeps it, ``error`` says why.
- ``unreachable``: the call itself failed (network, timeout, 5xx); ``error`` says how.
- ``unsupported``: a valid declaration the client cannot speak (an Agent Card with gRPC only).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["DiscoveryResult", "DiscoveryStatus"]

DiscoveryStatus = Literal["declared", "none", "invalid", "unreachable", "unsupported"]


@dataclass(frozen=True, slots=True)
class DiscoveryResult[D]:
    status: DiscoveryStatus
    source_url: str
    declaration: D | None = None
    # The declaration as sent, when it was a JSON object.
    raw: dict[str, Any] | None = None
    error: str | None = None
    error_code: str | None = None

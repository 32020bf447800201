"""What the external demo agents remember: conversations, files, approvals, artifacts, limit counters.

Module-level stores: that assumes one server process (an approval decided on another worker would
never wake the stream waiting on it).
"""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any


@dataclass
class StoredConversation:
    id: str
    agent: str
    message_ids: list[str] = field(default_factory=list)
    artifact_ids: list[str] = field(default_factory=list)


@dataclass
class StoredFile:
    id: str
    agent: str
    name: str
    mime_type: str
    data: bytes

    def info(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "mimeType": self.mime_type, "size": len(self.data)}


@dataclass
class StoredApproval:
    id: str
    agent: str
    tool_call_id: str
    public_name: str
    input: dict[str, Any]
    side_effect_class: str
    expires_at: datetime
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    decision: str | None = None
    edited_input: dict[str, Any] | None = None
    reason: str | None = None

    @property
    def expired(self) -> bool:
        return datetime.now(UTC) >= self.expires_at


@dataclass
class StoredArtifact:
    id: str
    agent: str
    conversation_id: str
    name: str
    mime_type: str
    content: str

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "mimeType": self.mime_type,
            "size": len(self.content.encode()),
            "conversationId": self.conversation_id,
        }


@dataclass
class Store:
    """Everything the external demo agents remember (one process; see the module docstring)."""

    conversations: dict[str, StoredConversation] = field(default_factory=dict)
    files: dict[str, StoredFile] = field(default_factory=dict)
    approvals: dict[str, StoredApproval] = field(default_factory=dict)
    artifacts: dict[str, StoredArtifact] = field(default_factory=dict)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    # (agent, scope key) -> monotonic times of recent requests, for the rate limits.
    hits: dict[tuple[str, str], deque[float]] = field(default_factory=dict)
    # (agent, scope) -> [(monotonic time, amount)], for the spend limits.
    spend: dict[tuple[str, str], list[tuple[float, float]]] = field(default_factory=dict)

    def clear(self) -> None:
        # A stream still waiting on a forgotten approval ends on its own at expiry.
        self.conversations.clear()
        self.files.clear()
        self.approvals.clear()
        self.artifacts.clear()
        self.interactions.clear()
        self.hits.clear()
        self.spend.clear()


STORE = Store()

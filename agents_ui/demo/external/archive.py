"""The Records Archive: tables, citations and downloadable summaries; no files, no approvals."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

from agents_ui.demo.external.base import (
    MODULES,
    RUNTIME_STANDARD,
    ExternalDemoAgent,
    MessageTurn,
    TurnEvent,
    domain_tool,
    new_id,
    schema,
)
from agents_ui.demo.replies import pause


@dataclass
class Archive(ExternalDemoAgent):
    """Searches the records before every answer."""

    async def act(self, turn: MessageTurn, topic: str, notes: list[str]) -> AsyncIterator[TurnEvent]:
        call_id = new_id("call")
        yield (
            "tool:started",
            {"toolCallId": call_id, "publicName": "search_records", "input": {"query": topic}},
        )
        await pause()
        yield "tool:completed", {"toolCallId": call_id, "status": "completed", "output": {"matches": 3}}


ARCHIVE = Archive(
    slug="archive",
    policy={
        "identity": {
            "name": "Records Archive",
            "description": "Searches the company archive and returns tables and downloadable summaries.",
            "version": "2.0.5",
            "provider": "Agents UI demo agents",
        },
        "capabilities": {
            "messages": True,
            "conversations": True,
            "files": False,
            "artifacts": True,
            "interactions": False,
            "approvals": False,
        },
        "streamProfiles": [MODULES, RUNTIME_STANDARD],
        "defaultStreamProfile": MODULES,
        "outputModuleTypes": ["table", "citation"],
        "providerGroundingDisplay": False,
        "domainTools": [
            domain_tool(
                "search_records",
                "Full-text search over archived records.",
                "query",
                "read",
                "idempotent",
                False,
                schema(query="string"),
            ),
            domain_tool(
                "export_summary",
                "Write a summary of the matches as a Markdown artifact.",
                "command",
                "write",
                "idempotent",
                False,
                schema(query="string"),
            ),
            domain_tool(
                "purge_records",
                "Permanently delete archived records.",
                "command",
                "destructive",
                "non_idempotent",
                False,
                schema(query="string"),
                status="disabled",
            ),
        ],
        "filePolicy": {"upload": False, "read": False, "maxUploadBytes": 0, "allowedMimeTypes": []},
        "hostContextPolicy": {"acceptedFields": ["user.locale"], "maxTotalBytes": 128},
        "rateLimits": [{"scope": "agent", "limit": 120, "windowSeconds": 3600}],
        "spendLimits": [],
        "publicErrorDetail": "minimal",
        "sdk": {"minVersion": None},
    },
)

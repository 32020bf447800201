"""Nova (preview): needs a newer client SDK, so every call but /policy answers 426."""

from __future__ import annotations

from agents_ui.demo.external.base import RUNTIME_STANDARD, ExternalDemoAgent

FUTURE_AGENT = ExternalDemoAgent(
    slug="future-agent",
    policy={
        "identity": {
            "name": "Nova (preview)",
            "description": "A preview agent built for the next SDK generation; older clients must upgrade.",
            "version": "0.1.0-preview",
            "provider": "Agents UI demo agents",
        },
        "capabilities": {
            "messages": True,
            "conversations": True,
            "files": False,
            "artifacts": False,
            "interactions": True,
            "approvals": False,
        },
        "streamProfiles": [RUNTIME_STANDARD],
        "defaultStreamProfile": RUNTIME_STANDARD,
        "outputModuleTypes": [],
        "providerGroundingDisplay": False,
        "domainTools": [],
        "filePolicy": {"upload": False, "read": False, "maxUploadBytes": 0, "allowedMimeTypes": []},
        "hostContextPolicy": {"acceptedFields": [], "maxTotalBytes": 0},
        "rateLimits": [],
        "spendLimits": [],
        "publicErrorDetail": "diagnostic",
        "sdk": {"minVersion": "2.0.0"},
    },
)

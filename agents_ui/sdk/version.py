"""The SDK's version, sent to external agents as X-Agent-SDK-Version (docs/PROTOCOLS.md 2)."""

SDK_VERSION = "1.0.0"

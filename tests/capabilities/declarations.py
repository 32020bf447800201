"""Declarations as real agents serve them at {url}/capabilities, for the reader and decision tests."""

from __future__ import annotations

from typing import Any

# A standard AgentCapabilities using every category of the seed.
STANDARD: dict[str, Any] = {
    "identity": {
        "name": "Analyst",
        "type": "langgraph",
        "description": "Reads data and runs code.",
        "version": "1.2.0",
        "provider": "Acme",
        "documentationUrl": "https://docs.example/analyst",
        "metadata": {"region": "eu"},
    },
    "transport": {
        "streaming": True,
        "websocket": False,
        "httpBinary": True,
        "pushNotifications": True,
        "resumable": True,
    },
    "tools": {
        "supported": True,
        "items": [{"name": "query", "description": "Query a table", "parameters": {"type": "object"}}],
        "parallelCalls": True,
        "clientProvided": True,
    },
    "output": {"structuredOutput": True, "supportedMimeTypes": ["application/json"]},
    "state": {"snapshots": True, "deltas": True, "memory": True, "persistentState": False},
    "multiAgent": {"supported": True, "delegation": True, "subagents": [{"name": "charts"}]},
    "reasoning": {"supported": True, "streaming": True, "encrypted": False},
    "multimodal": {
        "input": {"image": True, "audio": True, "video": False, "pdf": True, "file": False},
        "output": {"image": True, "audio": False},
    },
    "execution": {"codeExecution": True, "sandboxed": False, "maxIterations": 12, "maxExecutionTime": 120000},
    "humanInTheLoop": {
        "supported": True,
        "approvals": True,
        "interventions": True,
        "feedback": True,
        "interrupts": True,
        "approveWithEdits": False,
    },
    "custom": {"rateLimit": {"maxRequestsPerMinute": 6}, "input": {"maxBytes": 5242880}},
}

# @ag-ui/aws-strands DEFAULT_CAPABILITIES (integrations/aws-strands/typescript/src/endpoint.ts).
STRANDS: dict[str, Any] = {
    "protocol": "1",
    "transports": {"sse": True, "protobuf": True, "websocket": False},
    "events": {
        "RUN_STARTED": True,
        "RUN_FINISHED": True,
        "RUN_ERROR": True,
        "TEXT_MESSAGE_START": True,
        "TEXT_MESSAGE_CONTENT": True,
        "TEXT_MESSAGE_END": True,
        "TEXT_MESSAGE_CHUNK": False,
        "TOOL_CALL_START": True,
        "TOOL_CALL_ARGS": True,
        "TOOL_CALL_END": True,
        "TOOL_CALL_RESULT": True,
        "TOOL_CALL_CHUNK": False,
        "STATE_SNAPSHOT": True,
        "STATE_DELTA": False,
        "MESSAGES_SNAPSHOT": True,
        "STEP_STARTED": True,
        "STEP_FINISHED": True,
        "REASONING_START": True,
        "REASONING_MESSAGE_START": True,
        "REASONING_MESSAGE_CONTENT": True,
        "REASONING_MESSAGE_END": True,
        "REASONING_MESSAGE_CHUNK": False,
        "REASONING_ENCRYPTED_VALUE": True,
        "REASONING_END": True,
        "CUSTOM": True,
        "ACTIVITY_SNAPSHOT": False,
        "ACTIVITY_DELTA": False,
        "RAW": False,
    },
    "features": {
        "interrupts": True,
        "toolCallInterruptEditedArgs": True,
        "resumableStreams": False,
        "messagesSnapshot": True,
        "stateDelta": False,
        "protobuf": True,
        "multipleRunsPerStream": False,
    },
}

# ag-ui-crewai get_capabilities() with its defaults
# (integrations/crew-ai/python/ag_ui_crewai/_capabilities.py).
CREWAI: dict[str, Any] = {
    "identity": {"type": "crewai", "crewaiVersion": "1.15.7"},
    "humanInTheLoop": {
        "supported": True,
        "mechanism": "frontend-tool-calls",
        "interrupts": False,
        "approveWithEdits": False,
    },
    "state": {"snapshots": True, "deltas": False, "persistentState": False},
    "transport": {"streaming": True, "streamFrames": True},
    "wireShape": {
        "emissionShape": "triples",
        "textMessages": ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"],
        "toolCalls": ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END"],
        "mcpToolCalls": ["TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"],
    },
    "rawEvents": {"supported": True, "enabled": False, "default": False},
    "reasoning": {
        "supported": True,
        "litellmChannel": True,
        "thinkingEventAvailable": True,
        "responsesApiChannel": True,
        "nativeGeminiProvider": False,
        "resolvedProvider": None,
        "requiresEmitRawEvents": False,
        "reason": None,
    },
    "conversationalFlows": {"supported": True, "entrypoint": "stream_turn", "sessionId": "threadId"},
    "crewChat": {"supported": True},
}

# Google ADK's ag-ui-adk when no capabilities were configured.
ADK_NOTHING: dict[str, Any] = {}

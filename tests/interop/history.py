"""AG-UI message histories built the way AG-UI's own client builds them, to send back on the next run.

``full_history`` folds a run's events onto the messages sent with it, as `@ag-ui/client`'s default
reducer does: assistant messages keep their ``toolCalls``, tool results become tool messages,
reasoning becomes reasoning messages, encrypted values land on the entity they name, and a
``MESSAGES_SNAPSHOT`` replaces everything. ``product_history`` is what the product sends today
(assistant text only), kept to show what that costs.

Plain JSON dicts, standard library only.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from typing import Any


def sse_events(body: bytes) -> list[dict[str, Any]]:
    """The events of an SSE body (``data:`` lines; a frame's lines joined by newlines)."""
    events: list[dict[str, Any]] = []
    data: list[str] = []
    for line in [*body.decode().splitlines(), ""]:
        if not line:
            if data:
                events.append(json.loads("\n".join(data)))
                data = []
        elif line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
    return events


def user(message_id: str, text: str) -> dict[str, Any]:
    return {"id": message_id, "role": "user", "content": text}


def tool_answer(message_id: str, tool_call_id: str, content: Any) -> dict[str, Any]:
    text = content if isinstance(content, str) else json.dumps(content)
    return {"id": message_id, "role": "tool", "toolCallId": tool_call_id, "content": text}


def full_history(sent: Iterable[dict[str, Any]], events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    messages = [copy.deepcopy(m) for m in sent]
    by_id = {m["id"]: m for m in messages}
    calls: dict[str, dict[str, Any]] = {}

    def add(message: dict[str, Any]) -> dict[str, Any]:
        known = by_id.get(message["id"])
        if known is not None:
            return known
        messages.append(message)
        by_id[message["id"]] = message
        return message

    for event in events:
        kind = event["type"]
        if kind == "MESSAGES_SNAPSHOT":
            messages[:] = copy.deepcopy(event["messages"])
            by_id = {m["id"]: m for m in messages}
            calls = {c["id"]: c for m in messages for c in m.get("toolCalls") or []}
        elif kind in ("TEXT_MESSAGE_START", "TEXT_MESSAGE_CHUNK") and event.get("messageId"):
            add({"id": event["messageId"], "role": event.get("role") or "assistant", "content": ""})
            if kind == "TEXT_MESSAGE_CHUNK":
                by_id[event["messageId"]]["content"] += event.get("delta") or ""
        elif kind == "TEXT_MESSAGE_CONTENT":
            message = add({"id": event["messageId"], "role": "assistant", "content": ""})
            message["content"] = (message.get("content") or "") + event["delta"]
        elif kind in ("TOOL_CALL_START", "TOOL_CALL_CHUNK") and event.get("toolCallId") not in calls:
            parent_id = event.get("parentMessageId") or event["toolCallId"]
            parent = add({"id": parent_id, "role": "assistant"})
            call = {
                "id": event["toolCallId"],
                "type": "function",
                "function": {"name": event.get("toolCallName") or "", "arguments": ""},
            }
            parent.setdefault("toolCalls", []).append(call)
            calls[call["id"]] = call
            if kind == "TOOL_CALL_CHUNK":
                call["function"]["arguments"] += event.get("delta") or ""
        elif kind in ("TOOL_CALL_ARGS", "TOOL_CALL_CHUNK") and event.get("toolCallId") in calls:
            calls[event["toolCallId"]]["function"]["arguments"] += event.get("delta") or ""
        elif kind == "TOOL_CALL_RESULT":
            add(
                {
                    "id": event["messageId"],
                    "role": "tool",
                    "toolCallId": event["toolCallId"],
                    "content": event["content"],
                }
            )
        elif kind == "REASONING_MESSAGE_START":
            add({"id": event["messageId"], "role": "reasoning", "content": ""})
        elif kind == "REASONING_MESSAGE_CONTENT":
            message = add({"id": event["messageId"], "role": "reasoning", "content": ""})
            message["content"] += event["delta"]
        elif kind == "REASONING_ENCRYPTED_VALUE":
            entity = (
                calls.get(event["entityId"])
                if event["subtype"] == "tool-call"
                else by_id.get(event["entityId"])
            )
            if entity is None and event["subtype"] != "tool-call":
                entity = add({"id": event["entityId"], "role": "reasoning", "content": ""})
            if entity is not None:
                entity["encryptedValue"] = event["encryptedValue"]
    for message in messages:
        if message.get("role") == "assistant" and message.get("content") == "" and message.get("toolCalls"):
            del message["content"]
    return messages


def product_history(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the product used to send back, before it sent the full history (the captures'
    "product history" runs show what real servers make of it).

    User messages; assistant messages that have text, as text only (no ``toolCalls``; a turn that
    only called tools is left out); no tool messages; and every entity a message-subtype
    ``REASONING_ENCRYPTED_VALUE`` named, as an empty reasoning message at the end.
    """
    kept: list[dict[str, Any]] = []
    sealed: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "user":
            kept.append(copy.deepcopy(message))
        elif message["role"] == "assistant" and message.get("content"):
            kept.append({"id": message["id"], "role": "assistant", "content": message["content"]})
        if message["role"] in ("reasoning", "tool") and message.get("encryptedValue"):
            sealed.append(
                {
                    "id": message["id"],
                    "role": "reasoning",
                    "content": "",
                    "encryptedValue": message["encryptedValue"],
                }
            )
    return kept + sealed


def find_interrupts(events: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    for event in events:
        if event["type"] == "RUN_FINISHED" and (event.get("outcome") or {}).get("type") == "interrupt":
            return event["outcome"]["interrupts"]
    return []

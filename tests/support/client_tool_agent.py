"""A small AG-UI agent that calls the tools its client provides, for tests only.

    POST {base}/<mode>/               a run; the person's last words pick the call (see ``script``)
    GET  {base}/<mode>/capabilities   its declaration: ``offers`` declares tools.clientProvided true,
                                      ``refuses`` false, ``silent`` says nothing about tools

A run whose history ends with tool messages answers "Thanks: <their contents, joined by ' and '>". Every
RunAgentInput received is kept in ``RECEIVED`` so a test can check what the client sent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from agents_ui.sdk.agui.answer_forms import AGNO_CONFIRMATION
from tests.support.live_server import ThreadedUvicorn

__all__ = ["FORM_SCHEMA", "RECEIVED", "ClientToolAgentServer", "application", "script"]

MODES = {"offers": True, "refuses": False, "silent": None, "declares": True}
RECEIVED: list[dict[str, Any]] = []

FORM_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name on the booking", "minLength": 2},
        "guests": {"type": "integer", "title": "Guests", "minimum": 1, "maximum": 12},
        "diet": {"enum": ["none", "vegetarian", "vegan"], "title": "Diet"},
        "terrace": {"type": "boolean", "title": "Sit on the terrace"},
    },
    "required": ["name", "guests"],
}
# The agent's own tools, declared in ``declares`` mode (capabilities `tools.items`).
TICKET_SCHEMA = {
    "type": "object",
    "properties": {
        "title": {"type": "string"},
        "priority": {"$ref": "#/$defs/Priority"},
        "team": {
            "oneOf": [
                {"const": "facilities", "title": "Facilities"},
                {"const": "it", "title": "IT desk"},
                {"const": "security", "title": "Security"},
            ]
        },
        "labels": {"type": "array", "items": {"enum": ["urgent", "customer", "internal"]}},
        "site": {"enum": ["Berlin", "Lisbon", "Madrid", "Oslo", "Paris", "Rome"], "title": "Site"},
    },
    "$defs": {"Priority": {"enum": ["low", "normal", "high", "critical"], "title": "Priority"}},
}
DECLARED_TOOLS = [{"name": "file_ticket", "description": "File a ticket.", "parameters": TICKET_SCHEMA}]
CALLS: dict[str, tuple[str, dict[str, Any]]] = {
    "ask": (
        "ask_user",
        {"question": "Which city should the trip start from?", "suggestions": ["Paris", "Lisbon"]},
    ),
    "form": ("request_form", {"title": "Book a table", "schema": FORM_SCHEMA}),
    "confirm": ("confirm", {"summary": "Book the table for 4 at 19:00?", "confirm_label": "Book it"}),
    "choose": (
        "choose",
        {
            "question": "Which room?",
            "options": [
                {"value": "small", "label": "The small room"},
                {"value": "hall", "label": "The hall"},
            ],
        },
    ),
    # A tool the agent expects any client to have (AG-UI's dojo): the product does not offer it.
    "steps": ("generate_task_steps", {"steps": [{"description": "Draft", "status": "enabled"}]}),
    # A confirmation as Agno's AG-UI interface asks it: a call of the agent's own
    # `requires_confirmation` tool, in a message saying AGNO_CONFIRMATION (it reads {"accepted": bool}).
    "approval": ("delete_drafts", {"folder": "Drafts", "older_than_days": 30}),
    # The confirmation ag-ui-adk and the LangGraph examples emit after a predictive state update.
    "changes": ("confirm_changes", {}),
    # Agno's ask_user (UserFeedbackTools): it reads {"selections": {question: [labels]}}.
    "feedback": (
        "ask_user",
        {
            "questions": [
                {
                    "question": "Which cuisine?",
                    "header": "Cuisine",
                    "options": [{"label": "Thai"}, {"label": "Greek", "description": "Mezze to share"}],
                },
                {
                    "question": "Which extras?",
                    "options": [{"label": "Dessert"}, {"label": "Wine"}],
                    "multi_select": True,
                },
            ]
        },
    ),
    # A tool the agent declares (``declares`` mode) with a schema whose enums become choices.
    "triage": (
        "file_ticket",
        {
            "title": "Printer on fire",
            "priority": "high",
            "team": "facilities",
            "labels": ["urgent"],
            "site": "Oslo",
        },
    ),
    # LangChain's write_todos: its status vocabulary is a closed set without a schema.
    "todos": (
        "write_todos",
        {
            "todos": [
                {"content": "Book venue", "status": "completed"},
                {"content": "Send invites", "status": "pending"},
            ]
        },
    ),
    # Unknown, with nothing to draw a form from: answered in the person's own words.
    "weather": ("lookup_weather", {"days": 3}),
}

# Calls of tools the client does not offer, made whatever the client sent.
UNOFFERED = ("steps", "approval", "changes", "feedback", "triage", "todos", "weather")

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


def declaration(mode: str) -> dict[str, Any]:
    found: dict[str, Any] = {
        "identity": {"name": f"Client tools ({mode})", "description": "Calls the tools its client provides."},
        "transport": {"streaming": True},
    }
    if MODES[mode] is not None:
        found["tools"] = {"supported": True, "clientProvided": MODES[mode]}
    if mode == "declares":
        found["tools"]["items"] = DECLARED_TOOLS
    return found


def _text(message_id: str, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "TEXT_MESSAGE_START", "messageId": message_id, "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": message_id, "delta": text},
        {"type": "TEXT_MESSAGE_END", "messageId": message_id},
    ]


def script(run_input: dict[str, Any]) -> list[dict[str, Any]]:
    """The events of one run, from what the client sent."""
    thread, run = run_input.get("threadId", "t"), run_input.get("runId", "r")
    messages = run_input.get("messages") or []
    offered = [tool.get("name") for tool in run_input.get("tools") or []]
    events: list[dict[str, Any]] = [{"type": "RUN_STARTED", "threadId": thread, "runId": run}]
    said = f"msg-{uuid.uuid4().hex[:8]}"
    last = messages[-1] if messages else {}
    answers = []
    for message in reversed(messages):
        if message.get("role") != "tool":
            break
        answers.insert(0, str(message.get("content")))
    if answers:
        events += _text(said, f"Thanks: {' and '.join(answers)}")
    elif "both" in str(last.get("content") or "").lower():
        # Two calls at once: the client answers both before the agent goes on.
        for key in ("ask", "confirm"):
            name, args = CALLS[key]
            call = f"call-{key}"
            events += [
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": call,
                    "toolCallName": name,
                    "parentMessageId": said,
                },
                {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps(args)},
                {"type": "TOOL_CALL_END", "toolCallId": call},
            ]
    else:
        words = str(last.get("content") or "").lower()
        key = next((key for key in CALLS if key in words), None)
        name, args = CALLS[key] if key else ("", {})
        if key and (name in offered or key in UNOFFERED):
            # "again" reuses the call id, as pydantic-ai does from one run to the next (the model's id).
            call = "call-again" if "again" in words else f"call-{uuid.uuid4().hex[:8]}"
            if key == "approval":
                events += _text(said, AGNO_CONFIRMATION)
            events += [
                {
                    "type": "TOOL_CALL_START",
                    "toolCallId": call,
                    "toolCallName": name,
                    "parentMessageId": said,
                },
                {"type": "TOOL_CALL_ARGS", "toolCallId": call, "delta": json.dumps(args)},
                {"type": "TOOL_CALL_END", "toolCallId": call},
            ]
        elif key:
            events += _text(said, f"I need the {name} tool, which this client did not offer.")
        else:
            events += _text(said, f"Tools offered: {', '.join(offered) or 'none'}.")
    events.append({"type": "RUN_FINISHED", "threadId": thread, "runId": run})
    return events


async def _read(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


async def _respond(send: Send, status: int, content_type: str, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", content_type.encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def application(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    parts = [p for p in scope["path"].split("/") if p]
    body = await _read(receive)
    if not parts or parts[0] not in MODES:
        await _respond(send, 404, "application/json", b'{"error": {"code": "not_found"}}')
    elif len(parts) == 2 and parts[1] == "capabilities":
        await _respond(send, 200, "application/json", json.dumps(declaration(parts[0])).encode())
    elif len(parts) == 1 and scope["method"] == "POST":
        run_input = json.loads(body or b"{}")
        RECEIVED.append(run_input)
        frames = b"".join(f"data: {json.dumps(e)}\n\n".encode() for e in script(run_input))
        await _respond(send, 200, "text/event-stream", frames)
    else:
        await _respond(send, 405, "application/json", b'{"error": {"code": "invalid_request"}}')


class ClientToolAgentServer(ThreadedUvicorn):
    """uvicorn serving the agent from a thread of this process."""

    def __init__(self) -> None:
        super().__init__(application)

    def url_for(self, mode: str) -> str:
        return f"{self.url}/{mode}/"

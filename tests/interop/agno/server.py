"""An Agno agent served by Agno's own AgentOS with its AGUI interface, over a scripted model (no LLM, no key).

`python server.py --port N` serves on 127.0.0.1:
- `POST /agui`: Agno's AG-UI interface (agno/os/interfaces/agui/), the rest of AgentOS beside it;
- `POST /model/v1/chat/completions`: the scripted OpenAI-compatible chat-completions endpoint the
  agent's `OpenAILike` model is pointed at, so the whole of Agno's model layer (request, streamed
  chunks, tool calls, usage) runs as it does against a real provider.

`get_weather` is a plain tool, `issue_refund` and `delete_drafts` need a person's confirmation
(`@tool(requires_confirmation=True)`: Agno pauses the run and the AG-UI interface sends the call; the
answer is a tool message `{"accepted": bool, "note"?}`), `ask_user` is Agno's `UserFeedbackTools`
(answered `{"selections": {question: [labels]}}`), and `update_plan` writes the plan into the
session state, which the interface streams as STATE_SNAPSHOT / STATE_DELTA. The session lives in an
`InMemoryDb`. The user's last message picks the scenario (see ../common.py and SCENARIOS below).
"""

from __future__ import annotations

import importlib.util
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.models.openai import OpenAILike
from agno.os import AgentOS
from agno.os.interfaces.agui import AGUI
from agno.run import RunContext
from agno.tools import tool
from agno.tools.user_feedback import UserFeedbackTools
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)

MODEL_ID = "interop-scripted"
# Scenarios of this peer alone, looked for before the shared ones (../common.py).
SCENARIOS: tuple[tuple[str, str], ...] = (("drafts", "drafts"), ("dinner", "dinner"))
DRAFTS_ARGS = {"folder": "Drafts", "older_than_days": 30}
DINNER_QUESTIONS = [
    {
        "question": "Which cuisine?",
        "header": "Cuisine",
        "options": [{"label": "Thai"}, {"label": "Greek", "description": "Mezze"}],
    },
    {
        "question": "Which extras?",
        "header": "Extras",
        "options": [{"label": "Dessert"}, {"label": "Wine"}],
        "multi_select": True,
    },
]


# --- the scripted model: an OpenAI-compatible chat-completions endpoint -----------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return ""


def scenario_of(text: str) -> str:
    lowered = text.lower()
    for keyword, scenario in SCENARIOS:
        if keyword in lowered:
            return scenario
    return common.scenario_of(text)


def script(messages: list[dict[str, Any]], offered: set[str]) -> dict[str, Any]:
    """The model's next turn for this conversation: {"text": ...}, {"call": (name, args, id)},
    {"reasoning": ..., "text": ...} or {"fail": message}."""
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":
        # The answer after a tool ran, was rejected (Agno gives the note as its result), or a person
        # answered Agno's questions.
        return {"text": "Done: " + _text_of(last.get("content"))}
    user = next((m for m in reversed(messages) if m.get("role") == "user"), {})
    scenario = scenario_of(_text_of(user.get("content")))
    if scenario == "fail":
        return {"fail": common.FAILURE}
    if scenario == "think":
        return {
            "reasoning": ["The user asked me to think. ", "A short answer will do."],
            "text": "I thought about it: the answer is 42.",
        }
    if scenario == "weather":
        return {"call": ("get_weather", {"city": "Paris"}, "call_weather")}
    if scenario == "refund":
        return {"call": ("issue_refund", common.REFUND_ARGS, "call_refund")}
    if scenario == "drafts":
        return {"call": ("delete_drafts", DRAFTS_ARGS, "call_drafts")}
    if scenario == "state":
        return {"call": ("update_plan", {"step": "Ship"}, "call_plan")}
    if scenario == "dinner" and "ask_user" in offered:
        return {"call": ("ask_user", {"questions": DINNER_QUESTIONS}, "call_dinner")}
    # Earlier answers Agno put in the context from the session (add_history_to_context).
    earlier = sum(
        1 for m in messages[:-1] if m.get("role") == "assistant" and _text_of(m.get("content")).strip()
    )
    hello = "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
    return {"text": hello}


def _chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-interop",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == len(words) - 1 else w + " " for i, w in enumerate(words)]


def chunks(turn: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The turn as the streamed chunks a chat-completions provider sends, ending with the usage."""
    yield _chunk({"role": "assistant", "content": ""})
    for piece in turn.get("reasoning") or []:
        yield _chunk({"reasoning_content": piece})
    if "call" in turn:
        name, args, call_id = turn["call"]
        encoded = json.dumps(args)
        half = len(encoded) // 2
        head = {"index": 0, "id": call_id, "type": "function", "function": {"name": name, "arguments": ""}}
        yield _chunk({"tool_calls": [head]})
        for part in (encoded[:half], encoded[half:]):
            yield _chunk({"tool_calls": [{"index": 0, "function": {"arguments": part}}]})
        yield _chunk({}, "tool_calls")
    else:
        for word in _words(turn["text"]):
            yield _chunk({"content": word})
        yield _chunk({}, "stop")
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    yield {**_chunk({}), "choices": [], "usage": usage}


def completion(turn: dict[str, Any]) -> dict[str, Any]:
    """The turn as one non-streamed chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.get("text")}
    if "call" in turn:
        name, args, call_id = turn["call"]
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ]
    if turn.get("reasoning"):
        message["reasoning_content"] = "".join(turn["reasoning"])
    finish = "tool_calls" if "call" in turn else "stop"
    return {
        "id": "chatcmpl-interop",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": MODEL_ID,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


base = FastAPI()


@base.post("/model/v1/chat/completions")
async def chat_completions(request: Request) -> Response:
    body = await request.json()
    offered = {(t.get("function") or {}).get("name") for t in body.get("tools") or []}
    turn = script(body.get("messages") or [], offered)
    if "fail" in turn:
        # A 400 is not retried by the OpenAI client: the error reaches the run at once.
        error = {"error": {"message": turn["fail"], "type": "invalid_request_error", "code": "scripted"}}
        return JSONResponse(error, status_code=400)
    if not body.get("stream"):
        return JSONResponse(completion(turn))

    def stream() -> Iterator[str]:
        for chunk in chunks(turn):
            yield f"data: {json.dumps(chunk)}\n\n"
        yield "data: [DONE]\n\n"

    return StreamingResponse(stream(), media_type="text/event-stream")


# --- the agent ----------------------------------------------------------------------------------------


@tool
def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


@tool(requires_confirmation=True)
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a person's confirmation)."""
    return common.refund_text(order_id, amount)


@tool(requires_confirmation=True)
def delete_drafts(folder: str, older_than_days: int) -> str:
    """Delete old drafts (needs a person's confirmation)."""
    return f"deleted drafts in {folder} older than {older_than_days} days"


@tool
def update_plan(run_context: RunContext, step: str) -> str:
    """Mark a plan step done, in the session state (streamed to the client as AG-UI state)."""
    plan = json.loads(json.dumps(common.PLAN_STATE["plan"]))
    for item in plan["steps"]:
        if item["name"] == step:
            item["done"] = True
    if run_context.session_state is not None:
        run_context.session_state["plan"] = plan
    return f"Marked {step} done."


def build(port: int) -> FastAPI:
    agent = Agent(
        id="interop",
        name="Interop",
        model=OpenAILike(
            id=MODEL_ID,
            base_url=f"http://127.0.0.1:{port}/model/v1",
            api_key="interop-no-key",
            max_retries=0,
        ),
        tools=[get_weather, issue_refund, delete_drafts, update_plan, UserFeedbackTools()],
        db=InMemoryDb(),
        add_history_to_context=True,
        num_history_runs=20,
        telemetry=False,
    )
    agent_os = AgentOS(
        id="interop-os",
        agents=[agent],
        interfaces=[AGUI(agent=agent)],
        base_app=base,
        telemetry=False,
    )
    return agent_os.get_app()


if __name__ == "__main__":
    port = common.parse_args(__doc__.splitlines()[0]).port
    common.serve(build(port), port)

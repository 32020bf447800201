"""A Google ADK agent behind `ag-ui-adk`, scripted with its own `BaseLlm` (no Gemini, no key).

`python server.py --port N` serves on 127.0.0.1:
- `POST /` and `GET /capabilities`: the agent with a capability declaration;
- `POST /bare` and `GET /bare/capabilities`: the same agent declaring nothing (the adapter answers `{}`).

`issue_refund` needs a person's confirmation (`require_confirmation=True`, ADK's own mechanism),
`update_plan` writes session state, and the client's own tools come in through `AGUIToolset`.
The user's last message picks the scenario (see ../common.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from ag_ui_adk import ADKAgent, AGUIToolset, add_adk_fastapi_endpoint
from fastapi import FastAPI
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.tools import FunctionTool, ToolContext
from google.genai import types

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)

CAPABILITIES = {
    "identity": {"name": "interop-adk", "type": "adk"},
    "transport": {"streaming": True},
    "tools": {"supported": True, "clientProvided": True},
    "state": {"snapshots": True, "deltas": True},
    "humanInTheLoop": {"supported": True, "approvals": True},
    "reasoning": {"supported": True},
}


def _text(chunks: list[str], *, thought: bool = False, signature: bytes | None = None) -> list[LlmResponse]:
    """Streamed text, as Gemini sends it: partial chunks, then the whole turn."""
    partial = [
        LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=c, thought=thought or None)]),
            partial=True,
        )
        for c in chunks
    ]
    whole = types.Part(text="".join(chunks), thought=thought or None, thought_signature=signature)
    return [*partial, LlmResponse(content=types.Content(role="model", parts=[whole]), partial=False)]


def _words(text: str) -> list[str]:
    words = text.split(" ")
    return [w if i == len(words) - 1 else w + " " for i, w in enumerate(words)]


def _call(name: str, args: dict[str, Any], call_id: str) -> list[LlmResponse]:
    part = types.Part(function_call=types.FunctionCall(id=call_id, name=name, args=args))
    return [LlmResponse(content=types.Content(role="model", parts=[part]), partial=False)]


class ScriptedLlm(BaseLlm):
    """A model whose answers are scripted by the conversation it is given."""

    model: str = "interop-scripted"

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        for response in self._script(llm_request):
            yield response

    def _script(self, request: LlmRequest) -> list[LlmResponse]:
        contents = request.contents or []
        last = contents[-1] if contents else None
        answered = [p.function_response for p in (last.parts or []) if p.function_response] if last else []
        if answered:
            response = answered[-1].response
            result = response.get("result", response) if isinstance(response, dict) else response
            return _text(_words(f"Done: {result if isinstance(result, str) else json.dumps(result)}"))
        text = ""
        for content in reversed(contents):
            if content.role == "user":
                text = "".join(p.text or "" for p in content.parts or [])
                if text:
                    break
        scenario = common.scenario_of(text)
        if scenario == "fail":
            raise RuntimeError(common.FAILURE)
        if scenario == "think":
            thinking = _text(
                ["The user asked me to think. ", "A short answer will do."], thought=True, signature=b"sig-1"
            )
            return thinking + _text(_words("I thought about it: the answer is 42."))
        if scenario == "weather":
            return _call("get_weather", {"city": "Paris"}, "call_weather")
        if scenario == "refund":
            return _call("issue_refund", common.REFUND_ARGS, "call_refund")
        if scenario == "state":
            return _call("update_plan", {"step": "Ship"}, "call_plan")
        if scenario == "steps":
            offered = {
                d.name for tool in (request.config.tools or []) for d in (tool.function_declarations or [])
            }
            if common.CLIENT_TOOL in offered:
                return _call(
                    common.CLIENT_TOOL,
                    {"steps": [{"description": "Draft", "status": "enabled"}]},
                    "call_steps",
                )
            if common.ASK_TOOL in offered:
                # A client offering generic UI tools (as Agents UI does): ask through them instead.
                return _call(common.ASK_TOOL, common.ASK_ARGS, common.ASK_CALL_ID)
            return _text(_words(f"I need the {common.CLIENT_TOOL} tool, which this client did not offer."))
        earlier = sum(1 for c in contents[:-1] if c.role == "model")
        hello = (
            "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
        )
        return _text(_words(hello))


def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a person's confirmation)."""
    return common.refund_text(order_id, amount)


def update_plan(step: str, tool_context: ToolContext) -> str:
    """Mark a plan step done, in the session's state."""
    plan = json.loads(json.dumps(common.PLAN_STATE["plan"]))
    for item in plan["steps"]:
        if item["name"] == step:
            item["done"] = True
    tool_context.state["plan"] = plan
    return f"Marked {step} done."


def make_agent() -> LlmAgent:
    return LlmAgent(
        name="interop",
        model=ScriptedLlm(),
        instruction="Answer briefly.",
        tools=[
            get_weather,
            FunctionTool(issue_refund, require_confirmation=True),
            update_plan,
            AGUIToolset(),
        ],
    )


def adapter(capabilities: dict[str, Any] | None) -> ADKAgent:
    return ADKAgent(
        adk_agent=make_agent(),
        app_name="interop",
        user_id="interop-user",
        use_in_memory_services=True,
        emit_interrupt_outcome=True,
        capabilities=capabilities,
    )


app = FastAPI()
add_adk_fastapi_endpoint(app, adapter(CAPABILITIES), "/")
add_adk_fastapi_endpoint(app, adapter(None), "/bare")

if __name__ == "__main__":
    common.serve(app, common.parse_args(__doc__.splitlines()[0]).port)

"""An AWS Strands agent behind `ag-ui-strands`, scripted with its own `Model` (no Bedrock, no key).

`python server.py --port N` serves `POST /` on 127.0.0.1 (and the adapter's own `GET /ping`).
`get_weather` is a server tool, `update_plan` reports the plan as AG-UI state through the adapter's
`state_from_result`, `issue_refund` asks before it runs (`interrupt_on_call`, the adapter's
approval), and the client's own tools (RunAgentInput.tools) become the adapter's proxy tools.
The user's last message picks the scenario (see ../common.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from ag_ui_strands import StrandsAgent, StrandsAgentConfig, ToolBehavior, add_strands_fastapi_endpoint
from fastapi import FastAPI
from strands import Agent, tool
from strands.models import Model

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)


def _text(text: str) -> list[dict[str, Any]]:
    """A streamed text turn, in the ConverseStream shape Strands models yield."""
    words = text.split(" ")
    deltas = [
        {"contentBlockDelta": {"delta": {"text": w if i == len(words) - 1 else w + " "}}}
        for i, w in enumerate(words)
    ]
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        *deltas,
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def _call(name: str, args: dict[str, Any], call_id: str) -> list[dict[str, Any]]:
    encoded = json.dumps(args)
    half = len(encoded) // 2
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {"toolUse": {"toolUseId": call_id, "name": name}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": encoded[:half]}}}},
        {"contentBlockDelta": {"delta": {"toolUse": {"input": encoded[half:]}}}},
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "tool_use"}},
    ]


def _reasoning() -> list[dict[str, Any]]:
    return [
        {"messageStart": {"role": "assistant"}},
        {"contentBlockStart": {"start": {}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "The user asked me to think. "}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"text": "A short answer will do."}}}},
        {"contentBlockDelta": {"delta": {"reasoningContent": {"signature": "sig-1"}}}},
        {"contentBlockStop": {}},
        {"contentBlockStart": {"start": {}}},
        *[e for e in _text("I thought about it: the answer is 42.") if "contentBlockDelta" in e],
        {"contentBlockStop": {}},
        {"messageStop": {"stopReason": "end_turn"}},
    ]


def _user_text(message: dict[str, Any]) -> str:
    return "".join(block.get("text") or "" for block in message.get("content") or [] if "text" in block)


def script(messages: list[dict[str, Any]], offered: set[str]) -> list[dict[str, Any]]:
    last = messages[-1] if messages else {}
    results = [block["toolResult"] for block in last.get("content") or [] if "toolResult" in block]
    if results:
        content = results[-1].get("content") or []
        parts = [c["text"] if "text" in c else json.dumps(c.get("json")) for c in content]
        return _text("Done: " + "".join(parts))
    text = next((_user_text(m) for m in reversed(messages) if m["role"] == "user" and _user_text(m)), "")
    scenario = common.scenario_of(text)
    if scenario == "fail":
        raise RuntimeError(common.FAILURE)
    if scenario == "think":
        return _reasoning()
    if scenario == "weather":
        return _call("get_weather", {"city": "Paris"}, "call_weather")
    if scenario == "refund":
        return _call("issue_refund", common.REFUND_ARGS, "call_refund")
    if scenario == "state":
        return _call("update_plan", {"step": "Ship"}, "call_plan")
    if scenario == "steps":
        if common.CLIENT_TOOL in offered:
            args = {"steps": [{"description": "Draft", "status": "enabled"}]}
            return _call(common.CLIENT_TOOL, args, "call_steps")
        if common.ASK_TOOL in offered:
            # A client offering generic UI tools (as Agents UI does): ask through them instead.
            return _call(common.ASK_TOOL, common.ASK_ARGS, common.ASK_CALL_ID)
        return _text(f"I need the {common.CLIENT_TOOL} tool, which this client did not offer.")
    earlier = sum(1 for m in messages[:-1] if m["role"] == "assistant" and _user_text(m))
    hello = "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
    return _text(hello)


class ScriptedModel(Model):
    """A model whose answers are scripted by the conversation it is given."""

    def __init__(self) -> None:
        self.config: dict[str, Any] = {"model_id": "interop-scripted"}

    def update_config(self, **model_config: Any) -> None:
        self.config.update(model_config)

    def get_config(self) -> dict[str, Any]:
        return self.config

    def structured_output(self, output_model: Any, prompt: Any, system_prompt: Any = None, **kwargs: Any):
        raise NotImplementedError("the scripted model gives no structured output")

    async def stream(
        self, messages: Any, tool_specs: Any = None, system_prompt: Any = None, **kwargs: Any
    ) -> AsyncIterator[dict[str, Any]]:
        offered = {spec.get("name") for spec in tool_specs or []}
        for event in script(list(messages), offered):
            yield event


@tool
def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


@tool
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a person's approval)."""
    return common.refund_text(order_id, amount)


@tool
def update_plan(step: str) -> str:
    """Mark a plan step done (the adapter reports the plan as AG-UI state)."""
    return f"Marked {step} done."


def plan_state(context: Any) -> dict[str, Any]:
    plan = json.loads(json.dumps(common.PLAN_STATE["plan"]))
    step = (context.tool_input or {}).get("step")
    for item in plan["steps"]:
        if item["name"] == step:
            item["done"] = True
    return {"plan": plan}


agent = StrandsAgent(
    Agent(model=ScriptedModel(), tools=[get_weather, issue_refund, update_plan], callback_handler=None),
    name="interop",
    config=StrandsAgentConfig(
        tool_behaviors={
            "update_plan": ToolBehavior(state_from_result=plan_state),
            "issue_refund": ToolBehavior(interrupt_on_call=True),
        }
    ),
)

app = FastAPI()
add_strands_fastapi_endpoint(app, agent, "/")

if __name__ == "__main__":
    common.serve(app, common.parse_args(__doc__.splitlines()[0]).port)

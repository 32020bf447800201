"""A pydantic-ai agent behind its own AG-UI adapter, scripted with a FunctionModel (no LLM, no key).

`python server.py --port N` serves two endpoints on 127.0.0.1:
- `POST /`: the default history mode, the client sends the whole conversation on every run;
- `POST /store`: the server keeps the conversation in an in-memory conversation store.

The user's last message picks the scenario (see ../common.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator
from pathlib import Path

from ag_ui.core import EventType, StateDeltaEvent, StateSnapshotEvent
from pydantic_ai import Agent
from pydantic_ai.conversation_store import InMemoryConversationStore
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    ToolReturn,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, DeltaThinkingPart, DeltaToolCall, FunctionModel
from pydantic_ai.tools import DeferredToolRequests
from pydantic_ai.ui.ag_ui import AGUIAdapter
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)


def _last_user_text(messages: list[ModelMessage]) -> str:
    for message in reversed(messages):
        if isinstance(message, ModelRequest):
            for part in reversed(message.parts):
                if isinstance(part, UserPromptPart):
                    return part.content if isinstance(part.content, str) else str(part.content)
    return ""


def _earlier_answers(messages: list[ModelMessage]) -> int:
    return sum(1 for m in messages[:-1] if isinstance(m, ModelResponse))


async def _words(text: str) -> AsyncIterator[str]:
    words = text.split(" ")
    for i, word in enumerate(words):
        yield word if i == len(words) - 1 else word + " "


async def script(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[object]:
    last = messages[-1]
    returns = (
        [p for p in last.parts if isinstance(p, ToolReturnPart | RetryPromptPart)]
        if isinstance(last, ModelRequest)
        else []
    )
    if returns:
        # The answer after a tool ran (or was denied, or the client answered it).
        part = returns[-1]
        content = part.content if isinstance(part, ToolReturnPart) else part.model_response()
        if isinstance(part, ToolReturnPart) and getattr(part, "outcome", "success") == "denied":
            text = f"The {part.tool_name} call was not made: {content}"
        else:
            text = f"Done: {content if isinstance(content, str) else json.dumps(content)}"
        async for word in _words(text):
            yield word
        return

    scenario = common.scenario_of(_last_user_text(messages))
    if scenario == "fail":
        raise RuntimeError(common.FAILURE)
    if scenario == "think":
        yield {0: DeltaThinkingPart(content="The user asked me to think. ")}
        yield {0: DeltaThinkingPart(content="A short answer will do.", signature="sig-think-1")}
        async for word in _words("I thought about it: the answer is 42."):
            yield word
        return
    if scenario == "weather":
        yield {0: DeltaToolCall(name="get_weather", json_args='{"city": ', tool_call_id="call_weather")}
        yield {0: DeltaToolCall(json_args='"Paris"}')}
        return
    if scenario == "refund":
        args = json.dumps(common.REFUND_ARGS)
        yield {0: DeltaToolCall(name="issue_refund", json_args=args[:12], tool_call_id="call_refund")}
        yield {0: DeltaToolCall(json_args=args[12:])}
        return
    if scenario == "state":
        yield {0: DeltaToolCall(name="update_plan", json_args='{"step": "Ship"}', tool_call_id="call_plan")}
        return
    if scenario == "steps":
        if any(tool.name == common.CLIENT_TOOL for tool in info.function_tools):
            args = json.dumps({"steps": [{"description": "Draft", "status": "enabled"}]})
            yield {0: DeltaToolCall(name=common.CLIENT_TOOL, json_args=args, tool_call_id="call_steps")}
            return
        if any(tool.name == common.ASK_TOOL for tool in info.function_tools):
            # A client offering generic UI tools (as Agents UI does): ask through them instead.
            args = json.dumps(common.ASK_ARGS)
            yield {0: DeltaToolCall(name=common.ASK_TOOL, json_args=args, tool_call_id=common.ASK_CALL_ID)}
            return
        async for word in _words(f"I need the {common.CLIENT_TOOL} tool, which this client did not offer."):
            yield word
        return
    earlier = _earlier_answers(messages)
    text = "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
    async for word in _words(text):
        yield word


agent = Agent(FunctionModel(stream_function=script), output_type=[str, DeferredToolRequests], name="interop")


@agent.tool_plain
def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


@agent.tool_plain(requires_approval=True)
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a person's approval)."""
    return common.refund_text(order_id, amount)


@agent.tool_plain
def update_plan(step: str) -> ToolReturn:
    """Mark a plan step done, reporting the plan as AG-UI state."""
    plan = json.loads(json.dumps(common.PLAN_STATE))
    return ToolReturn(
        return_value=f"Marked {step} done.",
        metadata=[
            StateSnapshotEvent(type=EventType.STATE_SNAPSHOT, snapshot=plan),
            StateDeltaEvent(
                type=EventType.STATE_DELTA,
                delta=[{"op": "replace", "path": "/plan/steps/1/done", "value": True}],
            ),
        ],
    )


STORE = InMemoryConversationStore()


async def client_history(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(request, agent=agent)


async def server_history(request: Request) -> Response:
    return await AGUIAdapter.dispatch_request(
        request, agent=agent, conversation_store=STORE, conversation_scope="interop"
    )


app = Starlette(
    routes=[Route("/", client_history, methods=["POST"]), Route("/store", server_history, methods=["POST"])]
)

if __name__ == "__main__":
    common.serve(app, common.parse_args(__doc__.splitlines()[0]).port)

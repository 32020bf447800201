"""A Microsoft Agent Framework agent behind `agent-framework-ag-ui`, on a scripted chat client.

`python server.py --port N` serves `POST /` on 127.0.0.1, declared single-user (the endpoint
refuses to start without an authorization choice). The chat client is a `BaseChatClient` with the
framework's own function-invocation, middleware and telemetry layers, as its providers compose
them; its answers are scripted. `issue_refund` has `approval_mode="always_require"`, `update_plan`
returns `state_update(...)`, and the client's own tools arrive through RunAgentInput.tools.
The user's last message picks the scenario (see ../common.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_framework import (
    Agent,
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    Message,
    ResponseStream,
    tool,
)
from agent_framework._middleware import ChatMiddlewareLayer
from agent_framework._tools import FunctionInvocationLayer
from agent_framework.observability import ChatTelemetryLayer
from agent_framework_ag_ui import add_agent_framework_fastapi_endpoint, state_update
from fastapi import FastAPI

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)


def _words(text: str) -> list[ChatResponseUpdate]:
    words = text.split(" ")
    return [
        ChatResponseUpdate(
            role="assistant", contents=[Content.from_text(w if i == len(words) - 1 else w + " ")]
        )
        for i, w in enumerate(words)
    ]


def _call(name: str, args: dict[str, Any], call_id: str) -> list[ChatResponseUpdate]:
    call = Content.from_function_call(call_id=call_id, name=name, arguments=json.dumps(args))
    return [ChatResponseUpdate(role="assistant", contents=[call])]


def _text_of(message: Message) -> str:
    return "".join(c.text or "" for c in message.contents if c.type == "text")


def script(messages: Sequence[Message], options: Mapping[str, Any]) -> list[ChatResponseUpdate]:
    last = messages[-1] if messages else None
    results = [c for c in (last.contents if last else []) if c.type == "function_result"]
    if results:
        result = results[-1].result
        return _words(f"Done: {result if isinstance(result, str) else json.dumps(result)}")
    text = next((_text_of(m) for m in reversed(messages) if m.role == "user" and _text_of(m)), "")
    scenario = common.scenario_of(text)
    if scenario == "fail":
        raise RuntimeError(common.FAILURE)
    if scenario == "think":
        reasoning = [
            ChatResponseUpdate(
                role="assistant",
                contents=[Content.from_text_reasoning(id="rs_1", text="The user asked me to think. ")],
            ),
            ChatResponseUpdate(
                role="assistant",
                contents=[
                    Content.from_text_reasoning(
                        id="rs_1", text="A short answer will do.", protected_data="sig-1"
                    )
                ],
            ),
        ]
        return reasoning + _words("I thought about it: the answer is 42.")
    if scenario == "weather":
        return _call("get_weather", {"city": "Paris"}, "call_weather")
    if scenario == "refund":
        return _call("issue_refund", common.REFUND_ARGS, "call_refund")
    if scenario == "state":
        return _call("update_plan", {"step": "Ship"}, "call_plan")
    if scenario == "steps":
        offered = {getattr(t, "name", None) for t in options.get("tools") or []}
        if common.CLIENT_TOOL in offered:
            return _call(
                common.CLIENT_TOOL, {"steps": [{"description": "Draft", "status": "enabled"}]}, "call_steps"
            )
        if common.ASK_TOOL in offered:
            # A client offering generic UI tools (as Agents UI does): ask through them instead.
            return _call(common.ASK_TOOL, common.ASK_ARGS, common.ASK_CALL_ID)
        return _words(f"I need the {common.CLIENT_TOOL} tool, which this client did not offer.")
    earlier = sum(1 for m in messages[:-1] if m.role == "assistant" and _text_of(m))
    return _words(
        "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
    )


class ScriptedChatClient(
    FunctionInvocationLayer[Any],
    ChatMiddlewareLayer[Any],
    ChatTelemetryLayer[Any],
    BaseChatClient[Any],
):
    """A chat client whose answers are scripted by the conversation it is given."""

    def __init__(self) -> None:
        super().__init__(middleware=[])

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool = False, options: Mapping[str, Any], **kwargs: Any
    ) -> Any:
        if stream:

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                for update in script(messages, options):
                    yield update

            return ResponseStream(updates(), finalizer=ChatResponse.from_updates)

        async def whole() -> ChatResponse:
            return ChatResponse.from_updates(script(messages, options))

        return whole()


@tool
def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


@tool(approval_mode="always_require")
def issue_refund(order_id: str, amount: float) -> str:
    """Refund an order (needs a person's approval)."""
    return common.refund_text(order_id, amount)


@tool
def update_plan(step: str) -> Content:
    """Mark a plan step done, in the AG-UI state."""
    plan = json.loads(json.dumps(common.PLAN_STATE["plan"]))
    for item in plan["steps"]:
        if item["name"] == step:
            item["done"] = True
    return state_update(f"Marked {step} done.", state={"plan": plan})


agent = Agent(
    client=ScriptedChatClient(),
    name="interop",
    instructions="Answer briefly.",
    tools=[get_weather, issue_refund, update_plan],
)

app = FastAPI()
add_agent_framework_fastapi_endpoint(
    app, agent, "/", state_schema={"plan": {"type": "object"}}, single_user=True
)

if __name__ == "__main__":
    common.serve(app, common.parse_args(__doc__.splitlines()[0]).port)

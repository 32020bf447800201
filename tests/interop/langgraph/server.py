"""A LangGraph graph behind `ag-ui-langgraph`, scripted with a fake chat model (no LLM, no key).

`python server.py --port N` serves `POST /` on 127.0.0.1 (and the adapter's own `GET /health`).
The graph is the AG-UI dojo's shape: an `agent` node calling the model, a `tools` node running the
server's tools, and the client's own tools (RunAgentInput.tools) left for the client. `issue_refund`
asks for approval with `interrupt()`; `update_plan` writes graph state; `task` delegates to a
`researcher` sub-agent (a `create_agent` graph, as deepagents does), shown with
`subagent_visibility="attributed"`. The user's last message picks the scenario (see ../common.py).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Annotated, Any, NotRequired

from ag_ui_langgraph import LangGraphAgent, add_langgraph_fastapi_endpoint
from fastapi import FastAPI
from langchain.agents import create_agent
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import InjectedToolCallId, tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

_spec = importlib.util.spec_from_file_location("interop_common", Path(__file__).parent.parent / "common.py")
common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(common)

APPROVAL_SCHEMA = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "editedArgs": {"type": "object"},
        "reason": {"type": "string"},
    },
    "required": ["approved"],
}


def _chunks_for(messages: list[BaseMessage], client_tools: list[str]) -> list[AIMessageChunk]:
    """The scripted answer to a conversation, as the chunks a streaming model would send."""
    last = messages[-1]
    if isinstance(last, ToolMessage):
        return _words(f"Done: {last.content}")
    text = next((m.content for m in reversed(messages) if isinstance(m, HumanMessage)), "")
    scenario = common.scenario_of(text if isinstance(text, str) else json.dumps(text))
    if scenario == "fail":
        raise RuntimeError(common.FAILURE)
    if scenario == "think":
        thinking = [
            AIMessageChunk(
                content=[{"type": "thinking", "thinking": "The user asked me to think. ", "index": 0}]
            ),
            AIMessageChunk(
                content=[
                    {
                        "type": "thinking",
                        "thinking": "A short answer will do.",
                        "signature": "sig-1",
                        "index": 0,
                    }
                ]
            ),
        ]
        # Anthropic's shape: after thinking blocks, text blocks of their own index.
        text = [
            AIMessageChunk(content=[{"type": "text", "text": c.content, "index": 1}])
            for c in _words("I thought about it: the answer is 42.")
        ]
        return thinking + text
    if scenario == "weather":
        return _call("get_weather", {"city": "Paris"}, "call_weather")
    if scenario == "refund":
        return _call("issue_refund", common.REFUND_ARGS, "call_refund")
    if scenario == "state":
        return _call("update_plan", {"step": "Ship"}, "call_plan")
    if scenario == "subagent":
        args = {"description": "Find the launch date.", "subagent_type": "researcher"}
        return _call("task", args, "call_task", whole=True)
    if scenario == "steps":
        if common.CLIENT_TOOL in client_tools:
            args = {"steps": [{"description": "Draft", "status": "enabled"}]}
            return _call(common.CLIENT_TOOL, args, "call_steps")
        if common.ASK_TOOL in client_tools:
            # A client offering generic UI tools (as Agents UI does): ask through them instead.
            return _call(common.ASK_TOOL, common.ASK_ARGS, common.ASK_CALL_ID)
        return _words(f"I need the {common.CLIENT_TOOL} tool, which this client did not offer.")
    earlier = sum(1 for m in messages[:-1] if isinstance(m, AIMessage))
    return _words(
        "Hello! How can I help?" if earlier == 0 else f"Hello again! I see {earlier} earlier answer(s)."
    )


def _words(text: str) -> list[AIMessageChunk]:
    words = text.split(" ")
    return [AIMessageChunk(content=w if i == len(words) - 1 else w + " ") for i, w in enumerate(words)]


def _call(name: str, args: dict[str, Any], call_id: str, *, whole: bool = False) -> list[AIMessageChunk]:
    """A streamed tool call: OpenAI's shape (name and id first, then the arguments in pieces), or with
    ``whole`` the call in one chunk, as Gemini sends it."""
    encoded = json.dumps(args)
    if whole:
        return [
            AIMessageChunk(
                content="", tool_call_chunks=[{"name": name, "args": encoded, "id": call_id, "index": 0}]
            )
        ]
    half = len(encoded) // 2
    pieces = ["", encoded[:half], encoded[half:]]
    return [
        AIMessageChunk(
            content="",
            tool_call_chunks=[
                {
                    "name": name if i == 0 else None,
                    "args": piece,
                    "id": call_id if i == 0 else None,
                    "index": 0,
                }
            ],
        )
        for i, piece in enumerate(pieces)
    ]


class ScriptedChatModel(BaseChatModel):
    """A chat model whose answers are scripted by the conversation; tools are bound by name only."""

    client_tools: list[str] = []
    fixed_answer: str | None = None

    @property
    def _llm_type(self) -> str:
        return "interop-scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _script(self, messages: list[BaseMessage]) -> list[AIMessageChunk]:
        if self.fixed_answer is not None:
            return _words(self.fixed_answer)
        return _chunks_for(messages, self.client_tools)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> Iterator[ChatGenerationChunk]:
        for chunk in self._script(messages):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._script(messages):
            generation = ChatGenerationChunk(message=chunk)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=generation)
            yield generation

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: Any = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kw: Any,
    ) -> ChatResult:
        merged: AIMessageChunk | None = None
        for chunk in self._script(messages):
            merged = chunk if merged is None else merged + chunk
        assert merged is not None
        return ChatResult(
            generations=[ChatGeneration(message=AIMessage(**merged.model_dump(exclude={"type"})))]
        )


class State(MessagesState):
    tools: NotRequired[list[Any]]
    plan: NotRequired[dict[str, Any]]


@tool
def get_weather(city: str) -> dict:
    """The current weather in a city."""
    return {**common.WEATHER, "city": city}


@tool
def issue_refund(order_id: str, amount: float, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
    """Refund an order (needs a person's approval)."""
    decision = interrupt(
        {
            "reason": "tool_call",
            "message": f"Refund {amount:g} EUR on order {order_id}?",
            "toolCallId": tool_call_id,
            "responseSchema": APPROVAL_SCHEMA,
        }
    )
    if not isinstance(decision, dict) or decision.get("approved") is not True:
        reason = decision.get("reason") if isinstance(decision, dict) else None
        return f"Refund declined: {reason or 'no reason given'}"
    args = {"order_id": order_id, "amount": amount, **(decision.get("editedArgs") or {})}
    return common.refund_text(args["order_id"], float(args["amount"]))


@tool
def update_plan(step: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Command:
    """Mark a plan step done, in the graph's state."""
    plan = json.loads(json.dumps(common.PLAN_STATE["plan"]))
    for item in plan["steps"]:
        if item["name"] == step:
            item["done"] = True
    return Command(
        update={"plan": plan, "messages": [ToolMessage(f"Marked {step} done.", tool_call_id=tool_call_id)]}
    )


researcher = create_agent(
    model=ScriptedChatModel(fixed_answer="The launch is on Friday."), tools=[], name="researcher"
)


@tool
async def task(description: str, subagent_type: str) -> str:
    """Delegate a piece of work to a sub-agent."""
    result = await researcher.ainvoke({"messages": [HumanMessage(description)]})
    return result["messages"][-1].content


SERVER_TOOLS = [get_weather, issue_refund, update_plan, task]
SERVER_TOOL_NAMES = {t.name for t in SERVER_TOOLS}


async def agent_node(state: State, config: RunnableConfig) -> dict:
    client_tools = [t.get("name") for t in state.get("tools") or [] if isinstance(t, dict)]
    model = ScriptedChatModel(client_tools=client_tools)
    return {"messages": [await model.ainvoke(state["messages"], config)]}


def route(state: State) -> str:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and any(call["name"] in SERVER_TOOL_NAMES for call in last.tool_calls):
        return "tools"
    return END  # text, or a call of the client's own tool: the client runs it


builder = StateGraph(State)
builder.add_node("agent", agent_node)
builder.add_node("tools", ToolNode(SERVER_TOOLS))
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", route, ["tools", END])
builder.add_edge("tools", "agent")
graph = builder.compile(checkpointer=InMemorySaver())

app = FastAPI()
add_langgraph_fastapi_endpoint(
    app,
    LangGraphAgent(
        name="interop", graph=graph, emit_interrupt_outcome=True, subagent_visibility="attributed"
    ),
    "/",
)

if __name__ == "__main__":
    common.serve(app, common.parse_args(__doc__.splitlines()[0]).port)

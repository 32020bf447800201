"""Capture what each real AG-UI peer sends, byte for byte, into tests/fixtures/interop/.

    python tests/interop/capture.py [peer ...]

For every run it writes ``<label>-<thread>-<n>.sse`` (the response body as received) and
``<label>-<thread>-<n>.request.json`` (the RunAgentInput posted), and it regenerates the README table
there from what it ran. Requests are built with ``ag_ui.core.RunAgentInput`` and serialised as the
product's SDK serialises them. Histories sent back are built by ``history.full_history`` (what
AG-UI's client keeps) unless a step says it sends ``history.product_history`` (what the product
sends today).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from ag_ui.core import RunAgentInput, Tool

sys.path.insert(0, str(Path(__file__).resolve().parent))

import history
from peers import PEERS, ROOT, Peer, RunningPeer, running

OUT = ROOT / "tests" / "fixtures" / "interop"

# The client-provided tool the "steps" scenario offers (the shape of the AG-UI dojo's own).
STEPS_TOOL = Tool(
    name="generate_task_steps",
    description="Show the user a list of steps to confirm.",
    parameters={
        "type": "object",
        "properties": {
            "steps": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"description": {"type": "string"}, "status": {"type": "string"}},
                    "required": ["description", "status"],
                },
            }
        },
        "required": ["steps"],
    },
)
STEPS_ANSWER = {"confirmed": True, "steps": [{"description": "Draft", "status": "enabled"}]}

APPROVE = {"approved": True}
REJECT = {"approved": False, "reason": "Not this order."}
# Agent Framework's responseSchema allows no other key (additionalProperties: false).
REJECT_PLAIN = {"approved": False}
EDIT = {"approved": True, "editedArgs": {"order_id": "A-1001", "amount": 20}}


@dataclass
class Record:
    file: str
    label: str
    thread: str
    step: int
    path: str
    what: str
    request: str
    events: list[str]


@dataclass
class Thread:
    """One conversation with a peer: each ``send`` is a run whose history follows the last."""

    capture: Capture
    name: str
    endpoint: str = "default"
    messages: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    state: Any = None
    step: int = 0

    @property
    def interrupts(self) -> list[dict[str, Any]]:
        return history.find_interrupts(self.events)

    def send(
        self,
        what: str,
        request: str,
        *,
        text: str | None = None,
        messages: list[dict[str, Any]] | None = None,
        resume: list[dict[str, Any]] | None = None,
        tools: list[Tool] | None = None,
        product_history: bool = False,
    ) -> list[dict[str, Any]]:
        self.step += 1
        sent = list(self.messages if messages is None else messages)
        if product_history:
            sent = history.product_history(sent)
        if text is not None:
            sent.append(history.user(f"{self.name}-user-{self.step}", text))
        body = RunAgentInput(
            thread_id=f"{self.capture.label}-{self.name}",
            run_id=f"{self.capture.label}-{self.name}-run-{self.step}",
            protocol_version="1.0",
            messages=sent,
            state=self.state,
            tools=tools or [],
            context=[],
            resume=resume,
        ).model_dump_json(by_alias=True)
        _raw, events = self.capture.post(self, body, what, request)
        self.events = events
        self.messages = history.full_history(sent, events)
        for event in events:
            if event["type"] == "STATE_SNAPSHOT":
                self.state = event["snapshot"]
        return events

    def resume(self, what: str, payload: Any, **kwargs: Any) -> list[dict[str, Any]]:
        entries = [
            {"interruptId": i["id"], "status": "resolved", "payload": payload} for i in self.interrupts
        ]
        return self.send(
            what, kwargs.pop("request", f"resume {json.dumps(payload)}"), resume=entries, **kwargs
        )


class Capture:
    def __init__(self, handle: RunningPeer, label: str, records: list[Record]) -> None:
        self.handle = handle
        self.label = label
        self.records = records
        self.client = httpx.Client(timeout=60)

    def thread(self, name: str, endpoint: str = "default") -> Thread:
        return Thread(self, name, endpoint)

    def discovery(self, name: str, endpoint: str, what: str) -> None:
        """``GET {url}/capabilities``, saved as ``<label>-<name>.json``."""
        url = self.handle.url(endpoint).rstrip("/") + "/capabilities"
        response = self.client.get(url, headers={"Accept": "application/json"})
        (OUT / f"{self.label}-{name}.json").write_bytes(response.content)
        path = url.removeprefix(self.handle.base_url)
        self.records.append(
            Record(f"{self.label}-{name}.json", self.label, name, 0, path, what, f"GET {path}", [])
        )

    def post(self, thread: Thread, body: str, what: str, request: str) -> tuple[bytes, list[dict[str, Any]]]:
        url = self.handle.url(thread.endpoint)
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        with self.client.stream("POST", url, content=body, headers=headers) as response:
            raw = response.read()
        stem = f"{self.label}-{thread.name}-{thread.step}"
        if response.status_code != 200 or not response.headers.get("content-type", "").startswith(
            "text/event-stream"
        ):
            raise RuntimeError(
                f"{stem}: HTTP {response.status_code}: {raw[:500]!r}\n{self.handle.log_tail()}"
            )
        (OUT / f"{stem}.sse").write_bytes(raw)
        (OUT / f"{stem}.request.json").write_text(json.dumps(json.loads(body), indent=2) + "\n")
        events = history.sse_events(raw)
        self.records.append(
            Record(
                f"{stem}.sse",
                self.label,
                thread.name,
                thread.step,
                self.handle.peer.path(thread.endpoint),
                what,
                request,
                [e["type"] for e in events],
            )
        )
        return raw, events


# --- what is run against every peer --------------------------------------------------------------


def common_threads(c: Capture, endpoint: str = "default", *, product_resume: bool = True) -> None:
    t = c.thread("hello", endpoint)
    t.send("streamed text", "user: hello", text="hello")
    t.send("a second message in the same thread", "full history + user: hello again", text="hello again")

    t = c.thread("think", endpoint)
    t.send("reasoning", "user: think about it", text="think about it")
    t.send(
        "the reasoning sent back, then a second message",
        "full history (reasoning kept) + user: hello",
        text="hello",
    )

    t = c.thread("weather", endpoint)
    t.send("a tool call and its result", "user: what is the weather", text="what is the weather in Paris?")
    t.send(
        "the same tool again in the thread", "full history + user: weather again", text="and the weather now?"
    )

    t = c.thread("state", endpoint)
    t.send("state events", "user: update the state", text="update the state")
    t.send(
        "a second message after state", "full history, state from the snapshot + user: hello", text="hello"
    )

    c.thread("fail", endpoint).send("a run error", "user: fail", text="please fail")

    t = c.thread("steps", endpoint)
    t.send(
        "a client-provided tool called",
        "user: plan the steps, tools: [generate_task_steps]",
        text="plan the steps",
        tools=[STEPS_TOOL],
    )
    answered = [*t.messages, history.tool_answer("steps-answer", _pending_call(t.messages), STEPS_ANSWER)]
    t.send(
        "the client's answer sent back",
        "full history + tool message answering the call",
        messages=answered,
        tools=[STEPS_TOOL],
    )
    c.thread("steps-unoffered", endpoint).send(
        "the same request with tools: [] (what the product sends)",
        "user: plan the steps, tools: []",
        text="plan the steps",
    )

    for decision, payload in (("approve", APPROVE), ("reject", REJECT), ("edit", EDIT)):
        t = c.thread(f"refund-{decision}", endpoint)
        t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
        t.resume(
            f"the resume after {decision}", payload, request=f"full history + resume {json.dumps(payload)}"
        )
        if decision == "approve":
            t.send("a second message after the resume", "full history + user: hello", text="hello")
    if product_resume:
        t = c.thread("refund-product-history", endpoint)
        t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
        t.resume(
            "the resume with the product's history",
            APPROVE,
            product_history=True,
            request="product history (no toolCalls, no tool messages) + resume approve",
        )
        t.send(
            "a second message, product history",
            "product history + user: hello",
            text="hello",
            product_history=True,
        )


def _pending_call(messages: list[dict[str, Any]]) -> str:
    answered = {m.get("toolCallId") for m in messages if m["role"] == "tool"}
    for message in reversed(messages):
        for call in message.get("toolCalls") or []:
            if call["id"] not in answered:
                return call["id"]
    raise RuntimeError("no pending tool call to answer")


def capture_pydantic_ai(handle: RunningPeer, records: list[Record]) -> None:
    common_threads(Capture(handle, "pydantic-ai", records))
    store = Capture(handle, "pydantic-ai-store", records)
    common_threads(store, "store")
    # With a store the client may send only its new messages: none, on a resume.
    t = store.thread("refund-new-only", "store")
    t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
    t.resume("the resume with no messages", APPROVE, messages=[], request="messages: [] + resume approve")
    t.send(
        "a second message, only the new one", "only the new user message: hello", messages=[], text="hello"
    )


def capture_langgraph(handle: RunningPeer, records: list[Record]) -> None:
    c = Capture(handle, "langgraph", records)
    common_threads(c)
    t = c.thread("research")
    t.send("a sub-agent, attributed", "user: research the launch date", text="research the launch date")
    t.send("a second message after the sub-agent", "full history + user: hello", text="hello")
    # The resume with no messages at all (the graph's checkpoint holds the conversation).
    t = c.thread("refund-no-messages")
    t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
    t.resume("the resume with messages: []", APPROVE, messages=[], request="messages: [] + resume approve")


def capture_adk(handle: RunningPeer, records: list[Record]) -> None:
    c = Capture(handle, "adk", records)
    common_threads(c)
    c.discovery("capabilities", "default", "the declaration given to ADKAgent(capabilities=...)")
    c.discovery("bare-capabilities", "bare", "no capabilities configured: the adapter answers {}")
    t = c.thread("refund-no-messages")
    t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
    t.resume("the resume with messages: []", APPROVE, messages=[], request="messages: [] + resume approve")


def capture_agent_framework(handle: RunningPeer, records: list[Record]) -> None:
    c = Capture(handle, "agent-framework", records)
    common_threads(c)
    # Its own frontend tool: confirm_changes answered with a tool message instead of a resume.
    t = c.thread("refund-confirm-changes")
    t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
    confirm = next(
        call["id"]
        for m in t.messages
        for call in m.get("toolCalls") or []
        if call["function"]["name"] == "confirm_changes"
    )
    answer = history.tool_answer("confirm-answer", confirm, {"accepted": True, "steps": []})
    t.send(
        "confirm_changes answered as a client tool (no resume)",
        "full history + tool message {accepted: true} for confirm_changes",
        messages=[*t.messages, answer],
    )
    t = c.thread("refund-reject-plain")
    t.send("an approval interrupt", "user: refund my order", text="refund my order A-1001")
    t.resume("the resume after a rejection without a reason", REJECT_PLAIN)
    # A client tool's answer that has an "accepted" key is read as an approval answer and dropped.
    t = c.thread("steps-accepted")
    t.send("a client-provided tool called", "user: plan the steps", text="plan the steps", tools=[STEPS_TOOL])
    answer = history.tool_answer("steps-answer", _pending_call(t.messages), {"accepted": True, "steps": []})
    t.send(
        "a client tool answered with an accepted key",
        "full history + tool message {accepted: true, steps: []}",
        messages=[*t.messages, answer],
        tools=[STEPS_TOOL],
    )


CAPTURES: dict[str, Callable[[RunningPeer, list[Record]], None]] = {
    "agent-framework": capture_agent_framework,
    "adk": capture_adk,
    "pydantic-ai": capture_pydantic_ai,
    "langgraph": capture_langgraph,
}


# --- the README ------------------------------------------------------------------------------------

NOTES: dict[str, list[str]] = {
    "pydantic-ai (`/`: the client keeps the history; `/store`: InMemoryConversationStore)": [
        'Every event has a `timestamp`; RUN_STARTED carries `protocolVersion: "1.0"`; RUN_FINISHED '
        "always has an `outcome` (`success`, or `interrupt`).",
        "A tool call's parent is an assistant message opened and closed empty just before it "
        "(TEXT_MESSAGE_START / TEXT_MESSAGE_END with no content, then TOOL_CALL_START with that "
        "`parentMessageId`).",
        "Reasoning with a provider signature (`*-think-1`): visible REASONING_MESSAGE_CONTENT, then "
        "REASONING_MESSAGE_END, then REASONING_ENCRYPTED_VALUE `subtype: message`, `entityId` = the "
        "reasoning message id, `encryptedValue` = a JSON string `{signature, provider_name}`. The text "
        "is not sealed: only the signature is opaque.",
        'Approval: RUN_FINISHED `outcome.interrupts[0]` = `{id: "int-call_refund", reason: '
        '"tool_call", toolCallId, message, responseSchema: {approved, editedArgs, reason}}`. '
        "`approved` is a StrictBool: anything else is a denial or a RUN_ERROR.",
        "The resume run begins with TOOL_CALL_RESULT for the call the interrupted run opened "
        "(`call_refund`), with a new tool message id; no TOOL_CALL_START for it in that run.",
        "Rejection (`*-refund-reject-2`): the TOOL_CALL_RESULT content is the `reason`, and it is "
        "followed by REASONING_ENCRYPTED_VALUE `subtype: message` whose `entityId` is that TOOL "
        'message (`{"pydantic_ai": {"outcome": "denied"}}`): it belongs on the tool message '
        "sent back (ToolMessage.encryptedValue), not on any reasoning.",
        "Client history mode needs the assistant message with its `toolCalls` to resume: with the "
        "product's history (`pydantic-ai-refund-product-history-2`) it answers RUN_ERROR \"Tool call "
        'results were provided, but the message history does not contain a `ModelResponse`." The '
        "following `hello` (`-3`) is answered as a first message: the refund turn is lost.",
        "Store mode rejects the product's history too (`pydantic-ai-store-refund-product-history-2`): "
        "re-sending the user message without the assistant turn reads as an edit of that turn, and "
        "RUN_ERROR says the stored conversation is not waiting on `call_refund`. With the full history, "
        "or with `messages: []` (`pydantic-ai-store-refund-new-only-2`), it resumes. Each store-mode "
        "run ends with CUSTOM `pydantic_ai_conversation_saved` `{conversation_id, entry_ids}`.",
        "Tool call ids are the model's: a later run of the same thread reuses `call_weather` "
        "(`*-weather-2`). Message ids are new UUIDs each run.",
        "A client-provided tool (`*-steps-1`) ends the run with `outcome: {type: success, "
        'pendingToolCallIds: ["call_steps"]}`; the next run with a tool message answers it. With '
        "`tools: []` the tool does not exist for the model.",
        'Tool results are strings: a dict return is JSON-encoded (`{"city":"Paris",...}`), a str '
        "return is sent as is.",
        "STATE_SNAPSHOT and STATE_DELTA come from the tool's `ToolReturn(metadata=[...])`, after its "
        "TOOL_CALL_RESULT.",
    ],
    'LangGraph (ag-ui-langgraph, `emit_interrupt_outcome=True`, `subagent_visibility="attributed"`)': [
        "RAW events (the default `emit_raw_events=True`) carry whole LangChain callback payloads and "
        "outnumber the rest; TEXT_MESSAGE_* and TOOL_CALL_* repeat them as `rawEvent`. No "
        "`timestamp`, no `protocolVersion` on RUN_STARTED; RUN_FINISHED has no `outcome` on success.",
        "STATE_SNAPSHOT is sent after every node with that node's OUTPUT only (e.g. `{messages: [the "
        "tool message], tools: []}`), then once with the whole graph state; every snapshot holds "
        "LangChain `messages` and `tools` besides the graph's own keys (`plan`). Replacing the panel "
        "with each snapshot shows partial state for a moment.",
        "MESSAGES_SNAPSHOT comes at the end of every run with the WHOLE thread (every earlier run's "
        "messages); reasoning is not in it; a sub-agent's messages are appended at its end with "
        "`subagentRunId`. The tool message id in it is a UUID while the streamed TOOL_CALL_RESULT "
        "used `messageId` = the toolCallId.",
        "Arguments in the chunk that names a tool call are dropped: TOOL_CALL_START is emitted for "
        "that chunk and only later chunks become TOOL_CALL_ARGS. A provider that sends the whole call "
        "in one chunk (Gemini does; the `task` call in `langgraph-research-1`) gives TOOL_CALL_START "
        "then TOOL_CALL_END with no ARGS: the arguments exist only in MESSAGES_SNAPSHOT.",
        "Interrupt: `id` is a hash, `reason`/`message`/`toolCallId`/`responseSchema` are whatever the "
        "graph passed to `interrupt({...})`, `metadata.langgraph.raw` repeats it; a CUSTOM "
        "`on_interrupt` event (value: that dict as a JSON string) comes just before RUN_FINISHED.",
        "The resume run re-opens the interrupted call: TOOL_CALL_START/ARGS/END with the same "
        "`call_refund` id (no `parentMessageId`, the whole arguments in one ARGS), then "
        "TOOL_CALL_RESULT. A client folding the thread as one transcript appends the arguments twice.",
        "The checkpoint holds the thread: the resume works with the full history, with the product's "
        "history, and with `messages: []`. Messages whose ids the checkpoint has are ignored.",
        'Sub-agent (`langgraph-research-1`): SUBAGENT_STARTED `{subagentRunId: "tools:<uuid>", '
        'name: "researcher", description, parentToolCallId, parentMessageId}` after the parent\'s '
        "MESSAGES_SNAPSHOT, the sub-agent's STEP_*/TEXT_MESSAGE_* tagged with `subagentRunId`, "
        "SUBAGENT_FINISHED, then the parent's TOOL_CALL_RESULT for `task`.",
        "Reasoning signature: REASONING_ENCRYPTED_VALUE `subtype: message`, `entityId` = the reasoning "
        "message, value = the raw signature, sent BEFORE REASONING_MESSAGE_END; the text is visible.",
        "A client-provided tool call ends the run with no outcome and no `pendingToolCallIds`.",
        "RUN_ERROR has the exception's text and no `code`.",
    ],
    "Google ADK (ag-ui-adk, `emit_interrupt_outcome=True`)": [
        "A new thread's first state change is a STATE_DELTA (`add /plan`) with no STATE_SNAPSHOT before "
        "it (`adk-state-1`); a STATE_SNAPSHOT follows at the end of every run, including the adapter's "
        "own keys `_ag_ui_thread_id`, `_ag_ui_app_name`, `_ag_ui_user_id`.",
        "Tool calls have no `parentMessageId` and no surrounding assistant message; TOOL_CALL_RESULT "
        'has no `role`. A tool\'s non-dict return is wrapped: `{"result": "Marked Ship done."}`.',
        "Confirmation (`adk-refund-*-1`): TOOL_CALL_* for `issue_refund` (`call_refund`, never "
        "answered in that run), then TOOL_CALL_* for `adk_request_confirmation` (id `adk-<uuid>`, "
        "arguments `{originalFunctionCall: {id, args, name}, toolConfirmation: {hint, confirmed: "
        "false}}`). The interrupt: `id` = `toolCallId` = that confirmation call, `reason: "
        '"confirmation"`, `message` = the long hint ("Please approve or reject the tool call '
        'issue_refund() by responding with a FunctionResponse..."), `metadata.adk` repeats the '
        "original call; no `responseSchema`.",
        "The resume run begins with TOOL_CALL_RESULT for the ORIGINAL call `call_refund`; the "
        "`adk_request_confirmation` call never gets a result.",
        "`{approved: true|false}` resumes; `reason` and `editedArgs` are ignored with "
        "`require_confirmation=True` (the edit run refunds 42.5). A rejection's result is "
        '`{"error": "This tool call is rejected."}`.',
        "The session holds the thread: the resume works with the full history, the product's history "
        "and `messages: []`.",
        "Thought parts stream as REASONING_*; the thought signature is not sent (no "
        "REASONING_ENCRYPTED_VALUE). No MESSAGES_SNAPSHOT (the default `emit_messages_snapshot=False`).",
        'RUN_ERROR `{message: <the exception\'s text>, code: "BACKGROUND_EXECUTION_ERROR"}`.',
        "`GET /capabilities` returns the dict given, unvalidated (`adk-capabilities.json`); with none "
        "configured, `{}` (`adk-bare-capabilities.json`).",
    ],
    "Microsoft Agent Framework (agent-framework-ag-ui, on ag-ui-protocol 0.1.22)": [
        "No `timestamp`, no `protocolVersion`; every run starts with STATE_SNAPSHOT of the "
        "`state_schema` defaults (`{plan: {}}`) and ends with MESSAGES_SNAPSHOT of the whole thread "
        "(reasoning messages included, with `encryptedValue`).",
        "Tool calls stream INSIDE an open assistant message: TEXT_MESSAGE_START, TOOL_CALL_START "
        "(`parentMessageId` = that message) ... TOOL_CALL_RESULT, STATE_SNAPSHOT, then "
        "TEXT_MESSAGE_END.",
        "Approval (`always_require`): TOOL_CALL_* for `call_refund`, CUSTOM "
        '`function_approval_request` `{id: "af-call-<hex>", function_call: {call_id, name, '
        "arguments}}`, and a second call `confirm_changes` (a client tool, never answered) whose "
        'arguments name the original call. The interrupt: `id: "af-call-<hex>"`, `reason: '
        '"tool_call"`, `toolCallId: "call_refund"`, `responseSchema` with `approved`, '
        "`accepted`, one property per argument and `editedArgs`, `additionalProperties: false`.",
        "Any key outside that schema is read as an edit: `{approved: false, reason: ...}` is refused "
        "with RUN_ERROR `APPROVAL_RESUME_INVALID` (`agent-framework-refund-reject-2`); "
        "`{approved: false}` works (`-refund-reject-plain-2`).",
        "Approve and edit: the resume run begins with TOOL_CALL_RESULT for `call_refund` (edits "
        'applied). Rejection: NO TOOL_CALL_RESULT; the result ("Error: Tool call invocation was '
        'rejected by user.") is only in MESSAGES_SNAPSHOT, on a tool message '
        "`approval-response-af-call-<hex>`.",
        "Answering `confirm_changes` with a tool message instead of `resume` is refused: RUN_ERROR "
        '`APPROVAL_RESUME_REQUIRED` "Pending interrupts require a resume entry for every '
        'interruptId." (`-refund-confirm-changes-2`).',
        "A client tool's answer whose JSON has an `accepted` key is taken for an approval answer and "
        'dropped (its log: "Rejected approval response id=call_steps: no matching approval '
        'occurrence"); the model then calls the tool again (`agent-framework-steps-accepted-2`).',
        'RUN_ERROR hides the exception: `{message: "An internal error has occurred while streaming '
        'events.", code: "RuntimeError"}`.',
        "Reasoning: REASONING_ENCRYPTED_VALUE `subtype: message`, `entityId` = the reasoning message "
        "(`rs_1`), before REASONING_MESSAGE_END; the text is visible.",
        "The server keeps the thread: the resume works with the product's history as well.",
    ],
}


def write_readme(records: list[Record], versions: dict[str, dict[str, str]]) -> None:
    manifest = OUT / "manifest.json"
    known = json.loads(manifest.read_text()) if manifest.exists() else {"versions": {}, "records": []}
    labels = {r.label for r in records}
    kept = [r for r in known["records"] if r["label"] not in labels]
    all_records = kept + [r.__dict__ for r in records]
    all_versions = {**known["versions"], **versions}
    manifest.write_text(json.dumps({"versions": all_versions, "records": all_records}, indent=1) + "\n")

    lines = [
        "# What real AG-UI servers send",
        "",
        "Byte-exact SSE bodies from real third-party AG-UI servers, each built with its framework's own",
        "PyPI adapter and a scripted model (no LLM, no key, no network): `tests/interop/<peer>/server.py`.",
        "Re-capture with `python tests/interop/capture.py [peer ...]` after `scripts/interop_setup.sh`.",
        "",
        "Each run is `<peer>-<thread>-<n>.sse` (the response body as received) with",
        "`<peer>-<thread>-<n>.request.json` (the `RunAgentInput` posted, pretty-printed) beside it; runs",
        "of one thread share its `threadId` and each sends the history the one before left (AG-UI's",
        "client's full history: assistant messages with `toolCalls`, tool messages, reasoning messages",
        'with `encryptedValue`), unless the request column says "product history": what the product',
        "used to send (assistant text only). `manifest.json` lists the same in JSON.",
        "",
        "## Versions",
        "",
        "| peer | packages |",
        "|---|---|",
    ]
    for label, packages in sorted(all_versions.items()):
        lines.append(f"| {label} | {', '.join(f'`{k}=={v}`' for k, v in packages.items())} |")
    lines += [
        "",
        "## Runs",
        "",
        "| file | endpoint | request | what it exercises | events |",
        "|---|---|---|---|---|",
    ]
    for r in all_records:
        events = " ".join(_compact(r["events"]))
        lines.append(f"| {r['file']} | `{r['path']}` | {r['request']} | {r['what']} | {events} |")
    lines += ["", "## Surprises", ""]
    for label, notes in NOTES.items():
        lines.append(f"### {label}")
        lines.append("")
        lines += [f"- {note}" for note in notes]
        lines.append("")
    (OUT / "README.md").write_text("\n".join(lines).rstrip() + "\n")


def _compact(types: list[str]) -> list[str]:
    """``TEXT_MESSAGE_CONTENT x5`` instead of five entries; RAW events counted at the end."""
    out: list[str] = []
    raw = 0
    for kind in types:
        if kind == "RAW":
            raw += 1
        elif out and out[-1].split(" x")[0] == kind:
            head, _, count = out[-1].partition(" x")
            out[-1] = f"{head} x{int(count or 1) + 1}"
        else:
            out.append(kind)
    return [*out, f"(+{raw} RAW)"] if raw else out


def main(names: list[str]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    records: list[Record] = []
    versions: dict[str, dict[str, str]] = {}
    for name in names or list(CAPTURES):
        peer: Peer = PEERS[name]
        for old in OUT.glob(f"{name}-*"):
            old.unlink()
        with running(peer) as handle:
            CAPTURES[name](handle, records)
        for label in {r.label for r in records if r.label.startswith(name)}:
            versions[label] = peer.versions()
        print(f"{name}: {sum(r.label.startswith(name) for r in records)} runs captured")
    write_readme(records, versions)


if __name__ == "__main__":
    main(sys.argv[1:])

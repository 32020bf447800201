"""An A2A server built with a2a-sdk's server side, for tests: not the demo agent, a test's own.

`A2ATestAgent(streaming=..., bindings=...)` serves, on a free loopback port, an Agent Card and the
SDK's JSON-RPC (and HTTP+JSON) routes. `card_override` replaces the card's JSON (a card that fails
validation); `card_edit` changes the card it serves (a skill of its own, other input modes);
`bindings=("GRPC",)` declares only an interface the client cannot use. `extended_edit` makes the card
declare an extended card (`capabilities.extendedAgentCard`): GetExtendedAgentCard answers the card
with that edit (an extra skill, a signature), only to a request carrying `X-Api-Key: extended_key`
(each request's headers are kept in `extended_requests`); `key_set` is served at `/jwks.json`
(`key_set_requests` counts them). What it answers:

- "ask ...": input-required ("Which colour?"); the answer in the same task completes it, echoing it;
- "fail": failed, with a reason ("fail-payloads...": the reason is markup and script);
  "reject": rejected; "auth": auth-required (the next message in the
  same task completes it);
- "slow": ten text chunks, half a second apart (to stop);
- "weather": a tool call and its result as Google ADK's A2A exposure sends them (DataParts marked
  `adk_type` function_call / function_response in working updates), then the answer;
- "payloads...": markup and script in every part (`_payloads`);
- a file part: an artifact naming it; anything else: an echo artifact streamed in three chunks,
  a data artifact, and a closing message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from a2a.helpers import new_task
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes, create_rest_routes
from a2a.server.tasks import InMemoryTaskStore, TaskUpdater
from a2a.types import a2a_pb2 as pb
from a2a.utils.errors import InvalidRequestError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agents_ui.runs.a2a import a2ui_part
from tests.support.a2ui_agent import surface_operations
from tests.support.fault_agent import PAYLOADS, URL_MARKDOWN, URL_PAYLOADS, P
from tests.support.live_server import ThreadedUvicorn


class EchoExecutor(AgentExecutor):
    def __init__(self) -> None:
        self.asked: set[str] = set()
        self.authorizing: set[str] = set()
        self.canceled: list[str] = []
        self.received: list[pb.Message] = []

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        self.canceled.append(context.task_id or "")
        await TaskUpdater(event_queue, context.task_id or "", context.context_id or "").cancel()

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = context.task_id or "", context.context_id or ""
        if context.message is not None:
            self.received.append(context.message)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None:  # a new task: the SDK wants the Task itself first
            history = [context.message] if context.message else []
            await event_queue.enqueue_event(
                new_task(task_id, context_id, pb.TASK_STATE_SUBMITTED, history=history)
            )
        await updater.start_work()
        text = context.get_user_input().strip()
        say = updater.new_agent_message
        if task_id in self.authorizing:
            self.authorizing.discard(task_id)
            await updater.complete(say([pb.Part(text=f"Authorized, going on: {text}.")]))
        elif task_id in self.asked:
            self.asked.discard(task_id)
            await updater.add_artifact(
                [pb.Part(text=f"You chose {text}.")], artifact_id="answer", name="Answer"
            )
            await updater.complete(say([pb.Part(text=f"Noted: {text}.")]))
        elif text.startswith("ask-payloads"):  # a question of markup, in the person's inbox
            self.asked.add(task_id)
            await updater.requires_input(say([pb.Part(text=P)]))
        elif text.startswith("ask"):
            self.asked.add(task_id)
            await updater.requires_input(say([pb.Part(text="Which colour?")]))
        elif text.startswith("fail-payloads"):
            await updater.failed(say([pb.Part(text=P)]))
        elif text == "fail":
            await updater.failed(say([pb.Part(text="The echo chamber collapsed.")]))
        elif text == "reject":
            await updater.reject(say([pb.Part(text="Not my kind of request.")]))
        elif text == "auth":
            self.authorizing.add(task_id)
            await updater.requires_auth(say([pb.Part(text="Sign in with an API key first.")]))
        elif text == "weather":
            call = {"id": "adk-call-1", "name": "get_weather", "args": {"city": "<Paris>", "days": 2}}
            result = {"id": "adk-call-1", "name": "get_weather", "response": {"temperature": 21}}
            await updater.update_status(
                pb.TASK_STATE_WORKING, say([pb.Part(text="Checking."), adk_part("function_call", call)])
            )
            await asyncio.sleep(1.5)  # the call is seen running before its result arrives
            await updater.update_status(pb.TASK_STATE_WORKING, say([adk_part("function_response", result)]))
            await updater.complete(say([pb.Part(text="It is 21 degrees in Paris.")]))
        elif text.startswith("payloads"):
            await self._payloads(updater)
        elif text == "slow":
            for n in range(10):
                await updater.add_artifact(
                    [pb.Part(text=f"chunk {n} ")], artifact_id="slow", name="Slow", append=n > 0
                )
                await asyncio.sleep(0.5)
            await updater.complete()
        elif any(p.WhichOneof("content") == "raw" for p in context.message.parts):
            names = [p.filename for p in context.message.parts if p.WhichOneof("content") == "raw"]
            await updater.add_artifact(
                [pb.Part(raw=b"id,name\n1,echo\n", filename="echo.csv", media_type="text/csv")],
                artifact_id="files",
                name="Files",
            )
            await updater.complete(say([pb.Part(text=f"Got {', '.join(names)}.")]))
        else:
            for n, chunk in enumerate(("**Echo**: ", text, ".")):
                await updater.add_artifact(
                    [pb.Part(text=chunk, media_type="text/markdown")],
                    artifact_id="echo",
                    name="Echo",
                    append=n > 0,
                    last_chunk=n == 2,
                )
            data = pb.Part(media_type="application/json")
            data.data.struct_value.update({"length": len(text), "words": text.split()[:5]})
            await updater.add_artifact([data], artifact_id="stats", name="Stats")
            await updater.complete(say([pb.Part(text="Done echoing.")]))

    async def _payloads(self, updater: TaskUpdater) -> None:
        """Markup and script in every part an A2A agent controls (tests/support/fault_agent.py's)."""
        say = updater.new_agent_message
        await updater.update_status(pb.TASK_STATE_WORKING, say([pb.Part(text=P)]))
        await updater.add_artifact(
            [pb.Part(text=f"{P}\n\n{URL_MARKDOWN}", media_type="text/markdown")],
            artifact_id="evil-text",
            name="Report " + P,
        )
        files = [
            pb.Part(
                raw=b"<script>window.__pwned='file'</script>", filename="evil.html", media_type="text/html"
            ),
            pb.Part(raw=b'<svg onload="window.__pwned=1"/>', filename="evil.svg", media_type="image/svg+xml"),
            pb.Part(url="javascript:window.__pwned='remote'", filename="remote.html", media_type="text/html"),
        ]
        await updater.add_artifact(files, artifact_id="evil-files", name="Files " + P)
        data = pb.Part(media_type="application/json")
        data.data.struct_value.update({P: P, "link": "javascript:window.__pwned='data'"})
        await updater.add_artifact([data], artifact_id="evil-data", name="Data")
        surface = [a2ui_part(surface_operations())]  # A2UI's A2A extension: a DataPart of its messages
        await updater.update_status(pb.TASK_STATE_WORKING, say(surface))
        await updater.complete(say([pb.Part(text=URL_MARKDOWN)]))


def with_payloads(card: pb.AgentCard) -> None:
    """A card edit: markup, script and script addresses in every field a card lets an agent fill."""
    card.name = "Evil " + PAYLOADS[0]
    card.description = P
    card.version = PAYLOADS[3]
    card.provider.organization = P
    card.provider.url = URL_PAYLOADS[0]
    card.documentation_url = URL_PAYLOADS[5]
    card.icon_url = URL_PAYLOADS[6]
    for skill in card.skills:
        skill.name += PAYLOADS[1]
        skill.description = P
        del skill.examples[:]
        skill.examples.extend([P, URL_PAYLOADS[1]])
        skill.tags.append(PAYLOADS[2])


def adk_part(kind: str, data: dict[str, Any]) -> pb.Part:
    """A DataPart as ADK 2.13.0's `convert_genai_part_to_a2a_part` makes one of a function call or
    response (google/adk/a2a/converters/part_converter.py)."""
    part = pb.Part()
    part.data.struct_value.update(data)
    part.metadata.update({"adk_type": kind})
    return part


def with_document_intake(card: pb.AgentCard) -> None:
    """A card edit (A2ATestAgent's `card_edit`): text by default, and a "Document intake" skill that
    takes PDFs."""
    del card.default_input_modes[:]
    card.default_input_modes.append("text/plain")
    card.skills.append(
        pb.AgentSkill(
            id="intake",
            name="Document intake",
            description="Reads the PDF you attach.",
            tags=["pdf"],
            input_modes=["application/pdf"],
        )
    )


def echo_card(
    base: str, *, streaming: bool = True, bindings: tuple[str, ...] = ("JSONRPC",), extended: bool = False
) -> pb.AgentCard:
    urls = {"JSONRPC": f"{base}/rpc", "HTTP+JSON": f"{base}/rest", "GRPC": "127.0.0.1:1"}
    return pb.AgentCard(
        name="Echo Test Agent",
        description="Echoes, asks, fails and streams on request.",
        version="0.1.0",
        provider=pb.AgentProvider(organization="Tests"),
        documentation_url="javascript:alert(1)",
        supported_interfaces=[
            pb.AgentInterface(url=urls[b], protocol_binding=b, protocol_version="1.0") for b in bindings
        ],
        capabilities=pb.AgentCapabilities(streaming=streaming, extended_agent_card=extended),
        default_input_modes=["text/plain", "image/png", "text/csv"],
        default_output_modes=["text/markdown", "application/json"],
        skills=[
            pb.AgentSkill(
                id="echo", name="Echo", description="Says it back.", examples=["Echo this"], tags=["echo"]
            ),
            pb.AgentSkill(id="ask", name="Ask", description="Asks a question.", input_modes=["text/plain"]),
        ],
        security_schemes={
            "key": pb.SecurityScheme(
                api_key_security_scheme=pb.APIKeySecurityScheme(location="header", name="X-Api-Key")
            )
        },
    )


class A2ATestAgent(ThreadedUvicorn):
    def __init__(
        self,
        *,
        streaming: bool = True,
        bindings: tuple[str, ...] = ("JSONRPC",),
        card_override: dict[str, Any] | None = None,
        card_edit: Callable[[pb.AgentCard], None] | None = None,
        extended_edit: Callable[[pb.AgentCard], None] | None = None,
        extended_key: str = "extended-secret",
        key_set: dict[str, Any] | None = None,
    ) -> None:
        self.executor = EchoExecutor()
        self.card_requests = 0
        self.key_set_requests = 0
        self.extended_requests: list[dict[str, str]] = []
        self.extended_delay = 0.0  # seconds the extended card takes (a slow one)
        extended = extended_edit is not None

        async def extended_card(card: pb.AgentCard, context: Any) -> pb.AgentCard:
            headers = dict(context.state.get("headers") or {})
            self.extended_requests.append(headers)
            await asyncio.sleep(self.extended_delay)
            if headers.get("x-api-key") != extended_key:
                raise InvalidRequestError("the extended card is for callers with the key")
            served = echo_card(self.url, streaming=streaming, bindings=bindings, extended=True)
            extended_edit(served)
            return served

        card_kind = {"streaming": streaming, "bindings": bindings, "extended": extended}
        handler = DefaultRequestHandler(
            agent_executor=self.executor,
            task_store=InMemoryTaskStore(),
            agent_card=echo_card("http://127.0.0.1", **card_kind),
            extended_agent_card=echo_card("http://127.0.0.1", **card_kind) if extended else None,
            extended_card_modifier=extended_card if extended else None,
        )

        async def card(request: Request) -> JSONResponse:
            self.card_requests += 1
            if card_override is not None:
                return JSONResponse(card_override)
            served = echo_card(self.url, **card_kind)
            if card_edit is not None:
                card_edit(served)
            return JSONResponse(agent_card_to_dict(served))

        async def jwks(request: Request) -> JSONResponse:
            self.key_set_requests += 1
            return JSONResponse(key_set or {}, media_type="application/jwk-set+json")

        routes: list[Any] = [Route("/.well-known/agent-card.json", card), Route("/jwks.json", jwks)]
        routes += create_jsonrpc_routes(handler, rpc_url="/rpc")
        routes += create_rest_routes(handler, path_prefix="/rest")
        super().__init__(Starlette(routes=routes))

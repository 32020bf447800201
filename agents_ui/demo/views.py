"""HTTP for the demo agents: the same routes, statuses and SSE framing as real agents (docs/PROTOCOLS.md).

No login: these are agent endpoints called server to server, exactly like a remote agent. Who may call
them, and how much a call may send and receive, is gate.py's (no CSRF token: the key header does it).
Every view is async and streams with an async generator, so uvicorn sends each frame as it is made.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import RunAgentInput, RunErrorEvent
from ag_ui.encoder import EventEncoder
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.urls import reverse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from pydantic import ValidationError

from agents_ui.demo.agui.base import AgUiDemoAgent
from agents_ui.demo.agui.running import run_agent, upgrade_legacy_parts
from agents_ui.demo.external.base import ExternalDemoAgent
from agents_ui.demo.external.errors import ErrorAnswer, invalid
from agents_ui.demo.gate import (
    MAX_BODY_BYTES,
    MULTIPART_OVERHEAD_BYTES,
    AnswerBudget,
    declared_size,
    demo_route,
    read_body,
    too_large,
    too_large_message,
)
from agents_ui.demo.registry import AGUI_AGENTS, DEMO_AGENTS_BY_SLUG, EXTERNAL_AGENTS
from agents_ui.demo.replies import human_size

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
SDK_VERSION_HEADER = "X-Agent-SDK-Version"


def _agui_agent(slug: str) -> AgUiDemoAgent:
    agent = AGUI_AGENTS.get(slug)
    if agent is None:
        raise Http404("No such AG-UI demo agent.")
    return agent


def _external_agent(slug: str) -> ExternalDemoAgent:
    agent = EXTERNAL_AGENTS.get(slug)
    if agent is None:
        raise Http404("No such external demo agent.")
    return agent


def _documentation_url(request: HttpRequest, slug: str) -> str:
    return request.build_absolute_uri(reverse("demo-agent-docs", kwargs={"slug": slug}))


# --- AG-UI -------------------------------------------------------------------------------------------


@csrf_exempt
@demo_route()
@require_POST
async def agui_run(request: HttpRequest, slug: str) -> HttpResponse:
    """`POST {url}`: a RunAgentInput in, an SSE stream of AG-UI events out."""
    agent = _agui_agent(slug)
    # Read the stream ourselves: request.body stops at DATA_UPLOAD_MAX_MEMORY_SIZE, too small for a
    # run carrying a PDF, and raising that project-wide limit is not the demo's call.
    raw = read_body(request, agent.max_input_bytes)
    if raw is None:
        return too_large(declared_size(request), agent.max_input_bytes)
    try:
        payload = upgrade_legacy_parts(json.loads(raw or b"null"))
        run_input = RunAgentInput.model_validate(payload)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError and ValidationError are ValueErrors
        if isinstance(exc, ValidationError):
            detail: Any = [
                {"loc": list(e["loc"]), "msg": e["msg"]} for e in exc.errors(include_url=False)[:5]
            ]
        elif isinstance(exc, RecursionError):
            detail = "the document is nested too deeply"
        else:
            detail = str(exc)
        return JsonResponse({"error": "invalid RunAgentInput", "detail": detail}, status=422)
    encoder = EventEncoder(accept=request.headers.get("Accept"))
    budget = AnswerBudget(len(raw))

    async def frames() -> AsyncIterator[str]:
        async with contextlib.aclosing(run_agent(agent, run_input)) as events:
            async for event in events:
                frame = encoder.encode(event)
                if not budget.allows(frame):
                    yield encoder.encode(RunErrorEvent(message=budget.message, code="answer_too_large"))
                    return
                yield frame

    return StreamingHttpResponse(frames(), content_type=encoder.get_content_type(), headers=SSE_HEADERS)


@demo_route(keyed=False)
@require_GET
async def agui_capabilities(request: HttpRequest, slug: str) -> HttpResponse:
    """`GET {url}/capabilities`: the current AgentCapabilities, or 404 for an agent without discovery."""
    agent = _agui_agent(slug)
    declaration = agent.capabilities(_documentation_url(request, slug))
    if declaration is None:
        raise Http404("This agent has no capability discovery.")
    return JsonResponse(declaration.model_dump(mode="json", by_alias=True))


@demo_route(keyed=False)
@require_GET
async def agent_docs(request: HttpRequest, slug: str) -> HttpResponse:
    """The page each declaration's documentationUrl points at: what the demo agent shows off."""
    demo = DEMO_AGENTS_BY_SLUG.get(slug)
    if demo is None:
        raise Http404("No such demo agent.")
    text = f"{demo.name} ({demo.protocol} demo agent)\n\n{demo.description}\n\n"
    text += f"Demonstrates: {demo.demonstrates}\n"
    return HttpResponse(text, content_type="text/plain; charset=utf-8")


# --- External agents ---------------------------------------------------------------------------------


def _error(agent: ExternalDemoAgent, error: ErrorAnswer) -> JsonResponse:
    response = JsonResponse(error.body(agent.detail_level, new_request_id()), status=error.status)
    if error.retry_after is not None:
        response["Retry-After"] = str(error.retry_after)
    return response


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex[:16]}"


def _raw_body(request: HttpRequest) -> bytes:
    raw = read_body(request, MAX_BODY_BYTES)
    if raw is None:
        raise ErrorAnswer(413, "request_too_large", too_large_message(declared_size(request), MAX_BODY_BYTES))
    return raw


def _parse(raw: bytes) -> Any:
    if not raw:
        return {}
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise invalid(f"The body is not JSON: {exc}.") from exc
    except RecursionError as exc:
        raise invalid("The body is nested too deeply.") from exc


def _json_body(request: HttpRequest) -> Any:
    return _parse(_raw_body(request))


async def _external(
    request: HttpRequest, slug: str, handle: Any, *, version_checked: bool = True
) -> HttpResponse:
    """Resolve the agent, check the SDK version (426), run `handle`, turn ErrorAnswer into 2.3 errors."""
    agent = _external_agent(slug)
    try:
        if version_checked:
            agent.check_sdk_version(request.headers.get(SDK_VERSION_HEADER))
        return await handle(agent)
    except ErrorAnswer as error:
        return _error(agent, error)


@demo_route(keyed=False)
@require_GET
async def policy(request: HttpRequest, slug: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        return JsonResponse(agent.policy)

    # /policy is the one route an outdated client may read: it is how it learns it must upgrade.
    return await _external(request, slug, handle, version_checked=False)


@csrf_exempt
@demo_route()
@require_POST
async def prepare(request: HttpRequest, slug: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        body = _json_body(request)
        if not isinstance(body, dict):
            raise invalid("The body must be a JSON object.")
        return JsonResponse({"policy": agent.policy, "negotiated": agent.negotiate(body)})

    return await _external(request, slug, handle)


@csrf_exempt
@demo_route()
@require_POST
async def conversations(request: HttpRequest, slug: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        return JsonResponse({"id": agent.create_conversation().id}, status=201)

    return await _external(request, slug, handle)


@csrf_exempt
@demo_route()
@require_POST
async def messages(request: HttpRequest, slug: str, conversation_id: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        raw = _raw_body(request)
        turn = agent.prepare_message(conversation_id, _parse(raw))
        frames = turn.frames(AnswerBudget(len(raw)))
        return StreamingHttpResponse(frames, content_type="text/event-stream", headers=SSE_HEADERS)

    return await _external(request, slug, handle)


@csrf_exempt
@demo_route()
@require_POST
async def approval(request: HttpRequest, slug: str, approval_id: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        decided = agent.decide(approval_id, _json_body(request))
        return JsonResponse({"approvalId": decided.id, "decision": decided.decision})

    return await _external(request, slug, handle)


@csrf_exempt
@demo_route()
@require_POST
async def files(request: HttpRequest, slug: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        agent.require("files")
        limit = agent.policy["filePolicy"]["maxUploadBytes"]
        size = declared_size(request)
        # Refused on its announced size, before the multipart parser writes the upload anywhere.
        if size is not None and size > limit + MULTIPART_OVERHEAD_BYTES:
            raise ErrorAnswer(
                413,
                "file_too_large",
                f"The upload is {human_size(size)}; the limit is {human_size(limit)}.",
                details={"size": size, "maxUploadBytes": limit},
            )
        upload = request.FILES.get("file")
        if upload is None:
            raise invalid('Send the file as the multipart field "file".')
        # Read at most one byte past the limit: enough to refuse, without holding a huge upload twice.
        data = upload.read(limit + 1)
        stored = agent.upload(upload.name or "upload", upload.content_type, data, size=upload.size)
        return JsonResponse(stored.info(), status=201)

    return await _external(request, slug, handle)


@demo_route()
@require_GET
async def file_detail(request: HttpRequest, slug: str, file_id: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        return JsonResponse(agent.file(file_id).info())

    return await _external(request, slug, handle)


@demo_route()
@require_GET
async def conversation_artifacts(request: HttpRequest, slug: str, conversation_id: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        return JsonResponse({"artifacts": [a.info() for a in agent.artifacts(conversation_id)]})

    return await _external(request, slug, handle)


@demo_route()
@require_GET
async def artifact_detail(request: HttpRequest, slug: str, artifact_id: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        artifact = agent.artifact(artifact_id)
        return JsonResponse({**artifact.info(), "content": artifact.content})

    return await _external(request, slug, handle)


@csrf_exempt
@demo_route()
@require_POST
async def interactions(request: HttpRequest, slug: str) -> HttpResponse:
    async def handle(agent: ExternalDemoAgent) -> HttpResponse:
        return JsonResponse(agent.interact(_json_body(request)), status=201)

    return await _external(request, slug, handle)

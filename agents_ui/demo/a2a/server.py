"""The demo A2A agents' HTTP side: the a2a-sdk's own JSON-RPC routes (Starlette), inside the product.

Mounted in front of Django (project/asgi.py) at /demo-a2a/<slug>/: the Agent Card at
`.well-known/agent-card.json` (open, as a real agent's is) and JSON-RPC at `rpc`, which answers only
this installation's demo key (agents_ui.demo.gate), and only while the demo agents are on. The card
names the interface at the address it was asked at, so the agent works behind any host and port, and
is signed by this installation's demo key (agents_ui.demo.a2a.signing).
"""

from __future__ import annotations

from typing import Any

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.request_handlers.response_helpers import agent_card_to_dict
from a2a.server.routes import create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from django.utils.crypto import constant_time_compare
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from agents_ui.demo import gate
from agents_ui.demo.a2a import signing, trip_planner

PREFIX = "/demo-a2a/"
CARD = ".well-known/agent-card.json"
AGENTS: dict[str, Any] = {trip_planner.SLUG: trip_planner}
EXECUTORS = {trip_planner.SLUG: trip_planner.TripPlanner()}


def rpc_path(slug: str) -> str:
    return f"{PREFIX}{slug}/rpc"


def _card_for(slug: str, base: str) -> Any:
    base = base.rstrip("/")
    return AGENTS[slug].card(f"{base}{rpc_path(slug)}", f"{base}/demo-agents/{slug}/docs")


def _application() -> Starlette:
    routes: list[Any] = []
    for slug in AGENTS:
        handler = DefaultRequestHandler(
            agent_executor=EXECUTORS[slug], task_store=InMemoryTaskStore(), agent_card=_card_for(slug, "")
        )
        routes += create_jsonrpc_routes(handler, rpc_url=rpc_path(slug))

        async def card(request: Request, slug: str = slug) -> JSONResponse:
            return JSONResponse(agent_card_to_dict(signing.signed(_card_for(slug, str(request.base_url)))))

        routes.append(Route(f"{PREFIX}{slug}/{CARD}", card, methods=["GET"]))
    return Starlette(routes=routes)


_APP: Starlette | None = None


def reset() -> None:
    """Forget every task (tests, a fresh demo)."""
    global _APP
    _APP = None
    for executor in EXECUTORS.values():
        executor.reset()


class DemoA2AAgents:
    """ASGI: /demo-a2a/<slug>/... to the SDK's routes, everything else to the product."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        slug, _, rest = path[len(PREFIX) :].partition("/") if path.startswith(PREFIX) else ("", "", "")
        if slug not in AGENTS or not gate.enabled():
            return await self.app(scope, receive, send)
        if rest != CARD:
            headers = {
                k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []
            }
            if not constant_time_compare(headers.get(gate.KEY_HEADER.lower(), ""), gate.demo_key()):
                response = JSONResponse(
                    {
                        "error": {
                            "code": "forbidden",
                            "message": "This demo agent answers only its Agents UI.",
                        }
                    },
                    status_code=403,
                )
                return await response(scope, receive, send)
        global _APP
        if _APP is None:
            _APP = _application()
        await _APP(scope, receive, send)

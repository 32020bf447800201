"""An AG-UI agent that answers at a set pace and remembers every run it was asked, for the tests
of separate run workers (tests/queue): served from a thread of the test process, called by worker
processes.

    GET  {base}/paced/<parts>/<delay>/capabilities   its declaration
    POST {base}/paced/<parts>/<delay>/               a run: <parts> words, <delay> seconds apart

`PacedAgent.runs` lists the AG-UI runId of every run begun (in order), `finished` those it sent
to the end, `gone` those whose caller closed the connection before the end.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from tests.support.asgi import serve_lifespan
from tests.support.live_server import ThreadedUvicorn

DECLARATION = {"identity": {"name": "Paced agent"}, "transport": {"streaming": True}}


def word(n: int) -> str:
    return f"w{n} "


class PacedAgent(ThreadedUvicorn):
    def __init__(self) -> None:
        self.runs: list[str] = []
        self.finished: list[str] = []
        self.gone: list[str] = []

        async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
            await self.serve(scope, receive, send)

        super().__init__(application)

    def base(self, parts: int, delay: float) -> str:
        return f"{self.url}/paced/{parts}/{delay:g}"

    async def serve(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await serve_lifespan(receive, send)
            return
        path = [p for p in scope["path"].split("/") if p]
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if len(path) == 4 and path[3] == "capabilities":
            await _send(send, 200, "application/json", json.dumps(DECLARATION).encode(), more=False)
            return
        if len(path) != 3 or scope["method"] != "POST":
            await _send(send, 404, "application/json", b"{}", more=False)
            return
        parts, delay = int(path[1]), float(path[2])
        request = json.loads(body or b"{}")
        run_id, thread = str(request.get("runId", "")), str(request.get("threadId", "t"))
        self.runs.append(run_id)
        gone = asyncio.Event()

        async def watch() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            gone.set()

        watcher = asyncio.create_task(watch())
        try:
            await _send(send, 200, "text/event-stream", b"")
            events = [
                {"type": "RUN_STARTED", "threadId": thread, "runId": run_id},
                {"type": "TEXT_MESSAGE_START", "messageId": f"m-{run_id}", "role": "assistant"},
            ]
            for event in events:
                await _frame(send, event)
            for n in range(parts):
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(gone.wait(), delay)
                if gone.is_set():
                    self.gone.append(run_id)
                    return
                await _frame(
                    send, {"type": "TEXT_MESSAGE_CONTENT", "messageId": f"m-{run_id}", "delta": word(n)}
                )
            await _frame(send, {"type": "TEXT_MESSAGE_END", "messageId": f"m-{run_id}"})
            await _frame(send, {"type": "RUN_FINISHED", "threadId": thread, "runId": run_id})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            self.finished.append(run_id)
        except OSError:
            self.gone.append(run_id)
        finally:
            watcher.cancel()


async def _send(send: Any, status: int, content_type: str, body: bytes, *, more: bool = True) -> None:
    headers = [(b"content-type", content_type.encode()), (b"cache-control", b"no-cache")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    if body or not more:
        await send({"type": "http.response.body", "body": body, "more_body": more})


async def _frame(send: Any, event: dict[str, Any]) -> None:
    await send(
        {"type": "http.response.body", "body": f"data: {json.dumps(event)}\n\n".encode(), "more_body": True}
    )

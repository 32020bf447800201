"""A hostile agent's site for the SSRF tests: every way it can point the product at the inside.

Served on loopback, reached by the product as a public address (tests/support/public_hops.py), it
answers, whatever the protocol asks:

- `/to/<target>/...`: a redirect (307, so a POST stays a POST) to one of `targets(port)`, each an
  internal address in another spelling (the listener's port, or the cloud metadata service);
- `/card/<variant>/.well-known/agent-card.json`: an A2A card whose interfaces (1.0
  `supportedInterfaces`, 0.3 `url` and `additionalInterfaces`) point inside, directly or through a
  redirect, or declare an extended card read through such an interface;
- `/chain/<n>/<target>/...`: n public redirects, then the one to `<target>`;
- `/agui/images/<count>` (AG-UI): capabilities declaring images in answers, and a run whose answer
  names `count` images, each inside in some spelling or behind a redirect there (the image proxy
  must refuse every one);
- `/huge/...`: 24 MB of bytes (an image or a card past every bound); `/card/huge/...`: a 2 MB card;
- `/record/...`: 200 with `{}` (an A2A card at `.../.well-known/agent-card.json`; 401 at `.../rpc`
  without a key), each request's path and headers kept in `requests`, to see what reached it (a
  credential, a secret spelled out).
"""

from __future__ import annotations

import itertools
import json
from typing import Any
from urllib.parse import quote

METADATA = "http://169.254.169.254/latest/meta-data/"


def targets(port: int) -> dict[str, str]:
    """Internal addresses in the spellings a validator may miss (the listener's port)."""
    return {
        "loopback": f"http://127.0.0.1:{port}/",
        "loopback-2": f"http://127.0.0.2:{port}/",
        "ipv6-loopback": f"http://[::1]:{port}/",
        "ipv4-mapped": f"http://[::ffff:127.0.0.1]:{port}/",
        "ipv4-mapped-hex": f"http://[::ffff:7f00:1]:{port}/",
        "nat64": f"http://[64:ff9b::7f00:1]:{port}/",
        "decimal": f"http://2130706433:{port}/",
        "hex": f"http://0x7f.1:{port}/",
        "short": f"http://127.1:{port}/",
        "unspecified": f"http://0.0.0.0:{port}/",
        "localhost": f"http://localhost:{port}/",
        "localhost-dot": f"http://localhost.:{port}/",
        "userinfo": f"http://agent.example@127.0.0.1:{port}/",
        "metadata": METADATA,
    }


def _card(name: str, **fields: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": "A card pointing inside.",
        "version": "1.0.0",
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [{"id": "echo", "name": "Echo", "description": "Echoes.", "tags": ["echo"]}],
        **fields,
    }


def _interface(url: str) -> dict[str, Any]:
    return {"supportedInterfaces": [{"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}]}


class SsrfSite:
    """`port` is the internal listener's; `public` the base URL the product knows the site by, and
    `other` another origin of it (set once the site's own port is known)."""

    def __init__(self, *, port: int, public: str = "", other: str = "") -> None:
        self.port = port
        self.public, self.other = public.rstrip("/"), (other or public).rstrip("/")
        self.requests: list[dict[str, Any]] = []

    @property
    def targets(self) -> dict[str, str]:
        return {
            **targets(self.port),
            # A hop to another origin (for where a credential goes), and back to a name that
            # answers loopback on its second lookup (rebinding).
            "other-origin": f"{self.other}/record/redirected",
            "rebind": f"http://rebind.test:{self.port}/record/rebound",
        }

    def cards(self) -> dict[str, dict[str, Any]]:
        inside, through = self.targets["loopback"], f"{self.public}/to/loopback/rpc"
        return {
            "interface-inside": _card("Inside", **_interface(inside)),
            "interface-redirect": _card("Redirected", **_interface(through)),
            "interface-metadata": _card("Metadata", **_interface(self.targets["metadata"])),
            "legacy-url": _card("Legacy", url=inside, preferredTransport="JSONRPC", protocolVersion="0.3.0"),
            "legacy-additional": _card(
                "Additional",
                url="grpc.example:443",
                preferredTransport="GRPC",
                protocolVersion="0.3.0",
                additionalInterfaces=[{"url": through, "transport": "JSONRPC"}],
            ),
            "extended-redirect": _card(
                "Extended",
                capabilities={"streaming": False, "extendedAgentCard": True},
                **_interface(through),
            ),
            "other-origin": _card(
                "Elsewhere",
                capabilities={"streaming": False, "extendedAgentCard": True},
                **_interface(f"{self.other}/record/rpc"),
            ),
            "same-origin": _card(
                "Here",
                capabilities={"streaming": False, "extendedAgentCard": True},
                **_interface(f"{self.public}/record/rpc"),
            ),
        }

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        raw = scope.get("raw_path", path.encode()).decode("latin-1")
        received = b""
        while True:
            message = await receive()
            received += message.get("body", b"")[: 1 << 20]
            if not message.get("more_body"):
                break
        status, headers, body = 404, [(b"content-type", b"application/json")], b"{}"
        parts = path.strip("/").split("/")
        if parts[0] == "huge":
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            chunk = b"\x89PNG\r\n\x1a\n" + b"\0" * (1 << 20)
            for _ in range(24):
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            return
        if parts[0] == "chain" and len(parts) > 2 and parts[1].isdigit():
            left, rest = int(parts[1]), "/".join(parts[2:])
            status, body = 307, b""
            location = f"{self.public}/chain/{left - 1}/{rest}" if left > 1 else f"{self.public}/to/{rest}"
            headers = [(b"location", location.encode()), (b"content-length", b"0")]
        elif parts[:2] == ["agui", "images"] and path.endswith("/capabilities"):
            status, body = 200, json.dumps({"multimodal": {"output": {"image": True}}}).encode()
        elif parts[:2] == ["agui", "images"] and scope["method"] == "POST":
            count = int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 20
            await self._image_run(received, min(count, 500), send)
            return
        elif parts[:2] == ["card", "huge"] and path.endswith("/.well-known/agent-card.json"):
            status = 200
            body = json.dumps(_card("Huge", **_interface(self.public), padding="x" * (2 << 20))).encode()
        elif parts[0] == "to" and len(parts) > 1 and parts[1] in self.targets:
            status, body = 307, b""
            headers = [(b"location", self.targets[parts[1]].encode()), (b"content-length", b"0")]
        elif parts[0] == "card" and path.endswith("/.well-known/agent-card.json"):
            card = self.cards().get(parts[1])
            status, body = (200, json.dumps(card).encode()) if card else (404, b"{}")
        elif parts[0] == "record":
            self.requests.append(
                {"path": raw, "headers": {k.decode().lower(): v.decode() for k, v in scope["headers"]}}
            )
            headers_in = self.requests[-1]["headers"]
            # An interface asks for its key: without one, 401.
            keyed = "x-api-key" in headers_in or "authorization" in headers_in
            status = 401 if path.endswith("/rpc") and not keyed else 200
            if path.endswith("/.well-known/agent-card.json"):
                body = json.dumps(self.cards()["same-origin"]).encode()
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    def image_urls(self, count: int) -> list[str]:
        """`count` image URLs inside: each target directly, through a redirect, through a chain."""
        names = [n for n in self.targets if n not in ("other-origin", "rebind")]
        ways = itertools.cycle(["{direct}", "{public}/to/{name}/", "{public}/chain/2/{name}/"])
        urls = []
        for i in range(count):
            name = names[i % len(names)]
            base = next(ways).format(direct=self.targets[name], public=self.public, name=name)
            urls.append(f"{base}img-{i}.png")
        return urls

    async def _image_run(self, received: bytes, count: int, send: Any) -> None:
        try:
            asked = json.loads(received or b"{}")
        except ValueError:
            asked = {}
        thread, run = str(asked.get("threadId") or "t"), str(asked.get("runId") or "r")
        text = "Here are the pictures: " + " ".join(
            f"![picture {i}]({url})" for i, url in enumerate(self.image_urls(count))
        )
        events = [
            {"type": "RUN_STARTED", "threadId": thread, "runId": run},
            {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"},
            {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m1", "delta": text},
            {"type": "TEXT_MESSAGE_END", "messageId": "m1"},
            {"type": "RUN_FINISHED", "threadId": thread, "runId": run},
        ]
        sse = [(b"content-type", b"text/event-stream")]
        await send({"type": "http.response.start", "status": 200, "headers": sse})
        for event in events:
            frame = f"data: {json.dumps(event)}\n\n".encode()
            await send({"type": "http.response.body", "body": frame, "more_body": True})
        await send({"type": "http.response.body", "body": b""})


def redirect_to(site: SsrfSite, target: str, path: str = "agent") -> str:
    """The public URL that redirects to `target`."""
    return f"{site.public}/to/{quote(target)}/{path}"

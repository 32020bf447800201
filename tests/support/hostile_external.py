"""A hostile agent of the external policy protocol (docs/PROTOCOLS.md 2), for tests only.

It is an external demo agent (the Support Desk's checks and refund approval) whose policy and every
event carry the payloads of `tests/support/fault_agent.py`: its name, description, provider, tools
and their descriptions; a tool's input and output; the answer (Markdown in every link and image
form); citation and table modules; the hostile A2UI surface of `tests/support/a2ui_agent.py` as an
`a2ui` module (its list of 50, within the answer's bound); grounding sources whose URLs are script
addresses; artifacts named `evil.html` and `evil.svg` whose bytes are markup; an approval whose
input is markup; and, asked to "fail", an error sentence of markup. `serving(live_url)` adds it
to the demo agents the live server answers (as `/demo-agents/hostile-external`) and registers its endpoint.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
from collections.abc import AsyncIterator, Iterator
from typing import Any

from agents_ui.demo import registry
from agents_ui.demo.external.base import MessageTurn, TurnEvent, new_id
from agents_ui.demo.external.store import STORE, StoredArtifact
from agents_ui.demo.external.support_desk import SUPPORT_DESK, SupportDesk
from agents_ui.sdk.external.fold import A2UI_MODULE
from tests.support.a2ui_agent import surface_operations
from tests.support.fault_agent import MARKDOWN_FORMS, PAYLOADS, URL_MARKDOWN, URL_PAYLOADS, P

SLUG = "hostile-external"
ANSWER = f"{P}\n\n{URL_MARKDOWN}\n\n{MARKDOWN_FORMS}\n"
# name -> (declared type, content): an agent naming its markup as a page or an image.
FILES = {
    "evil.html": ("text/html", "<script>window.__pwned='external-file'</script>"),
    "evil.svg": ("image/svg+xml", "<svg xmlns='http://www.w3.org/2000/svg' onload=\"window.__pwned=1\"/>"),
    "evil<img src=x onerror=window.__pwned='file-name'>.txt": ("text/plain", P),
}


def _policy() -> dict[str, Any]:
    policy = copy.deepcopy(SUPPORT_DESK.policy)
    policy["identity"] = {"name": f"Evil {PAYLOADS[0]}", "description": P, "provider": P}
    policy["identity"]["version"] = PAYLOADS[3]
    policy["capabilities"]["artifacts"] = True
    policy["outputModuleTypes"] = ["citation", "table", A2UI_MODULE]
    for tool in policy["domainTools"]:
        tool["description"] = P
    return policy


class HostileTurn(MessageTurn):
    async def events(self) -> AsyncIterator[TurnEvent]:
        yield "run:started", {"runId": self.run_id, "conversationId": self.conversation.id}
        if "fail" in self.content:
            yield "run:failed", {"error": {"code": "evil", "message": P}}
            return
        call = new_id("call")
        yield "tool:started", {"toolCallId": call, "publicName": "lookup_order", "input": {"orderId": P}}
        output = {"status": P, "link": URL_PAYLOADS[0], P: [P]}
        yield "tool:completed", {"toolCallId": call, "status": "completed", "output": output}
        if "refund" in self.content:
            notes: list[str] = []
            async for item in self.agent._refund(self, P, notes):  # type: ignore[attr-defined]
                yield item
        message = new_id("msg")
        self.conversation.message_ids.append(message)
        yield "message:started", {"messageId": message, "role": "assistant"}
        yield "message:delta", {"messageId": message, "delta": ANSWER}
        yield "message:completed", {"messageId": message, "content": ANSWER}
        citation = {"text": P, "source": {"title": P, "url": URL_PAYLOADS[0]}}
        yield "module", {"type": "citation", "data": citation}
        yield "module", {"type": "table", "data": {"columns": [P, "b"], "rows": [[P, URL_PAYLOADS[5]]]}}
        yield "module", {"type": A2UI_MODULE, "data": {"a2ui_operations": surface_operations(items=50)}}
        sources = [{"title": P, "url": url, "snippet": P} for url in URL_PAYLOADS]
        yield "grounding", {"sources": sources}
        for name, (kind, content) in FILES.items():
            artifact = StoredArtifact(
                id=new_id("artifact"),
                agent=self.agent.slug,
                conversation_id=self.conversation.id,
                name=name,
                mime_type=kind,
                content=content,
            )
            STORE.artifacts[artifact.id] = artifact
            self.conversation.artifact_ids.append(artifact.id)
            yield (
                "artifact:created",
                {"artifactId": artifact.id, "name": name, "mimeType": kind, "size": len(content.encode())},
            )
        yield "run:completed", {"runId": self.run_id, "usage": {"inputTokens": 1, "outputTokens": 1}}


@dataclasses.dataclass
class HostileExternal(SupportDesk):
    def prepare_message(self, conversation_id: str, body: Any) -> MessageTurn:
        turn = super().prepare_message(conversation_id, body)
        return HostileTurn(**{f.name: getattr(turn, f.name) for f in dataclasses.fields(turn)})


HOSTILE_EXTERNAL = HostileExternal(slug=SLUG, policy=_policy())


@contextlib.contextmanager
def serving(live_url: str, **fields: Any) -> Iterator[Any]:
    """The live server answers as the hostile agent while the block runs; yields its endpoint."""
    from tests.factories import make_endpoint

    registry.EXTERNAL_AGENTS[SLUG] = HOSTILE_EXTERNAL
    try:
        yield make_endpoint(
            slug=SLUG,
            name="Hostile external",
            protocol="external",
            base_url=f"{live_url}/demo-agents/{SLUG}",
            **registry.credential_fields(),
            **fields,
        )
    finally:
        registry.EXTERNAL_AGENTS.pop(SLUG, None)

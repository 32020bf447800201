"""What every external-policy demo agent shares: its checks, its operations, and how a turn streams.

They speak docs/PROTOCOLS.md section 2 exactly: policy and negotiation, conversations streamed in three
profiles, approvals that pause an open stream, file uploads checked on their bytes, and the stable
error codes of 2.3. The HTTP side is in ../views.py; these modules raise `ErrorAnswer` and yield frames.
An agent's policy is data; its own work on a turn (its domain tools) is `act`, in its own module.
"""

from __future__ import annotations

import contextlib
import json
import math
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import filetype

from agents_ui.demo.external.errors import ErrorAnswer, invalid, not_found, unsupported
from agents_ui.demo.external.store import (
    STORE,
    StoredApproval,
    StoredArtifact,
    StoredConversation,
    StoredFile,
)
from agents_ui.demo.gate import AnswerBudget
from agents_ui.demo.replies import deltas, human_size, keywords, paced, topic_of
from agents_ui.sdk.external.policy import EXTERNAL_EVENT_TYPES, Done, LegacyText

RUNTIME_STANDARD = "runtime-standard-v1"
MODULES = "modules-v1"
CHAT_LEGACY = "chat-legacy-v1"


def new_id(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


def parse_version(value: str | None) -> tuple[int, ...]:
    """ "1.2.3" -> (1, 2, 3); pre-release suffixes are ignored, anything unreadable is (0,)."""
    if not value:
        return (0,)
    numbers = []
    for piece in value.strip().lstrip("v").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit()) if piece[:1].isdigit() else ""
        if not digits:
            break
        numbers.append(int(digits))
    return tuple(numbers) or (0,)


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    """{"page": {"url": u}} -> {"page.url": u}; flat dotted keys pass through unchanged."""
    if not isinstance(value, dict) or (prefix and not value):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, item in value.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        flat.update(flatten(item, path) if isinstance(item, dict) else {path: item})
    return flat


# An event of a turn: (runtime event name, its data), or None for a keep-alive while the stream waits.
TurnEvent = tuple[str, dict[str, Any]] | None


# --- The agent ---------------------------------------------------------------------------------------


@dataclass
class ExternalDemoAgent:
    """An external-policy demo agent: its policy is data; its own work on a turn is `act`."""

    slug: str
    policy: dict[str, Any]

    @property
    def detail_level(self) -> str:
        return self.policy.get("publicErrorDetail", "standard")

    # --- Checks, in the order a request meets them ---------------------------------------------------

    def check_sdk_version(self, header: str | None) -> None:
        minimum = (self.policy.get("sdk") or {}).get("minVersion")
        if minimum and parse_version(header) < parse_version(minimum):
            raise ErrorAnswer(
                426,
                "sdk_version_unsupported",
                f"This agent needs an Agents SDK of version {minimum} or newer.",
                details={"minVersion": minimum, "receivedVersion": header},
            )

    def require(self, capability: str) -> None:
        if not self.policy["capabilities"].get(capability):
            raise unsupported(capability)

    def check_rate_limits(self, conversation_id: str) -> None:
        now = time.monotonic()
        for limit in self.policy.get("rateLimits", []):
            key = conversation_id if limit["scope"] == "conversation" else "agent"
            hits = STORE.hits.setdefault((self.slug, f"{limit['scope']}:{key}"), deque())
            while hits and hits[0] <= now - limit["windowSeconds"]:
                hits.popleft()
            if len(hits) >= limit["limit"]:
                retry = math.ceil(hits[0] + limit["windowSeconds"] - now)
                raise ErrorAnswer(
                    429,
                    "rate_limited",
                    f"At most {limit['limit']} messages per {limit['windowSeconds']} s ({limit['scope']}).",
                    details={"scope": limit["scope"], "limit": limit["limit"]},
                    retry_after=max(1, retry),
                )
        for limit in self.policy.get("rateLimits", []):
            key = conversation_id if limit["scope"] == "conversation" else "agent"
            STORE.hits[(self.slug, f"{limit['scope']}:{key}")].append(now)

    def spent(self, scope: str, window: float) -> tuple[float, float]:
        """(amount spent in the window, seconds until the oldest spend leaves it)."""
        now = time.monotonic()
        entries = [(t, a) for t, a in STORE.spend.get((self.slug, scope), []) if t > now - window]
        STORE.spend[(self.slug, scope)] = entries
        return sum(a for _, a in entries), (entries[0][0] + window - now) if entries else window

    def check_spend(self, amount: float) -> None:
        for limit in self.policy.get("spendLimits", []):
            total, frees_in = self.spent(limit["scope"], limit["windowSeconds"])
            if total + amount > limit["limit"]:
                raise ErrorAnswer(
                    429,
                    "spend_limit_exceeded",
                    f"That would exceed the {limit['limit']:g} {limit['currency']} limit "
                    f"per {limit['windowSeconds']} s ({total:g} already spent).",
                    details={"scope": limit["scope"], "spent": total, "requested": amount},
                    retry_after=max(1, math.ceil(frees_in)),
                )

    def record_spend(self, amount: float) -> None:
        for limit in self.policy.get("spendLimits", []):
            STORE.spend.setdefault((self.slug, limit["scope"]), []).append((time.monotonic(), amount))

    def check_host_context(self, host_context: Any) -> dict[str, Any]:
        if host_context is None:
            return {}
        if not isinstance(host_context, dict):
            raise invalid("hostContext must be an object.")
        policy = self.policy.get("hostContextPolicy") or {"acceptedFields": [], "maxTotalBytes": 0}
        fields = flatten(host_context)
        refused = sorted(name for name in fields if name not in policy["acceptedFields"])
        if refused:
            raise ErrorAnswer(
                422,
                "host_context_rejected",
                f"Host context fields not accepted: {', '.join(refused)}.",
                details={"rejectedFields": refused, "acceptedFields": policy["acceptedFields"]},
            )
        size = len(json.dumps(host_context, separators=(",", ":")).encode())
        if policy.get("maxTotalBytes") is not None and size > policy["maxTotalBytes"]:
            raise ErrorAnswer(
                422,
                "host_context_rejected",
                f"Host context is {size} bytes; at most {policy['maxTotalBytes']} are accepted.",
                details={"size": size, "maxTotalBytes": policy["maxTotalBytes"]},
            )
        return fields

    # --- Operations ----------------------------------------------------------------------------------

    def negotiate(self, request: dict[str, Any]) -> dict[str, Any]:
        """Grant what it can: unknown profile -> default, module types intersected, grounding if allowed.

        An absent `outputModuleTypes` asks for no restriction (every type the agent has); an absent
        `providerGroundingDisplay` asks for grounding where the policy allows it.
        """
        profiles = self.policy["streamProfiles"]
        profile = request.get("streamProfile")
        if profile not in profiles:
            profile = self.policy["defaultStreamProfile"]
        own = self.policy.get("outputModuleTypes", [])
        wanted = request.get("outputModuleTypes")
        modules = (
            list(own) if wanted is None else [m for m in own if isinstance(wanted, list) and m in wanted]
        )
        grounding = bool(self.policy.get("providerGroundingDisplay")) and (
            request.get("providerGroundingDisplay") is not False
        )
        return {"streamProfile": profile, "outputModuleTypes": modules, "providerGroundingDisplay": grounding}

    def create_conversation(self) -> StoredConversation:
        self.require("conversations")
        conversation = StoredConversation(id=new_id("conv"), agent=self.slug)
        STORE.conversations[conversation.id] = conversation
        return conversation

    def conversation(self, conversation_id: str) -> StoredConversation:
        conversation = STORE.conversations.get(conversation_id)
        if conversation is None or conversation.agent != self.slug:
            raise not_found("conversation")
        return conversation

    def upload(
        self, name: str, declared_type: str | None, data: bytes, size: int | None = None
    ) -> StoredFile:
        """Store an upload, or refuse it: too large (413), or not an allowed type by its bytes (415)."""
        self.require("files")
        policy = self.policy["filePolicy"]
        if not policy.get("upload"):
            raise unsupported("filePolicy.upload")
        size = len(data) if size is None else size
        if size > policy["maxUploadBytes"]:
            raise ErrorAnswer(
                413,
                "file_too_large",
                f"The file is {human_size(size)}; the limit is {human_size(policy['maxUploadBytes'])}.",
                details={"size": size, "maxUploadBytes": policy["maxUploadBytes"]},
            )
        # The bytes decide, never the label: a renamed executable is still an executable.
        sniffed = filetype.guess_mime(data)
        allowed = policy["allowedMimeTypes"]
        if sniffed not in allowed:
            raise ErrorAnswer(
                415,
                "unsupported_media_type",
                f"The file's content is {sniffed or 'of an unknown type'}; accepted: {', '.join(allowed)}.",
                details={"sniffed": sniffed, "declared": declared_type},
            )
        declared = (declared_type or "").split(";")[0].strip().lower()
        if declared and declared != "application/octet-stream" and declared != sniffed:
            raise ErrorAnswer(
                415,
                "unsupported_media_type",
                f"The file is labelled {declared} but its content is {sniffed}.",
                details={"sniffed": sniffed, "declared": declared},
            )
        stored = StoredFile(
            id=new_id("file"), agent=self.slug, name=name or "upload", mime_type=sniffed, data=data
        )
        STORE.files[stored.id] = stored
        return stored

    def file(self, file_id: str) -> StoredFile:
        self.require("files")
        if not self.policy["filePolicy"].get("read"):
            raise unsupported("filePolicy.read")
        stored = STORE.files.get(file_id)
        if stored is None or stored.agent != self.slug:
            raise not_found("file")
        return stored

    def decide(self, approval_id: str, body: Any) -> StoredApproval:
        self.require("approvals")
        approval = STORE.approvals.get(approval_id)
        if approval is None or approval.agent != self.slug:
            raise not_found("approval")
        if not isinstance(body, dict) or body.get("decision") not in ("approve", "deny"):
            raise invalid('decision must be "approve" or "deny".')
        edited = body.get("editedInput")
        if edited is not None and not isinstance(edited, dict):
            raise invalid("editedInput must be an object.")
        # An approval the agent denied itself on expiry is "expired" (410), not "already decided" (409).
        if approval.expired and (approval.decision is None or approval.reason == "expired"):
            raise ErrorAnswer(410, "approval_expired", "This approval expired; the agent denied it itself.")
        if approval.decision is not None:
            raise ErrorAnswer(
                409, "approval_already_decided", f"This approval was already decided ({approval.decision})."
            )
        approval.decision = body["decision"]
        approval.edited_input = edited if approval.decision == "approve" else None
        approval.reason = body.get("reason") if isinstance(body.get("reason"), str) else None
        # Wakes the open stream waiting in `_wait_for_decision` (same event loop: one process).
        approval.decided.set()
        return approval

    def artifacts(self, conversation_id: str) -> list[StoredArtifact]:
        self.require("artifacts")
        return [STORE.artifacts[a] for a in self.conversation(conversation_id).artifact_ids]

    def artifact(self, artifact_id: str) -> StoredArtifact:
        self.require("artifacts")
        artifact = STORE.artifacts.get(artifact_id)
        if artifact is None or artifact.agent != self.slug:
            raise not_found("artifact")
        return artifact

    def interact(self, body: Any) -> dict[str, Any]:
        self.require("interactions")
        if not isinstance(body, dict):
            raise invalid("The body must be a JSON object.")
        if body.get("type", "feedback") != "feedback" or body.get("value") not in ("up", "down"):
            raise invalid('Only {type: "feedback", value: "up" | "down"} is accepted.')
        conversation = self.conversation(str(body.get("conversationId", "")))
        if body.get("messageId") not in conversation.message_ids:
            raise not_found("message")
        record = {"id": new_id("interaction"), **{k: body.get(k) for k in ("messageId", "value", "comment")}}
        STORE.interactions.append(record)
        return record

    # --- Messages ------------------------------------------------------------------------------------

    def prepare_message(self, conversation_id: str, body: Any) -> MessageTurn:
        """Every check that must answer with an HTTP status, before the stream starts."""
        self.require("messages")
        conversation = self.conversation(conversation_id)
        if not isinstance(body, dict) or not isinstance(body.get("content"), str):
            raise invalid("content (a string) is required.")
        file_ids = body.get("fileIds") or []
        if not isinstance(file_ids, list):
            raise invalid("fileIds must be a list.")
        if file_ids:
            self.require("files")
        files = []
        for file_id in file_ids:
            stored = STORE.files.get(str(file_id))
            if stored is None or stored.agent != self.slug:
                raise not_found(f"file {file_id}")
            files.append(stored)
        host_context = self.check_host_context(body.get("hostContext"))
        self.check_rate_limits(conversation.id)
        negotiated = self.negotiate(body)
        turn = MessageTurn(
            agent=self,
            conversation=conversation,
            content=body["content"],
            files=files,
            host_context=host_context,
            profile=negotiated["streamProfile"],
            modules=negotiated["outputModuleTypes"],
            grounding=negotiated["providerGroundingDisplay"],
        )
        self.check_turn(turn)
        return turn

    # --- What each agent does its own way ------------------------------------------------------------

    def check_turn(self, turn: MessageTurn) -> None:
        """This agent's own checks of a turn that must answer with an HTTP status (e.g. a spend limit)."""

    async def act(self, turn: MessageTurn, topic: str, notes: list[str]) -> AsyncIterator[TurnEvent]:
        """This agent's own work before it answers (its domain tools); `notes` go into the answer."""
        return
        yield  # pragma: no cover - makes this an async generator


@dataclass
class MessageTurn:
    """One user message and the answer the agent streams back."""

    agent: ExternalDemoAgent
    conversation: StoredConversation
    content: str
    files: list[StoredFile]
    host_context: dict[str, Any]
    profile: str
    modules: list[str]
    grounding: bool
    run_id: str = field(default_factory=lambda: new_id("run"))

    def tool(self, public_name: str) -> dict[str, Any]:
        return next(t for t in self.agent.policy["domainTools"] if t["publicName"] == public_name)

    async def events(self) -> AsyncIterator[TurnEvent]:
        """The runtime events of this turn, in order; None is a keep-alive while waiting."""
        yield "run:started", {"runId": self.run_id, "conversationId": self.conversation.id}
        topic = topic_of(self.content)
        notes: list[str] = []

        async for item in self.agent.act(self, topic, notes):
            yield item

        if self.files:
            listed = ", ".join(f"{f.name} ({f.mime_type}, {human_size(len(f.data))})" for f in self.files)
            notes.append(f"I have your file{'s' if len(self.files) > 1 else ''}: {listed}.")
        if "user.locale" in self.host_context:
            notes.append(f"I will answer in your locale ({self.host_context['user.locale']}).")
        if "page.url" in self.host_context:
            notes.append(f"You are on {self.host_context['page.url']}.")

        answer = f"About “{topic}”: " + " ".join(
            notes or [f"here is what I know on {', '.join(keywords(topic))}."]
        )
        message_id = new_id("msg")
        self.conversation.message_ids.append(message_id)
        yield "message:started", {"messageId": message_id, "role": "assistant"}
        async for delta in paced(deltas(answer)):
            yield "message:delta", {"messageId": message_id, "delta": delta}
        yield "message:completed", {"messageId": message_id, "content": answer}

        for module_type in self.modules:
            yield "module", {"type": module_type, "data": self._module(module_type, topic)}
        if self.grounding:
            yield (
                "grounding",
                {
                    "sources": [
                        {
                            "title": f"Help centre: {term}",
                            "url": f"https://help.example.com/{term}",
                            "snippet": f"Everything about {term}.",
                        }
                        for term in keywords(topic, 2)
                    ]
                },
            )
        if self.agent.policy["capabilities"].get("artifacts"):
            artifact = StoredArtifact(
                id=new_id("artifact"),
                agent=self.agent.slug,
                conversation_id=self.conversation.id,
                name=f"summary-{len(self.conversation.artifact_ids) + 1}.md",
                mime_type="text/markdown",
                content=f"# {topic}\n\n{answer}\n",
            )
            STORE.artifacts[artifact.id] = artifact
            self.conversation.artifact_ids.append(artifact.id)
            info = artifact.info()
            yield (
                "artifact:created",
                {"artifactId": artifact.id, **{k: info[k] for k in ("name", "mimeType", "size")}},
            )
        words = len(self.content.split())
        yield (
            "run:completed",
            {"runId": self.run_id, "usage": {"inputTokens": words, "outputTokens": len(answer.split())}},
        )

    def _module(self, module_type: str, topic: str) -> dict[str, Any]:
        if module_type == "table":
            return {
                "columns": ["record", "year", "matches"],
                "rows": [[f"{term}-record", 2020 + i, 3 - i] for i, term in enumerate(keywords(topic))],
            }
        return {
            "text": topic,
            "source": {
                "title": f"Policy handbook: {keywords(topic, 1)[0]}",
                "url": "https://help.example.com/policy",
            },
        }

    async def frames(self, budget: AnswerBudget) -> AsyncIterator[str]:
        """The turn as SSE frames in the negotiated profile (PROTOCOLS 2.2), ended early past `budget`.

        Each event goes through the SDK's own event model: what the demo writes is what the client
        reads, by construction.
        """
        sequence = 0
        async with contextlib.aclosing(self.events()) as events:
            async for item in events:
                if item is None:
                    frame = ": waiting for an approval decision\n\n"
                else:
                    name, data = item
                    if self.profile == CHAT_LEGACY:
                        if name == "message:delta":
                            frame = LegacyText(text=data["delta"]).to_sse()
                        elif name in ("run:completed", "run:failed"):
                            frame = Done().to_sse()
                        else:
                            continue
                    elif self.profile == MODULES and name not in _MODULES_EVENTS:
                        continue
                    else:
                        sequence += 1
                        frame = EXTERNAL_EVENT_TYPES[name].model_validate(data).to_sse(sequence)
                if not budget.allows(frame):
                    yield self._cut_short(budget, sequence + 1)
                    return
                yield frame

    def _cut_short(self, budget: AnswerBudget, sequence: int) -> str:
        """The frame that ends a turn whose answer outgrew its budget."""
        if self.profile == CHAT_LEGACY:
            return Done().to_sse()
        error = {"code": "answer_too_large", "message": budget.message}
        return EXTERNAL_EVENT_TYPES["run:failed"].model_validate({"error": error}).to_sse(sequence)


_MODULES_EVENTS = {"run:started", "run:completed", "run:failed", "module"}


def domain_tool(
    name: str,
    description: str,
    kind: str,
    side_effect: str,
    idempotency: str,
    approval: bool,
    input_schema: dict[str, Any],
    status: str = "active",
    output_schema: dict[str, Any] | None = None,
) -> dict[str, Any]:
    tool = {
        "publicName": name,
        "description": description,
        "operation": {
            "kind": kind,
            "sideEffectClass": side_effect,
            "idempotency": idempotency,
            "approvalRequired": approval,
        },
        "inputSchema": input_schema,
        "status": status,
    }
    if output_schema:
        tool["outputSchema"] = output_schema
    return tool


def schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }

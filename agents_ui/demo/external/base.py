"""The external-policy demo agents: their public policies, their state, and what their streams say.

They speak docs/PROTOCOLS.md section 2 exactly: policy and negotiation, conversations streamed in three
profiles, approvals that pause an open stream, file uploads checked on their bytes, and the stable
error codes of 2.3. The HTTP side is in views.py; this module raises `AgentError` and yields frames.

Conversations, files, approvals, artifacts and limit counters live in module-level stores: that
assumes one server process (an approval decided on another worker would never wake the stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import filetype

from agents_ui.demo.replies import deltas, first_amount, human_size, keywords, paced, pause, topic_of
from agents_ui.sdk.policy import EXTERNAL_EVENT_TYPES, Done, LegacyText

RUNTIME_STANDARD = "runtime-standard-v1"
MODULES = "modules-v1"
CHAT_LEGACY = "chat-legacy-v1"
# Seconds an approval stays open before the agent denies it itself; tests shorten it.
APPROVAL_TTL_SECONDS = 300.0
# An SSE comment this often while a stream waits on an approval, so proxies keep it open.
KEEPALIVE_SECONDS = 15.0


class AgentError(Exception):
    """A non-2xx answer of PROTOCOLS 2.3: the view turns it into {"error": {...}}."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        capability: str | None = None,
        details: dict[str, Any] | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.capability = capability
        self.details = details
        self.retry_after = retry_after

    def body(self, detail_level: str, request_id: str) -> dict[str, Any]:
        """The error body, with as much detail as the agent's `publicErrorDetail` promises."""
        error: dict[str, Any] = {"code": self.code}
        if detail_level != "minimal":
            error["message"] = self.message
            if self.capability:
                error["capability"] = self.capability
            error["requestId"] = request_id
        if detail_level == "diagnostic" and self.details:
            error["details"] = self.details
        return {"error": error}


def unsupported(capability: str) -> AgentError:
    return AgentError(
        403,
        "unsupported_capability",
        f"This agent does not offer {capability}.",
        capability=capability,
    )


def not_found(what: str) -> AgentError:
    return AgentError(404, "not_found", f"Unknown {what}.")


def invalid(message: str) -> AgentError:
    return AgentError(400, "invalid_request", message)


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


# --- State -------------------------------------------------------------------------------------------


@dataclass
class Conversation:
    id: str
    agent: str
    message_ids: list[str] = field(default_factory=list)
    artifact_ids: list[str] = field(default_factory=list)


@dataclass
class StoredFile:
    id: str
    agent: str
    name: str
    mime_type: str
    data: bytes

    def info(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "mimeType": self.mime_type, "size": len(self.data)}


@dataclass
class Approval:
    id: str
    agent: str
    tool_call_id: str
    public_name: str
    input: dict[str, Any]
    side_effect_class: str
    expires_at: datetime
    decided: asyncio.Event = field(default_factory=asyncio.Event)
    decision: str | None = None
    edited_input: dict[str, Any] | None = None
    reason: str | None = None

    @property
    def expired(self) -> bool:
        return datetime.now(UTC) >= self.expires_at


@dataclass
class Artifact:
    id: str
    agent: str
    conversation_id: str
    name: str
    mime_type: str
    content: str

    def info(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "mimeType": self.mime_type,
            "size": len(self.content.encode()),
            "conversationId": self.conversation_id,
        }


@dataclass
class Store:
    """Everything the external demo agents remember (one process; see the module docstring)."""

    conversations: dict[str, Conversation] = field(default_factory=dict)
    files: dict[str, StoredFile] = field(default_factory=dict)
    approvals: dict[str, Approval] = field(default_factory=dict)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    interactions: list[dict[str, Any]] = field(default_factory=list)
    # (agent, scope key) -> monotonic times of recent requests, for the rate limits.
    hits: dict[tuple[str, str], deque[float]] = field(default_factory=dict)
    # (agent, scope) -> [(monotonic time, amount)], for the spend limits.
    spend: dict[tuple[str, str], list[tuple[float, float]]] = field(default_factory=dict)

    def clear(self) -> None:
        # A stream still waiting on a forgotten approval ends on its own at expiry.
        self.conversations.clear()
        self.files.clear()
        self.approvals.clear()
        self.artifacts.clear()
        self.interactions.clear()
        self.hits.clear()
        self.spend.clear()


STORE = Store()


# --- Agents ------------------------------------------------------------------------------------------


@dataclass
class ExternalDemoAgent:
    """An external-policy demo agent: its policy is data, its replies come from `reply`."""

    slug: str
    policy: dict[str, Any]

    @property
    def detail_level(self) -> str:
        return self.policy.get("publicErrorDetail", "standard")

    # --- Checks, in the order a request meets them --------------------------------------------------

    def check_sdk_version(self, header: str | None) -> None:
        minimum = (self.policy.get("sdk") or {}).get("minVersion")
        if minimum and parse_version(header) < parse_version(minimum):
            raise AgentError(
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
                raise AgentError(
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
                raise AgentError(
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
            raise AgentError(
                422,
                "host_context_rejected",
                f"Host context fields not accepted: {', '.join(refused)}.",
                details={"rejectedFields": refused, "acceptedFields": policy["acceptedFields"]},
            )
        size = len(json.dumps(host_context, separators=(",", ":")).encode())
        if policy.get("maxTotalBytes") is not None and size > policy["maxTotalBytes"]:
            raise AgentError(
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

    def create_conversation(self) -> Conversation:
        self.require("conversations")
        conversation = Conversation(id=new_id("conv"), agent=self.slug)
        STORE.conversations[conversation.id] = conversation
        return conversation

    def conversation(self, conversation_id: str) -> Conversation:
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
            raise AgentError(
                413,
                "file_too_large",
                f"The file is {human_size(size)}; the limit is {human_size(policy['maxUploadBytes'])}.",
                details={"size": size, "maxUploadBytes": policy["maxUploadBytes"]},
            )
        # The bytes decide, never the label: a renamed executable is still an executable.
        sniffed = filetype.guess_mime(data)
        allowed = policy["allowedMimeTypes"]
        if sniffed not in allowed:
            raise AgentError(
                415,
                "unsupported_media_type",
                f"The file's content is {sniffed or 'of an unknown type'}; accepted: {', '.join(allowed)}.",
                details={"sniffed": sniffed, "declared": declared_type},
            )
        declared = (declared_type or "").split(";")[0].strip().lower()
        if declared and declared != "application/octet-stream" and declared != sniffed:
            raise AgentError(
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

    def decide(self, approval_id: str, body: Any) -> Approval:
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
            raise AgentError(410, "approval_expired", "This approval expired; the agent denied it itself.")
        if approval.decision is not None:
            raise AgentError(
                409, "approval_already_decided", f"This approval was already decided ({approval.decision})."
            )
        approval.decision = body["decision"]
        approval.edited_input = edited if approval.decision == "approve" else None
        approval.reason = body.get("reason") if isinstance(body.get("reason"), str) else None
        # Wakes the open stream waiting in `_wait_for_decision` (same event loop: one process).
        approval.decided.set()
        return approval

    def artifacts(self, conversation_id: str) -> list[Artifact]:
        self.require("artifacts")
        return [STORE.artifacts[a] for a in self.conversation(conversation_id).artifact_ids]

    def artifact(self, artifact_id: str) -> Artifact:
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
        if turn.wants_refund and turn.profile == RUNTIME_STANDARD:
            self.check_spend(turn.refund_amount)
        return turn


@dataclass
class MessageTurn:
    """One user message and the answer the agent streams back."""

    agent: ExternalDemoAgent
    conversation: Conversation
    content: str
    files: list[StoredFile]
    host_context: dict[str, Any]
    profile: str
    modules: list[str]
    grounding: bool
    run_id: str = field(default_factory=lambda: new_id("run"))

    @property
    def wants_refund(self) -> bool:
        lowered = self.content.lower()
        return self.agent.slug == "support-desk" and any(
            w in lowered for w in ("refund", "money back", "reimburse")
        )

    @property
    def refund_amount(self) -> float:
        return first_amount(self.content, 40.0)

    def tool(self, public_name: str) -> dict[str, Any]:
        return next(t for t in self.agent.policy["domainTools"] if t["publicName"] == public_name)

    async def events(self) -> AsyncIterator[tuple[str, dict[str, Any]] | None]:
        """The runtime events of this turn, in order; None is a keep-alive while waiting."""
        yield "run:started", {"runId": self.run_id, "conversationId": self.conversation.id}
        topic = topic_of(self.content)
        notes: list[str] = []

        if self.agent.slug == "archive":
            async for item in self._archive_tools(topic):
                yield item
        elif self.agent.slug == "support-desk":
            call_id = new_id("call")
            order = f"A-{sum(map(ord, topic)) % 9000 + 1000}"
            yield (
                "tool:started",
                {"toolCallId": call_id, "publicName": "lookup_order", "input": {"orderId": order}},
            )
            await pause()
            yield (
                "tool:completed",
                {
                    "toolCallId": call_id,
                    "status": "completed",
                    "output": {"orderId": order, "status": "delivered", "total": 89.9, "currency": "EUR"},
                },
            )
            notes.append(f"I found order {order} (delivered, 89.90 EUR).")
            if self.wants_refund and self.profile == RUNTIME_STANDARD:
                async for item in self._refund(order, notes):
                    yield item
            elif self.wants_refund:
                notes.append(
                    "Refunds need approval, which this stream profile cannot show: use runtime-standard-v1."
                )

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
            artifact = Artifact(
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

    async def _archive_tools(self, topic: str) -> AsyncIterator[tuple[str, dict[str, Any]] | None]:
        call_id = new_id("call")
        yield (
            "tool:started",
            {"toolCallId": call_id, "publicName": "search_records", "input": {"query": topic}},
        )
        await pause()
        yield "tool:completed", {"toolCallId": call_id, "status": "completed", "output": {"matches": 3}}

    async def _refund(self, order: str, notes: list[str]) -> AsyncIterator[tuple[str, dict[str, Any]] | None]:
        tool = self.tool("issue_refund")
        amount = self.refund_amount
        call_id = new_id("call")
        tool_input = {"orderId": order, "amount": amount, "currency": "EUR"}
        approval = Approval(
            id=new_id("approval"),
            agent=self.agent.slug,
            tool_call_id=call_id,
            public_name=tool["publicName"],
            input=tool_input,
            side_effect_class=tool["operation"]["sideEffectClass"],
            expires_at=datetime.now(UTC) + timedelta(seconds=APPROVAL_TTL_SECONDS),
        )
        STORE.approvals[approval.id] = approval
        yield "tool:started", {"toolCallId": call_id, "publicName": approval.public_name, "input": tool_input}
        yield (
            "approval:requested",
            {
                "approvalId": approval.id,
                "toolCallId": call_id,
                "publicName": approval.public_name,
                "input": tool_input,
                "sideEffectClass": approval.side_effect_class,
                "expiresAt": approval.expires_at.isoformat().replace("+00:00", "Z"),
            },
        )
        # The stream stays open here until someone decides, or until the approval expires.
        while not approval.decided.is_set():
            remaining = (approval.expires_at - datetime.now(UTC)).total_seconds()
            if remaining <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(approval.decided.wait(), timeout=min(remaining, KEEPALIVE_SECONDS))
            if not approval.decided.is_set() and not approval.expired:
                yield None
        if approval.decision is None:
            approval.decision, approval.reason = "deny", "expired"
        resolved: dict[str, Any] = {"approvalId": approval.id, "decision": approval.decision}
        if approval.reason:
            resolved["reason"] = approval.reason
        yield "approval:resolved", resolved
        if approval.decision == "approve":
            final_input = {**tool_input, **(approval.edited_input or {})}
            refunded = first_amount(str(final_input.get("amount")), amount)
            self.agent.record_spend(refunded)
            output = {
                "refundId": new_id("refund"),
                "amount": refunded,
                "currency": final_input.get("currency"),
            }
            yield "tool:completed", {"toolCallId": call_id, "status": "completed", "output": output}
            edited = " (with your edits)" if approval.edited_input else ""
            notes.append(f"Refund of {refunded:g} {output['currency']} issued{edited}.")
        else:
            why = "it expired" if approval.reason == "expired" else "it was denied"
            yield (
                "tool:completed",
                {"toolCallId": call_id, "status": "denied", "output": {"reason": approval.reason}},
            )
            notes.append(f"No refund was issued: {why}.")

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

    async def frames(self) -> AsyncIterator[str]:
        """The turn as SSE frames in the negotiated profile (PROTOCOLS 2.2).

        Each event goes through the SDK's own event model: what the demo writes is what the client
        reads, by construction.
        """
        sequence = 0
        async for item in self.events():
            if item is None:
                yield ": waiting for an approval decision\n\n"
                continue
            name, data = item
            if self.profile == CHAT_LEGACY:
                if name == "message:delta":
                    yield LegacyText(text=data["delta"]).to_sse()
                elif name in ("run:completed", "run:failed"):
                    yield Done().to_sse()
                continue
            if self.profile == MODULES and name not in _MODULES_EVENTS:
                continue
            sequence += 1
            yield EXTERNAL_EVENT_TYPES[name].model_validate(data).to_sse(sequence)


_MODULES_EVENTS = {"run:started", "run:completed", "run:failed", "module"}


def _domain_tool(
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


def _schema(**properties: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in properties.items()},
        "required": list(properties),
    }


SUPPORT_DESK = ExternalDemoAgent(
    slug="support-desk",
    policy={
        "identity": {
            "name": "Support Desk",
            "description": "Customer support for orders: looks orders up, updates them, and issues refunds "
            "after a human approves them.",
            "version": "4.2.0",
            "provider": "Agents UI demo agents",
        },
        "capabilities": {
            "messages": True,
            "conversations": True,
            "files": True,
            "artifacts": False,
            "interactions": True,
            "approvals": True,
        },
        "streamProfiles": [RUNTIME_STANDARD, MODULES, CHAT_LEGACY],
        "defaultStreamProfile": RUNTIME_STANDARD,
        "outputModuleTypes": ["citation"],
        "providerGroundingDisplay": True,
        "domainTools": [
            _domain_tool(
                "lookup_order",
                "Find an order and its status.",
                "query",
                "read",
                "idempotent",
                False,
                _schema(orderId="string"),
                output_schema=_schema(orderId="string", status="string", total="number", currency="string"),
            ),
            _domain_tool(
                "update_shipping_address",
                "Change where an order not yet shipped is delivered.",
                "command",
                "write",
                "idempotent",
                False,
                _schema(orderId="string", address="string"),
            ),
            _domain_tool(
                "notify_carrier",
                "Ask the carrier to re-deliver or hold a parcel.",
                "command",
                "external",
                "non_idempotent",
                False,
                _schema(orderId="string", instruction="string"),
                status="degraded",
            ),
            _domain_tool(
                "issue_refund",
                "Refund all or part of an order to the original payment method.",
                "command",
                "financial",
                "non_idempotent",
                True,
                _schema(orderId="string", amount="number", currency="string"),
            ),
            _domain_tool(
                "close_account",
                "Close the customer's account and erase its data.",
                "command",
                "destructive",
                "idempotent",
                True,
                _schema(customerId="string"),
                status="disabled",
            ),
        ],
        "filePolicy": {
            "upload": True,
            "read": True,
            "maxUploadBytes": 5 * 1024 * 1024,
            "allowedMimeTypes": ["application/pdf", "image/png"],
        },
        "hostContextPolicy": {
            "acceptedFields": ["page.url", "page.title", "user.locale"],
            "maxTotalBytes": 1024,
        },
        "rateLimits": [
            {"scope": "conversation", "limit": 20, "windowSeconds": 60},
            {"scope": "agent", "limit": 600, "windowSeconds": 3600},
        ],
        "spendLimits": [{"scope": "refunds", "limit": 500, "currency": "EUR", "windowSeconds": 86400}],
        "publicErrorDetail": "standard",
        "sdk": {"minVersion": "1.0.0"},
    },
)

ARCHIVE = ExternalDemoAgent(
    slug="archive",
    policy={
        "identity": {
            "name": "Records Archive",
            "description": "Searches the company archive and returns tables and downloadable summaries.",
            "version": "2.0.5",
            "provider": "Agents UI demo agents",
        },
        "capabilities": {
            "messages": True,
            "conversations": True,
            "files": False,
            "artifacts": True,
            "interactions": False,
            "approvals": False,
        },
        "streamProfiles": [MODULES, RUNTIME_STANDARD],
        "defaultStreamProfile": MODULES,
        "outputModuleTypes": ["table", "citation"],
        "providerGroundingDisplay": False,
        "domainTools": [
            _domain_tool(
                "search_records",
                "Full-text search over archived records.",
                "query",
                "read",
                "idempotent",
                False,
                _schema(query="string"),
            ),
            _domain_tool(
                "export_summary",
                "Write a summary of the matches as a Markdown artifact.",
                "command",
                "write",
                "idempotent",
                False,
                _schema(query="string"),
            ),
            _domain_tool(
                "purge_records",
                "Permanently delete archived records.",
                "command",
                "destructive",
                "non_idempotent",
                False,
                _schema(query="string"),
                status="disabled",
            ),
        ],
        "filePolicy": {"upload": False, "read": False, "maxUploadBytes": 0, "allowedMimeTypes": []},
        "hostContextPolicy": {"acceptedFields": ["user.locale"], "maxTotalBytes": 128},
        "rateLimits": [{"scope": "agent", "limit": 120, "windowSeconds": 3600}],
        "spendLimits": [],
        "publicErrorDetail": "minimal",
        "sdk": {"minVersion": None},
    },
)

FUTURE_AGENT = ExternalDemoAgent(
    slug="future-agent",
    policy={
        "identity": {
            "name": "Nova (preview)",
            "description": "A preview agent built for the next SDK generation; older clients must upgrade.",
            "version": "0.1.0-preview",
            "provider": "Agents UI demo agents",
        },
        "capabilities": {
            "messages": True,
            "conversations": True,
            "files": False,
            "artifacts": False,
            "interactions": True,
            "approvals": False,
        },
        "streamProfiles": [RUNTIME_STANDARD],
        "defaultStreamProfile": RUNTIME_STANDARD,
        "outputModuleTypes": [],
        "providerGroundingDisplay": False,
        "domainTools": [],
        "filePolicy": {"upload": False, "read": False, "maxUploadBytes": 0, "allowedMimeTypes": []},
        "hostContextPolicy": {"acceptedFields": [], "maxTotalBytes": 0},
        "rateLimits": [],
        "spendLimits": [],
        "publicErrorDetail": "diagnostic",
        "sdk": {"minVersion": "2.0.0"},
    },
)

EXTERNAL_AGENTS: dict[str, ExternalDemoAgent] = {a.slug: a for a in (SUPPORT_DESK, ARCHIVE, FUTURE_AGENT)}


def reset_state() -> None:
    """Forget every conversation, file, approval, artifact and limit counter (tests, fresh demo)."""
    STORE.clear()

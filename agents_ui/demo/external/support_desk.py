"""The Support Desk: orders looked up, refunds that pause the stream for a human approval."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from agents_ui.demo.external.base import (
    CHAT_LEGACY,
    MODULES,
    RUNTIME_STANDARD,
    ExternalDemoAgent,
    MessageTurn,
    TurnEvent,
    domain_tool,
    new_id,
    schema,
)
from agents_ui.demo.external.store import STORE, StoredApproval
from agents_ui.demo.replies import first_amount, pause

# Seconds an approval stays open before the agent denies it itself; tests shorten it.
APPROVAL_TTL_SECONDS = 300.0
# An SSE comment this often while a stream waits on an approval, so proxies keep it open.
KEEPALIVE_SECONDS = 15.0


@dataclass
class SupportDesk(ExternalDemoAgent):
    """Looks the order up on every turn; a refund asked for waits, stream open, for a human decision."""

    @staticmethod
    def wants_refund(turn: MessageTurn) -> bool:
        lowered = turn.content.lower()
        return any(w in lowered for w in ("refund", "money back", "reimburse"))

    @staticmethod
    def refund_amount(turn: MessageTurn) -> float:
        return first_amount(turn.content, 40.0)

    def check_turn(self, turn: MessageTurn) -> None:
        if self.wants_refund(turn) and turn.profile == RUNTIME_STANDARD:
            self.check_spend(self.refund_amount(turn))

    async def act(self, turn: MessageTurn, topic: str, notes: list[str]) -> AsyncIterator[TurnEvent]:
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
        if self.wants_refund(turn) and turn.profile == RUNTIME_STANDARD:
            async for item in self._refund(turn, order, notes):
                yield item
        elif self.wants_refund(turn):
            notes.append(
                "Refunds need approval, which this stream profile cannot show: use runtime-standard-v1."
            )

    async def _refund(self, turn: MessageTurn, order: str, notes: list[str]) -> AsyncIterator[TurnEvent]:
        tool = turn.tool("issue_refund")
        amount = self.refund_amount(turn)
        call_id = new_id("call")
        tool_input = {"orderId": order, "amount": amount, "currency": "EUR"}
        approval = StoredApproval(
            id=new_id("approval"),
            agent=self.slug,
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
            self.record_spend(refunded)
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


SUPPORT_DESK = SupportDesk(
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
            domain_tool(
                "lookup_order",
                "Find an order and its status.",
                "query",
                "read",
                "idempotent",
                False,
                schema(orderId="string"),
                output_schema=schema(orderId="string", status="string", total="number", currency="string"),
            ),
            domain_tool(
                "update_shipping_address",
                "Change where an order not yet shipped is delivered.",
                "command",
                "write",
                "idempotent",
                False,
                schema(orderId="string", address="string"),
            ),
            domain_tool(
                "notify_carrier",
                "Ask the carrier to re-deliver or hold a parcel.",
                "command",
                "external",
                "non_idempotent",
                False,
                schema(orderId="string", instruction="string"),
                status="degraded",
            ),
            domain_tool(
                "issue_refund",
                "Refund all or part of an order to the original payment method.",
                "command",
                "financial",
                "non_idempotent",
                True,
                schema(orderId="string", amount="number", currency="string"),
            ),
            domain_tool(
                "close_account",
                "Close the customer's account and erase its data.",
                "command",
                "destructive",
                "idempotent",
                True,
                schema(customerId="string"),
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

"""External agents (docs/PROTOCOLS.md 2): the agent keeps the conversation under its id; a message
streams its answer, a decision is posted while that stream waits (the same stream goes on), an
artifact and a rating go through the agent's REST API."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Container, Mapping
from typing import Any

import httpx
from django.db import IntegrityError
from django.utils import timezone

from agents_ui.endpoints import errors
from agents_ui.endpoints.clients import agent_client, sdk_client
from agents_ui.models import ApprovalRecord, Run
from agents_ui.runs.fanout import fanout
from agents_ui.runs.inputs import external_events
from agents_ui.runs.protocols.agui import schema_problem, why
from agents_ui.runs.protocols.base import (
    ArtifactFile,
    Decided,
    NotFound,
    ProtocolAdapter,
    Refused,
    RunContext,
    Unavailable,
)
from agents_ui.runs.registry import live_run
from agents_ui.sdk import AgentError, ExternalAgentClient
from agents_ui.sdk.transcript import Transcript

# The agent's stream waits while a person decides an approval: allow it that long.
APPROVAL_WAIT_SECONDS = 900.0
MAX_ARTIFACT_BYTES = 5 * 1024 * 1024
_MIME_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$")


class ExternalAdapter(ProtocolAdapter):
    async def events(self, agent: Any, run: Run, context: RunContext) -> AsyncIterator[Any]:
        endpoint = run.conversation.endpoint
        agent.timeout = httpx.Timeout(
            max(endpoint.read_timeout, APPROVAL_WAIT_SECONDS), connect=endpoint.connect_timeout
        )
        stream = await external_events(agent, run)
        try:
            async for item in stream:
                yield item
        finally:
            await stream.aclose()

    async def decide(
        self, run: Run, transcript: Transcript, shown: Mapping[str, Any],
        decided: Container[str], posted: Mapping[str, str], user: Any,
    ) -> Decided:  # fmt: skip
        """Post each decision of the form while the run's stream waits; the same stream goes on."""
        asked = [key.removeprefix("decision-") for key in posted if key.startswith("decision-")]
        chosen = [approval_id for approval_id in asked if approval_id in transcript.approvals]
        if not chosen:
            raise NotFound("No such approval.")
        for approval_id in chosen:
            await self._decide_one(run, transcript, shown.get(approval_id), approval_id, posted, user)
        return Decided(None, about=chosen[-1])

    async def _decide_one(
        self, run: Run, transcript: Transcript, info: Any, approval_id: str,
        posted: Mapping[str, str], user: Any,
    ) -> None:  # fmt: skip
        approval = transcript.approvals[approval_id]
        choice = posted.get(f"decision-{approval_id}")
        if choice not in ("approve", "reject", "edit"):
            raise Refused("Choose approve or reject.", approval_id)
        edited = None
        raw_edit = (posted.get(f"edited-{approval_id}") or "").strip()
        # Approving sends the input as edited where the person changed it.
        if choice != "reject" and raw_edit and raw_edit != (info.args_json if info else "").strip():
            try:
                edited = json.loads(raw_edit)
            except (ValueError, RecursionError) as exc:
                raise Refused(f"The edited input is not valid JSON: {why(exc)}", approval_id) from None
            problem = await schema_problem(edited, info.edit_schema if info else None)
            if problem:
                raise Refused(f"The edited input does not fit: {problem}", approval_id)
        decision = (
            ApprovalRecord.Decision.REJECTED if choice == "reject"
            else ApprovalRecord.Decision.APPROVED_WITH_EDITS if edited is not None
            else ApprovalRecord.Decision.APPROVED
        )  # fmt: skip
        record = ApprovalRecord(
            run=run, request_id=approval_id, tool_name=(approval.name or "")[:200],
            arguments=approval.input if isinstance(approval.input, dict) else {},
            decision=decision, edited_arguments=edited, decided_by=user, decided_at=timezone.now(),
        )  # fmt: skip
        # Known to the run's streams before the agent goes on, so its record shows who decided and
        # what was sent as soon as the agent says the request is resolved.
        live = live_run(run.pk)
        if live is not None and approval_id not in live.decided:
            live.decided[approval_id] = record
        async with agent_client() as client:
            agent = sdk_client(run.conversation.endpoint, client)
            assert isinstance(agent, ExternalAgentClient)
            try:
                await agent.decide_approval(
                    approval_id, "deny" if choice == "reject" else "approve", edited_input=edited
                )
            except AgentError as exc:
                if live is not None and live.decided.get(approval_id) is record:
                    del live.decided[approval_id]
                raise Refused(errors.describe(exc), approval_id) from None
        try:
            await record.asave(force_insert=True)
        except IntegrityError:
            raise Refused("This request was already decided.", approval_id) from None
        if live is None:  # driven by another process: its streams show who decided, from the record
            await fanout().publish_control(str(run.pk), {"kind": "decided", "request": approval_id[:200]})

    async def artifact(self, run: Run, transcript: Transcript, artifact_id: str) -> ArtifactFile:
        endpoint = run.conversation.endpoint
        # Only what this run said it made: an id from elsewhere is not fetched for this person.
        known = transcript.artifacts.get(artifact_id)
        if known is None or not known.remote:
            raise NotFound("No such artifact.")
        async with agent_client() as client:
            agent = sdk_client(endpoint, client)
            assert isinstance(agent, ExternalAgentClient)
            try:
                artifact = await agent.get_artifact(artifact_id)
            except AgentError as exc:
                raise Unavailable(errors.describe(exc)) from None
        if artifact.content is None:
            raise Unavailable("The agent did not give this artifact's content.")
        data = artifact.content.encode()
        if len(data) > MAX_ARTIFACT_BYTES:
            raise Unavailable("The artifact is larger than this product hands over.")
        mime_type = (artifact.mime_type or "").lower().strip()
        if not _MIME_TYPE.match(mime_type):
            mime_type = "application/octet-stream"
        name = endpoint.scrub(artifact.name or artifact_id)[:200] or "artifact"
        return ArtifactFile(data, name, f"{mime_type}; charset=utf-8")

    async def send_feedback(self, run: Run, message_id: str, value: str) -> bool:
        """Sent as an interaction of the agent's conversation (none yet: nothing to send it to)."""
        conversation = run.conversation
        if not conversation.remote_id:
            return False
        async with agent_client() as client:
            agent = sdk_client(conversation.endpoint, client)
            try:
                await agent.send_interaction(conversation.remote_id, message_id, value)
            except AgentError as exc:
                raise Unavailable(errors.describe(exc)) from None
        return True


ADAPTER = ExternalAdapter()

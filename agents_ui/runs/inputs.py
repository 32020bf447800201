"""What a run sends the agent: the person's request as stored, the page context it may share, and
the request each protocol wants (AG-UI's RunAgentInput; an external agent's conversation, files
and message)."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ag_ui.core import (
    Context,
    DataSource,
    DocumentPart,
    ImagePart,
    ResumeEntry,
    RunAgentInput,
    TextPart,
    ToolMessage,
    UserMessage,
)
from django.conf import settings
from django.http import HttpRequest

from agents_ui.decisions import Plan
from agents_ui.models import AgentEndpoint, Attachment, Conversation, Message, Run
from agents_ui.sdk import ExternalAgentClient, a2ui
from agents_ui.sdk.agui.thread_messages import agui_history
from agents_ui.sdk.transcript import Transcript


@dataclass(frozen=True)
class RunRequest:
    """What the person asked for, as stored in Run.request."""

    kind: str = "message"  # "message" | "resume"
    message_id: int | None = None
    subagent: str = ""
    skill: str = ""  # the skill the person chose (an A2A agent's card names them)
    stream_profile: str = ""
    output_module_types: tuple[str, ...] = ()
    host_context: dict[str, Any] = field(default_factory=dict)
    resume: tuple[dict[str, Any], ...] = ()
    # kind "answer": the person's answers to tool calls the client runs (see ToolAnswer).
    answers: tuple[dict[str, Any], ...] = ()
    # The message changes the course of a run it stopped (humanInTheLoop.interventions).
    intervention: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "message_id": self.message_id,
            "subagent": self.subagent,
            "skill": self.skill,
            "stream_profile": self.stream_profile,
            "output_module_types": list(self.output_module_types),
            "host_context": self.host_context,
            "resume": list(self.resume),
            "answers": list(self.answers),
            "intervention": self.intervention,
        }


def host_context_candidates(
    request: HttpRequest, conversation: Conversation | None, endpoint: AgentEndpoint
) -> dict[str, Any]:
    """Everything the page could tell an agent about where it is used. Only accepted fields go."""
    page = request.build_absolute_uri(
        conversation.get_absolute_url() if conversation else endpoint.get_absolute_url()
    )
    return {
        "page.url": page,
        "page.title": conversation.title if conversation else endpoint.name,
        "user.locale": getattr(request, "LANGUAGE_CODE", None) or settings.LANGUAGE_CODE,
        "user.timezone": settings.TIME_ZONE,
    }


def host_context(
    request: HttpRequest, plan: Plan, endpoint: AgentEndpoint, conversation: Conversation | None
) -> dict[str, Any]:
    """What the page shares with the agent: the fields it accepts, in its order, within its limit."""
    control = plan["host-context"]
    if control.hidden:
        return {}
    candidates = host_context_candidates(request, conversation, endpoint)
    accepted = control.details.get("accepted_fields") or []
    limit = control.details.get("max_total_bytes")
    shared: dict[str, Any] = {}
    for name in accepted:
        if name not in candidates:
            continue
        trial = {**shared, name: candidates[name]}
        if limit is not None and len(json.dumps(trial).encode()) > limit:
            break  # the next field would go over the agent's limit: send what fits
        shared = trial
    return shared


def agui_input(
    run: Run, earlier: Sequence[tuple[Run, Transcript]], *, send_state: bool = True, offer_a2ui: bool = False
) -> RunAgentInput:
    """The thread so far, and this run's request, as AG-UI wants it.

    ``earlier``: the thread's runs before this one, each folded with the ones before it. Every
    run sends the whole AG-UI history (docs/PROTOCOLS.md 1.1): an agent that keeps no thread of
    its own knows it only from there, and checks that each tool result answers a call it holds.
    The last state goes back only with ``send_state`` (where state persists, or the agent did not say);
    otherwise, and on a thread's first run, the state is ``{}``, as AG-UI's own client sends it (its
    agent starts from ``initialState ?? {}``): some servers stream state only to a client that sent
    some (Agno's AG-UI interface, ``agno/os/interfaces/agui/router.py``).
    With ``offer_a2ui`` the context names the A2UI catalogue this product renders; a person's action
    on a surface travels as ``forwardedProps.a2uiAction`` (sdk/a2ui/actions.py).
    """
    conversation = run.conversation
    request = run.request or {}
    users = {
        m.pk: m for m in conversation.messages.filter(role=Message.Role.USER).prefetch_related("attachments")
    }
    turns = []
    for earlier_run, transcript in earlier:
        said = users.get((earlier_run.request or {}).get("message_id"))
        turns.append((UserMessage(id=f"user-{said.pk}", content=said.content) if said else None, transcript))
    # The person's answers to calls the client runs open this run, after the calls they answer.
    answers = answer_messages(request.get("answers"))
    messages: list[Any] = agui_history(turns, resuming=bool(request.get("resume")), answers=answers)
    current = users.get(request.get("message_id"))
    if current is not None:
        content: Any = current.content
        parts = [content_part(a) for a in current.attachments.all()]
        if parts:
            content = [TextPart(text=current.content), *parts]
        messages.append(UserMessage(id=f"user-{current.pk}", content=content))
    previous = (
        conversation.runs.exclude(pk=run.pk)
        .filter(superseded_at__isnull=True)
        .exclude(state__isnull=True)
        .order_by("-created_at")
        .first()
        if send_state
        else None
    )
    forwarded: dict[str, Any] = {}
    if request.get("subagent"):
        # docs/PROTOCOLS.md 1.1: the sub-agent the person chose travels as forwardedProps.subagent.
        forwarded["subagent"] = request["subagent"]
    action = request.get("a2ui_action")
    if isinstance(action, dict) and isinstance(action.get("userAction"), dict):
        forwarded["a2uiAction"] = {"userAction": action["userAction"]}
        if action.get("version") == a2ui.VERSION_1:
            forwarded["a2uiAction"]["version"] = a2ui.VERSION_1  # a v1.0 surface's action
        if action.get("dataModel") is not None:
            forwarded["a2uiClientDataModel"] = {"surfaces": {action.get("surface"): action["dataModel"]}}
    # What the page owes the agent for its last turn's v1.0 surfaces (refused function calls, what
    # it could not draw as sent): A2UI's renderer-to-agent messages (docs/PROTOCOLS.md 1.3b).
    replies = a2ui.thread_replies([transcript for _, transcript in earlier])
    if replies:
        forwarded["a2uiMessages"] = replies
    context = [Context(**a2ui.catalogue_context())] if offer_a2ui else []
    resume = [ResumeEntry.model_validate(entry) for entry in request.get("resume") or []]
    return RunAgentInput(
        thread_id=conversation.thread_id,
        run_id=str(run.id),
        protocol_version="1.0",
        messages=messages,
        state=previous.state if previous else {},
        tools=[],
        context=context,
        forwarded_props=forwarded or None,
        resume=resume or None,
    )


@dataclass(frozen=True)
class ToolAnswer:
    """A person's answer to a tool call the agent left for the client, as stored in Run.request."""

    id: str  # the tool message's id
    tool_call_id: str
    content: str  # the answer as JSON text, or a dismissal in words
    tool_name: str = ""
    arguments: str = ""  # the call's arguments as the agent streamed them
    parent_message_id: str = ""
    dismissed: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "toolCallId": self.tool_call_id,
            "content": self.content,
            "toolName": self.tool_name,
            "arguments": self.arguments,
            "parentMessageId": self.parent_message_id,
            "dismissed": self.dismissed,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ToolAnswer:
        return cls(
            id=str(data.get("id") or ""),
            tool_call_id=str(data.get("toolCallId") or ""),
            content=str(data.get("content") or ""),
            tool_name=str(data.get("toolName") or ""),
            arguments=str(data.get("arguments") or ""),
            parent_message_id=str(data.get("parentMessageId") or ""),
            dismissed=bool(data.get("dismissed")),
        )

    def message(self) -> ToolMessage:
        return ToolMessage(id=self.id, content=self.content, tool_call_id=self.tool_call_id)


def answer_messages(answers: Any) -> list[ToolMessage]:
    """The tool messages a run opens with when it carries the person's answers."""
    return [ToolAnswer.from_json(answer).message() for answer in answers or ()]


def content_part(attachment: Attachment) -> Any:
    source = DataSource(
        value=base64.b64encode(bytes(attachment.data)).decode(), mime_type=attachment.mime_type
    )
    metadata = {"filename": attachment.name, "size": attachment.size}
    if attachment.mime_type.startswith("image/"):
        return ImagePart(source=source, metadata=metadata)
    return DocumentPart(source=source, metadata=metadata)


async def external_events(agent: ExternalAgentClient, run: Run) -> AsyncIterator[Any]:
    """Create the remote conversation and upload files where needed, then send the message."""
    conversation = run.conversation
    request = run.request or {}
    await agent.prepare(
        stream_profile=request.get("stream_profile") or None,
        output_module_types=request.get("output_module_types") or None,
        provider_grounding_display=True,
    )
    if not conversation.remote_id:
        remote = await agent.create_conversation()
        conversation.remote_id = remote.id
        await Conversation.objects.filter(pk=conversation.pk).aupdate(remote_id=remote.id)
    message = await Message.objects.aget(pk=request["message_id"])
    file_ids = []
    async for attachment in Attachment.objects.filter(message=message):
        if not attachment.remote_id:
            info = await agent.upload_file(
                bytes(attachment.data), attachment.name, declared_mime_type=attachment.mime_type
            )
            attachment.remote_id = info.id
            await Attachment.objects.filter(pk=attachment.pk).aupdate(remote_id=info.id)
        file_ids.append(attachment.remote_id)
    return agent.send_message(
        conversation.remote_id,
        message.content,
        file_ids=file_ids or None,
        host_context=request.get("host_context") or None,
    )


KEPT = "answers_kept"  # in the asking run's request: answers waiting for the run's other calls


def kept_answers(run: Run) -> dict[str, dict[str, Any]]:
    """The answers given so far to a run whose other calls still wait for theirs: call id -> answer."""
    return {a.get("toolCallId"): {**a, "kept": True} for a in (run.request or {}).get(KEPT) or ()}

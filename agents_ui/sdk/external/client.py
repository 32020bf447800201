"""Client for external agents with a public policy (docs/PROTOCOLS.md section 2)."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Mapping
from typing import Any, Literal, TypeVar

import filetype
import httpx
from pydantic import BaseModel, ValidationError

from ..agui.client import check_event_depth
from ..discovery import DiscoveryResult
from ..errors import (
    AgentError,
    FileTooLargeError,
    ProtocolError,
    UnsupportedCapabilityError,
    UnsupportedMediaTypeError,
    validation_problems,
)
from ..limits import (
    DEFAULT_EVENT_IDLE_TIMEOUT,
    DEFAULT_MAX_FRAME_BYTES,
    DEFAULT_MAX_TOTAL_BYTES,
    DEFAULT_RUN_TIME_LIMIT,
    MAX_JSON_DEPTH,
    exceeds_depth,
)
from ..sse import SseFrame, SseParser
from ..transport import (
    BodyOutOfBoundsError,
    RunClock,
    check_content_type,
    client_for,
    make_timeout,
    raise_for_status,
    read_json,
    translate_transport_errors,
)
from ..version import SDK_VERSION
from .policy import (
    CHAT_LEGACY_V1,
    EXTERNAL_EVENT_TYPES,
    RUNTIME_STANDARD_V1,
    ApprovalDecision,
    ApprovalRequested,
    ApprovalResolved,
    ArtifactContent,
    Done,
    ExternalConversation,
    ExternalEvent,
    FileInfo,
    InteractionRequest,
    LegacyText,
    MessageRequest,
    PrepareRequest,
    PrepareResult,
    PublicExternalAgentPolicy,
    RunCompleted,
    RunFailed,
)

__all__ = [
    "ExternalAgentClient",
    "parse_external_frame",
    "parse_policy",
    "sniff_mime_type",
]

logger = logging.getLogger(__name__)

M = TypeVar("M", bound=BaseModel)

_TERMINAL = (RunCompleted, RunFailed, Done)
_TEXT_LIKE = ("text/", "application/json", "application/xml")


def _validate[M: BaseModel](model: type[M], body: Any, what: str) -> M:
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        problems = validation_problems(exc)
        raise ProtocolError(
            f"{what}: the agent's answer is not a valid {model.__name__}: {problems}"
        ) from exc


def parse_policy(raw: Any) -> PublicExternalAgentPolicy:
    """Validate a policy document; raises ProtocolError saying why when it is invalid.

    A policy nested past MAX_JSON_DEPTH is invalid before any validator recurses into it.
    """
    what = "reading the agent's policy"
    if exceeds_depth(raw, MAX_JSON_DEPTH):
        raise ProtocolError(f"{what}: the policy is nested more than {MAX_JSON_DEPTH} levels deep")
    return _validate(PublicExternalAgentPolicy, raw, what)


def parse_external_frame(frame: SseFrame) -> ExternalEvent | None:
    """One SSE frame of any of the three stream profiles -> its typed event (None: unknown, logged)."""
    check_event_depth(frame.data)
    if frame.event is None or frame.event == "message":
        # chat-legacy-v1: unnamed frames ("message" is the SSE default name).
        if frame.data.strip() == "[DONE]":
            return Done(sequence=_sequence(frame.id))
        try:
            obj = json.loads(frame.data)
        except (ValueError, RecursionError) as exc:
            raise ProtocolError(f"the agent sent a frame that is not valid JSON ({exc})") from exc
        if isinstance(obj, dict) and isinstance(obj.get("text"), str):
            return LegacyText(text=obj["text"], sequence=_sequence(frame.id))
        logger.warning("skipping an unnamed frame that is not chat-legacy-v1 text")
        return None
    cls = EXTERNAL_EVENT_TYPES.get(frame.event)
    if cls is None:
        logger.warning("skipping external-agent event of unknown name %r", frame.event[:100])
        return None
    try:
        event = cls.model_validate_json(frame.data)
    except ValidationError as exc:
        first = validation_problems(exc, limit=1, root="(event)")
        raise ProtocolError(f"the agent sent a {frame.event!r} event that is not valid: {first}") from exc
    event.sequence = _sequence(frame.id)
    return event


def _sequence(value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return int(value)
    except ValueError:
        return None


def sniff_mime_type(content: bytes, declared: str | None = None) -> str:
    """The MIME type of ``content`` judged from its bytes, as the agent does (docs/PROTOCOLS.md 2.3, 415).

    Binary formats are recognised by signature (filetype). Bytes without a signature that decode as
    UTF-8 are text: the declared type is kept when it is a text type, else ``text/plain``.
    """
    kind = filetype.guess(content)
    if kind is not None:
        # WebM is one container for sound and picture: a recording labelled audio stays audio.
        if kind.mime == "video/webm" and (declared or "").split(";", 1)[0].strip().lower() == "audio/webm":
            return "audio/webm"
        return kind.mime
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return "application/octet-stream"
    if declared and declared.split(";", 1)[0].strip().lower().startswith(_TEXT_LIKE):
        return declared.split(";", 1)[0].strip().lower()
    return "text/plain"


class ExternalAgentClient:
    """An external agent at ``base_url``. Remembers the last policy and negotiation it read."""

    def __init__(
        self,
        base_url: str,
        *,
        token: str | None = None,
        headers: Mapping[str, str] | None = None,
        policy_url: str | None = None,
        timeout: float | httpx.Timeout | None = None,
        client: httpx.AsyncClient | None = None,
        sdk_version: str | None = None,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        event_idle_timeout: float | None = DEFAULT_EVENT_IDLE_TIMEOUT,
        run_time_limit: float | None = DEFAULT_RUN_TIME_LIMIT,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token
        # Extra headers for every request (e.g. a custom credential header); never logged.
        self._extra_headers = dict(headers or {})
        self.discovery_url = policy_url or f"{self.base_url}/policy"
        self.timeout = make_timeout(timeout)
        self._client = client
        self.sdk_version = sdk_version or SDK_VERSION
        self.max_frame_bytes = max_frame_bytes
        self.max_total_bytes = max_total_bytes
        self.event_idle_timeout = event_idle_timeout
        self.run_time_limit = run_time_limit
        self.policy: PublicExternalAgentPolicy | None = None
        self.prepared: PrepareResult | None = None

    def __repr__(self) -> str:  # never the token
        return f"ExternalAgentClient({self.base_url!r})"

    # --- plumbing -------------------------------------------------------------------------------

    def _headers(self, accept: str = "application/json") -> dict[str, str]:
        headers = {"Accept": accept, "X-Agent-SDK-Version": self.sdk_version}
        headers.update(self._extra_headers)
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return headers

    async def _request(
        self,
        method: str,
        path: str,
        what: str,
        *,
        json_body: BaseModel | None = None,
        files: Mapping[str, Any] | None = None,
    ) -> Any:
        """One request/response call; returns the decoded JSON body (None for 204)."""
        kwargs: dict[str, Any] = {}
        if json_body is not None:
            kwargs["content"] = json_body.model_dump_json(exclude_none=True)
        if files is not None:
            kwargs["files"] = files
        headers = self._headers()
        if json_body is not None:
            headers["Content-Type"] = "application/json"
        async with client_for(self._client) as client:
            with translate_transport_errors(what):
                url = path if path.startswith(("http://", "https://")) else f"{self.base_url}{path}"
                async with client.stream(
                    method, url, headers=headers, timeout=self.timeout, **kwargs
                ) as response:
                    await raise_for_status(response)
                    if response.status_code == 204 or response.headers.get("content-length") == "0":
                        return None
                    return await read_json(response, what)

    # --- 2.1 policy and negotiation ---------------------------------------------------------------

    async def get_effective_policy(self) -> PublicExternalAgentPolicy:
        """``GET /policy``. Raises ProtocolError when the answer is not a valid policy."""
        body = await self._request("GET", self.discovery_url, "reading the agent's policy")
        self.policy = parse_policy(body)
        return self.policy

    async def discover(self) -> DiscoveryResult[PublicExternalAgentPolicy]:
        """Read the policy for a snapshot; never raises for agent-side problems."""
        url = self.discovery_url
        try:
            body = await self._request("GET", url, "reading the agent's policy")
        except BodyOutOfBoundsError as exc:
            return DiscoveryResult("invalid", url, error=exc.message, error_code=exc.code)
        except AgentError as exc:
            if exc.status in (404, 405):
                return DiscoveryResult("none", url, error=str(exc), error_code=exc.code)
            return DiscoveryResult("unreachable", url, error=str(exc), error_code=exc.code)
        if not isinstance(body, dict):
            return DiscoveryResult("none", url, error="the policy answer is not a JSON object")
        try:
            policy = parse_policy(body)
        except ProtocolError as exc:
            return DiscoveryResult("invalid", url, raw=body, error=exc.message, error_code=exc.code)
        self.policy = policy
        return DiscoveryResult("declared", url, declaration=policy, raw=body)

    async def prepare(
        self,
        stream_profile: str | None = None,
        output_module_types: list[str] | None = None,
        provider_grounding_display: bool | None = None,
    ) -> PrepareResult:
        """``POST /prepare``: propose, and get back what the agent granted (read ``.negotiated``)."""
        request = PrepareRequest(
            stream_profile=stream_profile,
            output_module_types=output_module_types,
            provider_grounding_display=provider_grounding_display,
        )
        body = await self._request("POST", "/prepare", "negotiating with the agent", json_body=request)
        self.prepared = _validate(PrepareResult, body, "negotiating with the agent")
        self.policy = self.prepared.policy
        return self.prepared

    # --- 2.2 conversations and streaming ----------------------------------------------------------

    async def create_conversation(self) -> ExternalConversation:
        body = await self._request("POST", "/conversations", "creating a conversation")
        return _validate(ExternalConversation, body, "creating a conversation")

    def _stream_profile(self, requested: str | None) -> str:
        if requested:
            return requested
        if self.prepared is not None:
            return self.prepared.negotiated.stream_profile
        if self.policy is not None and self.policy.default_stream_profile:
            return self.policy.default_stream_profile
        return RUNTIME_STANDARD_V1

    async def send_message(
        self,
        conversation_id: str,
        content: str,
        *,
        stream_profile: str | None = None,
        file_ids: list[str] | None = None,
        host_context: dict[str, Any] | None = None,
        output_module_types: list[str] | None = None,
        notes: list[str] | None = None,
    ) -> AsyncIterator[ExternalEvent]:
        """Send a message and yield the typed events of the answer, for all three stream profiles.

        The profile defaults to the negotiated one. Ends after run:completed, run:failed or [DONE];
        raises ProtocolError if the stream ends before (after yielding what arrived). An
        ``approval:requested`` event leaves the stream open: decide it with :meth:`decide_approval`
        (from another task) and keep iterating; the idle limit on events waits with it, the run's
        time limit does not. Closing the iterator closes the connection. The run's bounds and
        ``notes`` work as in ``AgUiAgent.run``.
        """
        profile = self._stream_profile(stream_profile)
        if output_module_types is None and self.prepared is not None:
            output_module_types = self.prepared.negotiated.output_module_types
        request = MessageRequest(
            content=content,
            file_ids=file_ids,
            host_context=host_context,
            stream_profile=profile,
            output_module_types=output_module_types,
        )
        headers = {**self._headers("text/event-stream"), "Content-Type": "application/json"}
        url = f"{self.base_url}/conversations/{conversation_id}/messages"
        parser = SseParser(
            max_frame_bytes=self.max_frame_bytes, max_total_bytes=self.max_total_bytes, notes=notes
        )
        clock = RunClock(self.event_idle_timeout, self.run_time_limit)
        undecided: set[str] = set()
        what = "sending a message"
        async with client_for(self._client) as client:
            with translate_transport_errors(what):
                async with client.stream(
                    "POST",
                    url,
                    content=request.model_dump_json(exclude_none=True),
                    headers=headers,
                    timeout=self.timeout,
                ) as response:
                    await raise_for_status(response)
                    check_content_type(response, "text/event-stream", what)
                    chunks = response.aiter_bytes()
                    while (chunk := await clock.next_chunk(chunks)) is not None:
                        frames = parser.feed(chunk)
                        for frame in frames:
                            event = parse_external_frame(frame)
                            if event is None:
                                continue
                            if isinstance(event, ApprovalRequested):
                                undecided.add(event.approval_id)
                            elif isinstance(event, ApprovalResolved):
                                undecided.discard(event.approval_id)
                            clock.waiting = len(undecided)
                            yield event
                            if isinstance(event, _TERMINAL):
                                return
                        if frames:
                            clock.event_seen()
                    cut = parser.has_partial_frame
                    parser.close()
        where = " in the middle of a frame" if cut else ""
        end = "[DONE]" if profile == CHAT_LEGACY_V1 else "run:completed or run:failed"
        raise ProtocolError(f"the agent's stream ended{where} before {end}")

    async def decide_approval(
        self,
        approval_id: str,
        decision: Literal["approve", "deny"],
        *,
        edited_input: dict[str, Any] | None = None,
        reason: str | None = None,
    ) -> Any:
        """``POST /approvals/{id}``. Returns the agent's JSON answer (None for 204)."""
        request = ApprovalDecision(decision=decision, edited_input=edited_input, reason=reason)
        return await self._request(
            "POST", f"/approvals/{approval_id}", "deciding an approval", json_body=request
        )

    async def upload_file(
        self,
        content: bytes,
        filename: str,
        *,
        declared_mime_type: str | None = None,
        policy: PublicExternalAgentPolicy | None = None,
    ) -> FileInfo:
        """``POST /files``, after checking the policy locally so a refused file is never sent.

        The MIME type is sniffed from the bytes, as the agent does. Uses ``policy``, else the last
        policy read, else reads it now.
        """
        policy = policy or self.policy or await self.get_effective_policy()
        if not policy.capabilities.files:
            raise UnsupportedCapabilityError(capability="files")
        file_policy = policy.file_policy
        if not file_policy.upload:
            raise UnsupportedCapabilityError(capability="filePolicy.upload")
        limit = file_policy.max_upload_bytes
        if limit is not None and len(content) > limit:
            raise FileTooLargeError(f"the file is {len(content)} bytes; the agent accepts at most {limit}")
        mime_type = sniff_mime_type(content, declared_mime_type)
        if not file_policy.allows_mime_type(mime_type):
            allowed = ", ".join(file_policy.allowed_mime_types) or "none"
            raise UnsupportedMediaTypeError(
                f"the file's content is {mime_type}; the agent accepts: {allowed}"
            )
        body = await self._request(
            "POST", "/files", "uploading a file", files={"file": (filename, content, mime_type)}
        )
        return _validate(FileInfo, body, "uploading a file")

    async def get_file(self, file_id: str) -> FileInfo:
        body = await self._request("GET", f"/files/{file_id}", "reading a file")
        return _validate(FileInfo, body, "reading a file")

    async def list_artifacts(self, conversation_id: str) -> list[ArtifactContent]:
        what = "listing artifacts"
        body = await self._request("GET", f"/conversations/{conversation_id}/artifacts", what)
        # Accept a bare list and the common {"artifacts": [...]} envelope.
        if isinstance(body, dict) and isinstance(body.get("artifacts"), list):
            body = body["artifacts"]
        if not isinstance(body, list):
            raise ProtocolError(f"{what}: the agent's answer is not a list of artifacts")
        return [_validate(ArtifactContent, item, what) for item in body]

    async def get_artifact(self, artifact_id: str) -> ArtifactContent:
        body = await self._request("GET", f"/artifacts/{artifact_id}", "reading an artifact")
        return _validate(ArtifactContent, body, "reading an artifact")

    async def send_interaction(
        self,
        conversation_id: str,
        message_id: str,
        value: Literal["up", "down"],
        *,
        comment: str | None = None,
    ) -> Any:
        """``POST /interactions``: feedback on one message. Returns the agent's JSON answer."""
        request = InteractionRequest(
            conversation_id=conversation_id, message_id=message_id, value=value, comment=comment
        )
        return await self._request("POST", "/interactions", "sending feedback", json_body=request)

"""A2A agents (Agent2Agent 1.0), through the official `a2a-sdk`: its types, Agent Card parser, client.

Discovery reads the Agent Card at `{base}/.well-known/agent-card.json` (bounded in size and depth,
parsed by the SDK) and tells four outcomes apart: a card the client can use, an unreachable card, a
card that fails validation, and a valid card whose interfaces the client cannot speak (gRPC only).
Nothing else the card names is fetched here: only the card and the interface it declares.

A run sends one message (streaming when the card says so, else one complete response) and yields
the SDK's `StreamResponse` objects as they come (task, message, status update, artifact update),
within the run's bounds: the whole answer's size, the wait for each event, the run's length.
No Django import in here.
"""

from __future__ import annotations

import asyncio
import contextvars
import copy
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import aclosing
from typing import Any

import httpx
from a2a.client import A2AClientError, A2AClientTimeoutError, ClientConfig, ClientFactory
from a2a.client.card_resolver import parse_agent_card
from a2a.extensions.common import HTTP_EXTENSION_HEADER
from a2a.types import a2a_pb2 as pb
from a2a.utils import errors as a2a_errors
from a2a.utils.constants import AGENT_CARD_WELL_KNOWN_PATH, TransportProtocol
from google.protobuf.json_format import MessageToDict, ParseDict, ParseError

from ..discovery import DiscoveryResult
from ..errors import (
    AgentError,
    AgentTimeoutError,
    AgentUnreachableError,
    EventIdleTimeoutError,
    InternalAgentError,
    InvalidRequestError,
    NotFoundError,
    ProtocolError,
    RateLimitedError,
    RunTimeLimitError,
    RunTooLargeError,
    UnsupportedCapabilityError,
    UnsupportedMediaTypeError,
    parse_retry_after,
)
from ..guard import same_origin
from ..limits import (
    DEFAULT_EVENT_IDLE_TIMEOUT,
    DEFAULT_MAX_TOTAL_BYTES,
    DEFAULT_RUN_TIME_LIMIT,
    MAX_JSON_DEPTH,
    exceeds_depth,
    size_label,
)
from ..transport import (
    BodyOutOfBoundsError,
    make_timeout,
    raise_for_status,
    read_json,
    translate_transport_errors,
)

__all__ = [
    "CARD_PATH",
    "USABLE_BINDINGS",
    "A2AAgent",
    "event_from_record",
    "event_record",
    "normalised_card",
    "parse_card",
    "usable_interface",
    "well_known_card_url",
]

CARD_PATH = AGENT_CARD_WELL_KNOWN_PATH
# The bindings the SDK's client speaks without extra packages (gRPC needs grpcio).
USABLE_BINDINGS: tuple[str, ...] = (TransportProtocol.JSONRPC.value, TransportProtocol.HTTP_JSON.value)
# An Agent Card is a small document; a large one is refused before it is parsed.
MAX_CARD_BYTES = 512 * 1024

LEGACY_EXTENSIONS_HEADER = f"X-{HTTP_EXTENSION_HEADER}"


def well_known_card_url(base_url: str) -> str:
    return f"{base_url.rstrip('/')}{CARD_PATH}"


def parse_card(raw: Mapping[str, Any]) -> pb.AgentCard:
    """The SDK's AgentCard from a card's JSON (0.3 fields mapped by the SDK), or ProtocolError."""
    if not isinstance(raw, Mapping):
        raise ProtocolError("the Agent Card is not a JSON object")
    if exceeds_depth(raw, MAX_JSON_DEPTH):
        raise ProtocolError(f"the Agent Card is nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        # The SDK's parser rewrites 0.3 fields in place: it gets a copy.
        card = parse_agent_card(copy.deepcopy(dict(raw)))
    except (ParseError, TypeError, ValueError, AttributeError) as exc:
        raise ProtocolError(f"the Agent Card is not valid: {exc}") from exc
    missing = [name for name in ("name", "description", "version") if not getattr(card, name)]
    if missing or not card.supported_interfaces:
        what = ", ".join([*missing, *([] if card.supported_interfaces else ["supportedInterfaces"])])
        raise ProtocolError(f"the Agent Card lacks required fields: {what}")
    return card


def normalised_card(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A card's JSON in the SDK's 1.0 field names (0.3 fields mapped), or ProtocolError."""
    return MessageToDict(parse_card(raw))


def usable_interface(card: pb.AgentCard) -> pb.AgentInterface | None:
    """The first declared interface the client speaks over HTTP(S), in the agent's order."""
    for interface in card.supported_interfaces:
        if interface.protocol_binding in USABLE_BINDINGS and interface.url.lower().startswith(
            ("http://", "https://")
        ):
            return interface
    return None


# --- the event log: each StreamResponse as the JSON the agent's binding carries -------------------

_KINDS = ("task", "message", "status_update", "artifact_update")


def event_record(event: pb.StreamResponse) -> tuple[str, str]:
    """A StreamResponse -> (type, JSON text) for a run's event log."""
    import json

    kind = event.WhichOneof("payload") or "empty"
    return f"a2a:{kind}", json.dumps(MessageToDict(event), separators=(",", ":"))


def event_from_record(type_: str, payload: Mapping[str, Any]) -> pb.StreamResponse | None:
    if not type_.startswith("a2a:") or type_[4:] not in _KINDS:
        return None
    return ParseDict(dict(payload), pb.StreamResponse(), ignore_unknown_fields=True)


# --- errors ---------------------------------------------------------------------------------------

_ERRORS: tuple[tuple[type[Exception], type[AgentError], str], ...] = (
    (a2a_errors.TaskNotFoundError, NotFoundError, "The agent no longer knows this task."),
    (a2a_errors.TaskNotCancelableError, InvalidRequestError, "The task has ended: it cannot be stopped."),
    (a2a_errors.ContentTypeNotSupportedError, UnsupportedMediaTypeError, ""),
    (a2a_errors.UnsupportedOperationError, UnsupportedCapabilityError, ""),
    (a2a_errors.PushNotificationNotSupportedError, UnsupportedCapabilityError, ""),
    (a2a_errors.InvalidParamsError, InvalidRequestError, ""),
    (a2a_errors.InvalidRequestError, InvalidRequestError, ""),
    (a2a_errors.MethodNotFoundError, UnsupportedCapabilityError, ""),
    (a2a_errors.VersionNotSupportedError, UnsupportedCapabilityError, ""),
    (a2a_errors.ExtensionSupportRequiredError, UnsupportedCapabilityError, ""),
    (a2a_errors.InvalidAgentResponseError, ProtocolError, ""),
    (a2a_errors.JSONParseError, ProtocolError, ""),
    (a2a_errors.InternalError, InternalAgentError, ""),
)


def translate(exc: BaseException) -> AgentError:
    """An SDK error as the product's AgentError (the JSON-RPC / HTTP errors of the spec)."""
    if isinstance(exc, AgentError):
        return exc
    if isinstance(exc, A2AClientTimeoutError | httpx.TimeoutException | TimeoutError):
        return AgentTimeoutError(f"the A2A agent did not answer in time ({exc})")
    for cls, ours, message in _ERRORS:
        if isinstance(exc, cls):
            error = ours(message or str(exc)[:300] or None)
            if ours is UnsupportedCapabilityError:
                error.capability = "this request"
            return error
    response = getattr(exc.__cause__, "response", None)
    if isinstance(exc, A2AClientError) and isinstance(response, httpx.Response):
        status = response.status_code
        if status in (401, 403):
            return InvalidRequestError(
                "the A2A agent refused the credentials", code="unauthorized", status=status
            )
        if status == 429:
            retry = parse_retry_after(response.headers.get("Retry-After"))
            return RateLimitedError(status=status, retry_after=retry)
        if status == 404:
            return NotFoundError("nothing answers at the interface the Agent Card gives", status=status)
        if status >= 500:
            return InternalAgentError(status=status)
    if isinstance(exc, A2AClientError):
        text = str(exc)
        if "Network communication error" in text or "HTTP client is closed" in text:
            return AgentUnreachableError(text[:300])
        return ProtocolError(text[:300])
    if isinstance(exc, httpx.HTTPError):
        return AgentUnreachableError(str(exc)[:300])
    if isinstance(exc, ValueError):  # the SDK's "no compatible transports found", a bad payload
        return ProtocolError(str(exc)[:300])
    return InternalAgentError(str(exc)[:300] or None)


# --- the client -----------------------------------------------------------------------------------


def interface_url(client: Any) -> str | None:
    """The interface URL the SDK's client was made for (its transport's, under a tenant's wrapper);
    None when it cannot be told, and then the credential stays home."""
    transport = getattr(client, "_transport", None)
    url = getattr(getattr(transport, "_base", transport), "url", None)
    return url if isinstance(url, str) else None


# A call that reads a card (the extended card) cuts its answer at the card's bound, not the run's.
_CARD_CALL: contextvars.ContextVar[bool] = contextvars.ContextVar("a2a_card_call", default=False)


class CardTooLargeError(ProtocolError):
    """An extended card past MAX_CARD_BYTES, cut as it arrived."""


class _CappedStream(httpx.AsyncByteStream):
    """A response body cut once it passes `limit` bytes: the SDK reads SSE lines and JSON bodies
    whole, so an agent's endless line must stop here, before it is buffered."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner, self._limit, self._seen = inner, limit, 0
        self._card = _CARD_CALL.get()
        if self._card:
            self._limit = min(limit, MAX_CARD_BYTES)

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._seen += len(chunk)
            if self._seen > self._limit and self._card:
                raise CardTooLargeError(f"the extended Agent Card is larger than {size_label(self._limit)}")
            if self._seen > self._limit:
                raise RunTooLargeError(
                    f"The agent's answer reached {size_label(self._limit)}, the most one run may take, "
                    "so the run was stopped there."
                )
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


def _cap_responses(client: httpx.AsyncClient, limit: int) -> None:
    """Every response the client reads for the SDK is cut at `limit` bytes (added once per client)."""
    if getattr(client, "_a2a_capped", False):
        return

    async def cap(response: httpx.Response) -> None:
        response.stream = _CappedStream(response.stream, limit)

    client.event_hooks["response"] = [*client.event_hooks["response"], cap]
    client._a2a_capped = True  # type: ignore[attr-defined]


class A2AAgent:
    """One A2A agent: its card, and runs through the SDK's client on the caller's HTTP client."""

    def __init__(
        self,
        base_url: str,
        *,
        client: httpx.AsyncClient,
        headers: Mapping[str, str] | None = None,
        timeout: float | httpx.Timeout | None = None,
        card_url: str | None = None,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        event_idle_timeout: float = DEFAULT_EVENT_IDLE_TIMEOUT,
        run_time_limit: float = DEFAULT_RUN_TIME_LIMIT,
    ) -> None:
        self.base_url = base_url
        self.discovery_url = card_url or well_known_card_url(base_url)
        self._client = client
        self._headers = dict(headers or {})
        self.timeout = make_timeout(timeout)
        self.max_total_bytes = max_total_bytes
        self.event_idle_timeout = event_idle_timeout
        self.run_time_limit = run_time_limit

    async def discover(self) -> DiscoveryResult[pb.AgentCard]:
        """Read the Agent Card. Never raises for agent-side problems."""
        url = self.discovery_url
        try:
            with translate_transport_errors("the Agent Card"):
                async with self._client.stream(
                    "GET", url, headers={**self._headers, "Accept": "application/json"}, timeout=self.timeout
                ) as response:
                    await raise_for_status(response)
                    try:
                        body = await read_json(response, "the Agent Card", limit=MAX_CARD_BYTES)
                    except BodyOutOfBoundsError as exc:
                        return DiscoveryResult("invalid", url, error=exc.message, error_code=exc.code)
        except ProtocolError as exc:  # a 200 that is not JSON: the card is not valid
            return DiscoveryResult("invalid", url, error=exc.message, error_code=exc.code)
        except AgentError as exc:
            return DiscoveryResult("unreachable", url, error=str(exc), error_code=exc.code)
        if not isinstance(body, dict):
            return DiscoveryResult("invalid", url, error="the Agent Card is not a JSON object")
        try:
            card = parse_card(body)
        except ProtocolError as exc:
            return DiscoveryResult("invalid", url, raw=body, error=exc.message, error_code=exc.code)
        if usable_interface(card) is None:
            bindings = ", ".join(sorted({i.protocol_binding or "?" for i in card.supported_interfaces}))
            return DiscoveryResult(
                "unsupported",
                url,
                declaration=card,
                raw=body,
                error=f"the card offers only {bindings}; this product speaks {', '.join(USABLE_BINDINGS)}",
            )
        return DiscoveryResult("declared", url, declaration=card, raw=body)

    async def extended_card(self, card: pb.AgentCard) -> DiscoveryResult[pb.AgentCard]:
        """The extended Agent Card (GetExtendedAgentCard), asked with the endpoint's credential and
        read within the card's bounds; `declared`, or `invalid` / `unreachable` with the error."""
        url = f"{self.discovery_url} (GetExtendedAgentCard)"
        token = _CARD_CALL.set(True)
        client, headers = None, {}
        try:
            client, headers = self._sdk_client(card, streaming=False)
            found = await asyncio.wait_for(
                client.get_extended_agent_card(
                    pb.GetExtendedAgentCardRequest(), context=self._context(headers)
                ),
                timeout=self.timeout.read or None,
            )
            raw = MessageToDict(found)
            extended = parse_card(raw)
        except Exception as exc:
            # The SDK wraps what the body's reader raised (the cut at the card's size).
            error = translate(exc.__cause__ if isinstance(exc.__cause__, CardTooLargeError) else exc)
            error = self._withheld(error, client=client, headers=headers)
            status = "invalid" if isinstance(error, ProtocolError) else "unreachable"
            return DiscoveryResult(status, url, error=str(error), error_code=error.code)
        finally:
            _CARD_CALL.reset(token)
        if usable_interface(extended) is None:
            return DiscoveryResult(
                "unsupported", url, raw=raw, error="the extended card offers no interface this product speaks"
            )
        return DiscoveryResult("declared", url, declaration=extended, raw=raw)

    def interface_url(self, card: pb.AgentCard) -> str | None:
        """The interface URL messages go to for this card (the SDK's choice), None when none fits."""
        try:
            client, _ = self._sdk_client(card, streaming=False)
        except ValueError:
            return None
        return interface_url(client)

    def _sdk_client(self, card: pb.AgentCard, *, streaming: bool) -> tuple[Any, dict[str, str]]:
        """The SDK's client for the card's interface, and the headers that interface may be sent."""
        _cap_responses(self._client, self.max_total_bytes)
        config = ClientConfig(
            streaming=streaming,
            httpx_client=self._client,
            supported_protocol_bindings=list(USABLE_BINDINGS),
        )
        # The card's own order decides among the bindings both sides speak (the SDK's default).
        client = ClientFactory(config).create(card)
        return client, self._headers_for(interface_url(client))

    def _headers_for(self, url: str | None) -> dict[str, str]:
        """The credential goes only to an interface on the origin the admin entered (the agent's
        URL, or its card's): a card is the agent's word, and may name any host. A card naming an
        interface elsewhere is asked without it."""
        if url and any(same_origin(own, url) for own in (self.base_url, self.discovery_url)):
            return self._headers
        return {}

    def _withheld(self, error: AgentError, *, client: Any, headers: Mapping[str, str]) -> AgentError:
        """A refusal of the credentials the agent was not sent says so, with where it went instead."""
        if not self._headers or headers or error.code != "unauthorized":
            return error
        where = interface_url(client) or "another address"
        return InvalidRequestError(
            f"the Agent Card names an interface at {where}, not on the agent's own address, so its "
            "credential was not sent there (and the agent refused the request without it)",
            code="unauthorized",
            status=getattr(error, "status", None),
        )

    def _context(self, headers: Mapping[str, str], extensions: Sequence[str] = ()) -> Any:
        from a2a.client import ClientCallContext
        from a2a.client.service_parameters import ServiceParametersFactory, with_a2a_extensions

        parameters = ServiceParametersFactory.create_from(
            dict(headers), [with_a2a_extensions(list(extensions))]
        )
        if extensions:
            # A2UI's extension document names the header of A2A 0.3 (X-A2A-Extensions); A2A 1.0 and
            # the SDK read A2A-Extensions: both carry the same list.
            parameters[LEGACY_EXTENSIONS_HEADER] = parameters[HTTP_EXTENSION_HEADER]
        return ClientCallContext(timeout=self.timeout.read, service_parameters=parameters or None)

    async def send(
        self,
        card: pb.AgentCard,
        message: pb.Message,
        *,
        stream: bool = True,
        extensions: Sequence[str] = (),
    ) -> AsyncIterator[pb.StreamResponse]:
        """Send one message and yield what the agent answers, within the run's bounds.

        Ends when the agent's stream ends (a task in a final or interrupted state, or a message).
        Closing the iterator early closes the connection. `extensions` are activated for the
        request (the A2A-Extensions header).
        """
        request = pb.SendMessageRequest(message=message)
        try:
            client, headers = self._sdk_client(card, streaming=stream)
        except ValueError as exc:
            raise UnsupportedCapabilityError(str(exc), capability="the agent's interfaces") from exc
        context = self._context(headers, extensions)
        try:
            async with aclosing(client.send_message(request, context=context)) as events:
                async for event in self._bounded(events):
                    yield event
        except AgentError as error:
            said = self._withheld(error, client=client, headers=headers)
            if said is error:
                raise
            raise said from error

    async def subscribe(
        self, card: pb.AgentCard, task_id: str, *, extensions: Sequence[str] = ()
    ) -> AsyncIterator[pb.StreamResponse]:
        """Follow a task that is still working (after a cut connection)."""
        client, headers = self._sdk_client(card, streaming=True)
        request = pb.SubscribeToTaskRequest(id=task_id)
        async with aclosing(client.subscribe(request, context=self._context(headers, extensions))) as events:
            async for event in self._bounded(events):
                yield event

    async def get_task(self, card: pb.AgentCard, task_id: str) -> pb.Task:
        client, headers = self._sdk_client(card, streaming=False)
        try:
            return await client.get_task(pb.GetTaskRequest(id=task_id), context=self._context(headers))
        except Exception as exc:
            raise translate(exc) from exc

    async def cancel(self, card: pb.AgentCard, task_id: str) -> pb.Task:
        """Ask the agent to cancel the task (tasks/cancel)."""
        client, headers = self._sdk_client(card, streaming=False)
        try:
            return await client.cancel_task(pb.CancelTaskRequest(id=task_id), context=self._context(headers))
        except Exception as exc:
            raise translate(exc) from exc

    async def _bounded(self, events: AsyncIterator[pb.StreamResponse]) -> AsyncIterator[pb.StreamResponse]:
        started = time.monotonic()
        total = 0
        iterator = aiter(events)
        while True:
            left = self.run_time_limit - (time.monotonic() - started)
            if left <= 0:
                raise RunTimeLimitError(
                    f"The agent's answer took longer than {self.run_time_limit:g} seconds, "
                    "the most one run may take, so it was stopped there."
                )
            try:
                event = await asyncio.wait_for(anext(iterator), timeout=min(left, self.event_idle_timeout))
            except StopAsyncIteration:
                return
            except TimeoutError as exc:
                if time.monotonic() - started >= self.run_time_limit:
                    raise RunTimeLimitError(
                        f"The agent's answer took longer than {self.run_time_limit:g} seconds, "
                        "the most one run may take, so it was stopped there."
                    ) from exc
                raise EventIdleTimeoutError(
                    f"The agent sent nothing for {self.event_idle_timeout:g} seconds, so the run was stopped."
                ) from exc
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                raise translate(exc) from exc
            total += event.ByteSize()
            if total > self.max_total_bytes:
                raise RunTooLargeError(
                    f"The agent's answer reached {size_label(self.max_total_bytes)}, the most one run may "
                    "take, so the run was stopped there."
                )
            yield event

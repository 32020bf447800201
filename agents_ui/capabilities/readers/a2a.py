"""An A2A Agent Card (A2A 1.0) read into the capability profile.

The card is read in the SDK's 1.0 form (`a2a.client.card_resolver.parse_agent_card` maps a 0.3 card's
`url`, `preferredTransport` and `security` onto `supportedInterfaces` and `securityRequirements`), so
every provenance path is a 1.0 field name. What follows from the protocol rather than a field is
inferred: every A2A task can be canceled (tasks/cancel), and a message carries no client tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents_ui.capabilities.profile import (
    A2A,
    CapabilityProfile,
    Files,
    HumanInTheLoop,
    Identity,
    Modalities,
    Multimodal,
    Output,
    Thread,
    Tools,
    Transport,
    follows,
)
from agents_ui.capabilities.provenance import Fact, Kind, Provenance
from agents_ui.capabilities.readers import a2ui
from agents_ui.capabilities.readers.document import Document, capped, kept
from agents_ui.capabilities.values import CredentialInfo, SkillInfo

SOURCE = "A2A Agent Card"
PROTOCOL = "A2A protocol (docs/PROTOCOLS.md 3)"

# The agent keeps the conversation under its context id; A2UI's A2A extension takes a surface's
# action back as a message; a rating has nowhere to go, and the agent runs its own tools.
THREAD = Thread(
    kept_by_agent=follows(
        PROTOCOL,
        "Message.contextId",
        True,
        "The agent keeps its own copy of the conversation under its context id: a message cannot be "
        "taken back",
    ),
    feedback_sent=follows(PROTOCOL, "SendMessage", False, "A2A carries no rating of an answer to the agent"),
    surface_actions=follows(
        PROTOCOL, "A2UI extension DataPart", True, "A press on an interface goes back as an A2UI message"
    ),
    tool_answers=follows(
        PROTOCOL, "SendMessage", False, "The agent runs its own tools: none waits for the client"
    ),
)
# Input modes are media types (A2A 1.0): "text/plain" takes text in any part, a text file too. "text"
# is the name earlier cards gave it.
MODE_NAMES = {"text": "text/plain"}
# Card fields this reader reads; the others are kept and shown.
READ_FIELDS = frozenset(
    {
        "name",
        "description",
        "version",
        "provider",
        "documentationUrl",
        "capabilities",
        "defaultInputModes",
        "defaultOutputModes",
        "skills",
        "securitySchemes",
        "securityRequirements",
        "supportedInterfaces",
    }
)
MAX_SKILLS = 100
MAX_EXAMPLES = 20


def read(card: Mapping[str, Any]) -> CapabilityProfile:
    """`card` is the Agent Card as JSON, in 1.0 field names (see `normalised`)."""
    doc = Document(card, SOURCE)
    inputs = doc.texts("defaultInputModes")
    file_types: tuple[str, ...] | None = None
    if inputs.value is not None:
        file_types = input_modes(inputs.value)
    files_note = "input modes are media types: files of those types may be attached (text/plain too)"
    skills = doc.items("skills", _skill)
    if skills.value is not None and len(skills.value) > MAX_SKILLS:
        skills = Fact(skills.value[:MAX_SKILLS], skills.provenance)
    accept_any = file_types is not None and any(m in ("*/*", "*") for m in file_types)
    return CapabilityProfile(
        shape=A2A,
        identity=Identity(
            name=doc.text("name"),
            description=doc.text("description"),
            version=doc.text("version"),
            provider=doc.text("provider.organization"),
            documentation_url=doc.url("documentationUrl"),
        ),
        transport=Transport(
            streaming=doc.flag(
                "capabilities.streaming",
                note="message/stream: the answer streams as the task's updates arrive",
            ),
            push_notifications=doc.flag(
                "capabilities.pushNotifications",
                note="declared; this product follows a task over its stream, not by push notifications",
            ),
        ),
        tools=Tools(
            client_provided=Fact(
                False,
                (
                    Provenance(
                        PROTOCOL,
                        "SendMessage",
                        None,
                        Kind.INFERRED,
                        "An A2A message carries no client tools: the agent takes none",
                    ),
                ),
            ),
        ),
        output=Output(mime_types=doc.texts("defaultOutputModes")),
        multimodal=Multimodal(input=_modalities(inputs.provenance, file_types)),
        human_in_the_loop=HumanInTheLoop(
            mechanism=Fact(
                "input-required",
                (
                    Provenance(
                        PROTOCOL,
                        "TASK_STATE_INPUT_REQUIRED",
                        None,
                        Kind.INFERRED,
                        "An A2A task may stop to ask the person; the next message answers it",
                    ),
                ),
            ),
            interventions=Fact(
                True,
                (
                    Provenance(
                        PROTOCOL,
                        "CancelTask",
                        None,
                        Kind.INFERRED,
                        "Every A2A task can be asked to cancel (tasks/cancel): Stop cancels it",
                    ),
                ),
            ),
        ),
        files=Files(
            enabled=_derived(inputs, bool(file_types) if file_types is not None else None, files_note),
            upload=_derived(inputs, bool(file_types) if file_types is not None else None, files_note),
            mime_types=_derived(
                inputs,
                None if accept_any or not file_types else file_types,
                "the default input modes",
            ),
        ),
        skills=skills,
        credentials=_credentials(doc),
        generative_ui=a2ui.from_extensions(doc.at("capabilities.extensions"), SOURCE),
        thread=THREAD,
        extensions=_extensions(doc),
        raw=card,
    )


def _derived(source: Fact[Any], value: Any, note: str) -> Fact[Any]:
    origin = source.origin
    if origin is None:
        return Fact()
    return Fact(value, (Provenance(origin.source, origin.path, origin.raw, Kind.DECLARED, note),))


def _modalities(provenance: tuple[Provenance, ...], file_types: tuple[str, ...] | None) -> Modalities:
    if file_types is None or not provenance:
        return Modalities()
    origin = provenance[0]

    def has(*prefixes: str) -> Fact[bool]:
        value = any(m.startswith(prefixes) or m in ("*/*", "*") for m in file_types)
        return Fact(value, (Provenance(origin.source, origin.path, origin.raw, Kind.DECLARED),))

    return Modalities(
        image=has("image/"),
        audio=has("audio/"),
        video=has("video/"),
        pdf=has("application/pdf"),
        file=Fact(bool(file_types), (Provenance(origin.source, origin.path, origin.raw, Kind.DECLARED),)),
    )


def input_modes(modes: Sequence[str]) -> tuple[str, ...]:
    """A card's input modes as media types, each once."""
    named = (MODE_NAMES.get(m.lower(), m) for m in modes)
    return tuple(dict.fromkeys(named))


def _strings(raw: Any, limit: int = 50) -> tuple[str, ...]:
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return ()
    return tuple(v[:500] for v in raw if isinstance(v, str))[:limit]


def _skill(raw: Any) -> SkillInfo | None:
    if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
        return None
    name = raw.get("name") if isinstance(raw.get("name"), str) else raw["id"]
    description = raw.get("description") if isinstance(raw.get("description"), str) else ""
    inputs, outputs = raw.get("inputModes"), raw.get("outputModes")
    return SkillInfo(
        id=raw["id"][:200],
        name=name[:200],
        description=description[:2000],
        tags=_strings(raw.get("tags")),
        examples=_strings(raw.get("examples"), MAX_EXAMPLES),
        input_modes=input_modes(_strings(inputs)) if isinstance(inputs, list) else None,
        output_modes=_strings(outputs) if isinstance(outputs, list) else None,
    )


_SCHEME_KINDS = {
    "apiKeySecurityScheme": "api-key",
    "httpAuthSecurityScheme": "http",
    "oauth2SecurityScheme": "oauth2",
    "openIdConnectSecurityScheme": "openid-connect",
    "mtlsSecurityScheme": "mutual-tls",
}


def _scheme(name: str, raw: Any) -> CredentialInfo | None:
    if not isinstance(raw, Mapping):
        return None
    for key, kind in _SCHEME_KINDS.items():
        body = raw.get(key)
        if not isinstance(body, Mapping):
            continue
        description = body.get("description") if isinstance(body.get("description"), str) else ""
        detail = ""
        if kind == "api-key":
            detail = f"{body.get('location', 'header')} {body.get('name', '')}".strip()
        elif kind == "http":
            detail = " ".join(str(body.get(k, "")) for k in ("scheme", "bearerFormat")).strip()
        return CredentialInfo(name=name[:200], kind=kind, description=description[:1000], detail=detail[:200])
    return None


def _credentials(doc: Document) -> Fact[tuple[CredentialInfo, ...]]:
    schemes = doc.mapping("securitySchemes")
    if schemes.value is None:
        return schemes  # type: ignore[return-value]
    found = tuple(
        info for info in (_scheme(name, body) for name, body in list(schemes.value.items())[:50]) if info
    )
    note = "what an admin must set for this agent's credential"
    origin = schemes.origin
    return Fact(found, (Provenance(origin.source, origin.path, origin.raw, Kind.DECLARED, note),))


def _extensions(doc: Document) -> tuple[Provenance, ...]:
    found: list[Provenance] = []
    extensions = doc.at("capabilities.extensions")
    if isinstance(extensions, list):
        for index, entry in enumerate(extensions):
            if isinstance(entry, Mapping):
                required = " (required)" if entry.get("required") is True else ""
                used = entry.get("uri") == a2ui.EXTENSION_URI
                found.append(
                    Provenance(
                        SOURCE,
                        f"capabilities.extensions[{index}]",
                        entry.get("uri"),
                        Kind.DECLARED,
                        f"A2UI's extension{required}: its surfaces are drawn here (generative UI)"
                        if used
                        else f"an extension{required}: shown; this product uses none of its own",
                    )
                )
    if doc.at("capabilities.extendedAgentCard") is True:
        found.append(
            doc.provenance(
                "capabilities.extendedAgentCard",
                note="an extended card for authenticated clients: asked with the endpoint's credential "
                "at discovery; when read, the plan is built from it",
            )
        )
    rest = {key: value for key, value in doc.raw.items() if key not in READ_FIELDS}
    found += kept(SOURCE, rest, lambda path: f"{path}: kept, not acted upon")
    return capped(SOURCE, found)

"""A plan summarised for the catalogue: each entry's badges, filters and status line (the entry is drawn
as a card on the catalogue page; an A2A Agent Card is the agent's own declaration, read in sdk/a2a)."""

from __future__ import annotations

from dataclasses import dataclass, field

from agents_ui.capabilities.values import SkillInfo
from agents_ui.decisions import Plan
from agents_ui.endpoints.discovery import Discovery
from agents_ui.endpoints.signatures import card_signature
from agents_ui.models import AgentEndpoint, CapabilitySnapshot

Status = CapabilitySnapshot.Status


@dataclass(frozen=True)
class Badge:
    label: str
    tone: str = "accent"  # accent | ok | warn | info | skills (a list of names, which may wrap)


@dataclass(frozen=True)
class StatusLine:
    # declared | declares-nothing | unknown-shape | none | invalid | unsupported | unreachable | newer-client
    key: str
    text: str


@dataclass
class CatalogueEntry:
    endpoint: AgentEndpoint
    discovery: Discovery
    plan: Plan
    badges: list[Badge] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    status: StatusLine | None = None


# Catalogue filters: key -> label. A card carries the keys whose controls its plan shows.
FILTERS: dict[str, str] = {
    "pdf": "Accepts PDFs",
    "uploads": "Takes files",
    "approvals": "Asks before acting",
    "subagents": "Has sub-agents",
    "reasoning": "Shows reasoning",
    "tools": "Uses tools",
    "state": "Shared state",
    "skills": "Has skills",
    "asks": "Asks the person",
}


def status_line(discovery: Discovery, plan: Plan | None = None) -> StatusLine:
    if discovery.status == Status.DECLARED and discovery.needs_newer_client:
        return StatusLine("newer-client", f"Needs a newer client (SDK {discovery.min_version} or later)")
    shape = plan.profile.shape if plan is not None and plan.profile is not None else None
    if discovery.status == Status.DECLARED and shape is not None and shape.unknown:
        return StatusLine("unknown-shape", "Declaration in an unknown shape")
    if discovery.status == Status.DECLARED and shape is not None and shape.declares_nothing:
        return StatusLine("declares-nothing", "Declares nothing")
    if discovery.status == Status.DECLARED:
        return StatusLine("declared", "Declared")
    if discovery.status == Status.NONE:
        return StatusLine("none", "No discovery: capabilities unknown")
    if discovery.status == Status.INVALID:
        return StatusLine("invalid", "Invalid declaration")
    if discovery.status == Status.UNSUPPORTED:
        return StatusLine("unsupported", "Interface not supported")
    if discovery.status == Status.UNTRUSTED:
        unsigned = (discovery.signature or {}).get("state") == "unsigned"
        return StatusLine(
            "untrusted",
            "Signature required: its card is unsigned"
            if unsigned
            else "Signature required: its card's signature does not verify",
        )
    if discovery.last_known_at:
        return StatusLine("unreachable", "Unreachable, last known from")
    return StatusLine("unreachable", "Unreachable")


def entry_for(endpoint: AgentEndpoint, discovery: Discovery, plan: Plan) -> CatalogueEntry:
    badges: list[Badge] = []
    filters: list[str] = []
    if plan["reasoning"].visible:
        encrypted = plan["reasoning"].details.get("encrypted")
        badges.append(Badge("Reasoning (encrypted)" if encrypted else "Reasoning"))
        filters.append("reasoning")
    if plan["subagents"].visible:
        count = len(plan["subagents"].details["subagents"])
        badges.append(Badge(f"{count} sub-agent{'s' if count != 1 else ''}"))
        filters.append("subagents")
    upload = plan["upload"]
    if upload.visible:
        accept = upload.details["accept"]
        kinds = _upload_kinds(accept)
        limit = upload.details.get("max_bytes_label")
        badges.append(Badge(f"Accepts {kinds}" + (f" up to {limit}" if limit else ""), "info"))
        filters.append("uploads")
        if upload.details["accept_any"] or "application/pdf" in accept:
            filters.append("pdf")
    if plan["approvals"].visible:
        badges.append(Badge("Asks before acting", "warn"))
        filters.append("approvals")
    if plan["tools"].visible:
        count = len(plan["tools"].details["tools"])
        badges.append(Badge(f"{count} tool{'s' if count != 1 else ''}"))
        filters.append("tools")
    if plan["state"].visible:
        badges.append(Badge("Shared state"))
        filters.append("state")
    # Before negotiation, what the agent offers (a workspace negotiates it when opened).
    output = plan["structured-output"]
    if output.visible or output.details.get("offered_module_types"):
        badges.append(Badge("Structured output"))
    grounding = plan["grounding"]
    if grounding.visible or grounding.details.get("offered"):
        badges.append(Badge("Cites sources"))
    if plan["feedback"].visible:
        badges.append(Badge("Feedback", "ok"))
    if plan["audio-recorder"].visible:
        badges.append(Badge("Takes voice notes", "info"))
    if plan["image-picker"].visible:
        badges.append(Badge("Takes images", "info"))
    if plan["code-execution"].visible:
        sandboxed = plan["code-execution"].details.get("sandbox") == "sandboxed"
        badges.append(
            Badge("Runs code in a sandbox" if sandboxed else "Runs code", "info" if sandboxed else "warn")
        )
    if plan["memory"].visible:
        badges.append(Badge("Remembers"))
    _skill_badges(plan, badges, filters)
    if (signature := card_signature(endpoint, discovery.signature)) is not None:
        badges.append(Badge(signature.label, signature.tone))
    return CatalogueEntry(endpoint, discovery, plan, badges, filters, status_line(discovery, plan))


def _skill_badges(plan: Plan, badges: list[Badge], filters: list[str]) -> None:
    """The skills an agent names, and whether its tasks may stop to ask the person (input-required)."""
    profile = plan.profile
    skills = profile.skills.value if profile is not None else None
    if skills:
        badges.append(Badge(skills_label(skills), "skills"))
        filters.append("skills")
    if profile is not None and profile.human_in_the_loop.mechanism.value == "input-required":
        badges.append(Badge("Asks the person", "warn"))
        filters.append("asks")


# A card names this many skills (each cut to a readable length), then says how many more there are.
SKILLS_NAMED = 3
SKILL_NAME_CHARS = 40


def skills_label(skills: tuple[SkillInfo, ...]) -> str:
    """ "3 skills: Document intake, Summaries, Translation", bounded; the template escapes it."""
    count = len(skills)
    names = []
    for skill in skills[:SKILLS_NAMED]:
        name = " ".join((skill.name or skill.id).split())
        names.append(name if len(name) <= SKILL_NAME_CHARS else name[: SKILL_NAME_CHARS - 1].rstrip() + "…")
    more = f" and {count - SKILLS_NAMED} more" if count > SKILLS_NAMED else ""
    return f"{count} skill{'s' if count != 1 else ''}: {', '.join(names)}{more}"


def _upload_kinds(accept: list[str]) -> str:
    if not accept:
        return "any file"
    names = []
    for mime in accept:
        if mime == "application/pdf":
            names.append("PDF")
        elif mime.endswith("/*"):
            names.append(mime.split("/")[0] + "s")
        else:
            names.append(mime.split("/")[-1].upper())
    return ", ".join(dict.fromkeys(names))

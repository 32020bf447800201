"""The conformance probe: a short scripted check of one agent, made of read-only steps only.

1. **discovery**: its declaration is read again (a GET of its discovery route);
2. **text**: a run with one fixed, harmless message that asks for nothing but a sentence back;
3. **upload**: where it declares files, the same kind of message with a tiny generated file of a
   type it declares (the file is part of the message, read as its text is; nothing is stored
   beyond the run), skipped with a reason where no declared type can be made here;
4. **cancel**: a run started and stopped at its first event.

Each run goes through the product's own run machinery (the address guard, the time and size
limits of every run), driven in this process so the probe can watch it: at the first request for
a person (an approval, an interrupt, a tool call, a generated interface, a task's question) the
probe stops the run and records "stopped at a request, by design". It has no code that approves,
answers, runs a tool or acts on an interface: nothing it sends can carry a decision. Its runs
belong to an account nobody signs in with, so they are in no person's conversations or inbox.
docs/security.md ("The conformance probe") says why each step is read-only.
"""

from __future__ import annotations

import asyncio
import logging
import struct
import zlib
from dataclasses import asdict, dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from agents_ui.decisions import Plan, UserAbilities
from agents_ui.endpoints import conformance
from agents_ui.endpoints import discovery as discovery_service
from agents_ui.endpoints.plans import plan_inputs
from agents_ui.models import AgentEndpoint, Attachment, CapabilityEvidence, Conversation, Message, Probe, Run
from agents_ui.runs.inputs import RunRequest
from agents_ui.runs.live import LiveRun, drive_here, stop_run
from agents_ui.sdk.transcript import Transcript

logger = logging.getLogger(__name__)

# The account the probe's conversations belong to: inactive, no password, in nobody's lists.
PROBE_USERNAME = "conformance-probe"
TEXT = (
    "This is an automatic conformance check of this agent by Agents UI. Reply with one short "
    "sentence. Do not call tools and do not take any action."
)
UPLOAD_TEXT = (
    "This is an automatic conformance check of this agent by Agents UI: a tiny generated test file "
    "is attached. Do not act on it; reply with one short sentence."
)
CANCEL_TEXT = (
    "This is an automatic conformance check of this agent by Agents UI: this run is stopped as soon "
    "as it begins. Do not take any action."
)
AT_REQUEST = "Stopped at a request, by design: the probe never approves, answers or acts."
CANCELLED = "Stopped by the conformance probe (its cancel step)."
# How many probes of each agent are kept, with their runs.
KEEP = 20
# Discoveries after which no run is tried: nothing answers, or the admin's rules refuse the agent.
UNUSABLE = ("unreachable", "untrusted", "unsupported")
# The longest one step of the probe may take, whatever the agent's own timeouts allow.
STEP_SECONDS = 30.0


@dataclass
class Step:
    step: str  # discovery | text | upload | cancel
    outcome: str  # passed | stopped | refused | failed | skipped
    sentence: str
    run: str | None = None


async def run_probe(endpoint: AgentEndpoint, user: Any = None) -> Probe:
    """Probe one agent now and record it (who asked: `user`, None for the schedule)."""
    probe = await Probe.objects.acreate(endpoint=endpoint, started_by=user if user and user.pk else None)
    steps: list[Step] = []
    try:
        found = await discovery_service.discover_one(endpoint, refresh=True)
        steps.append(_discovery_step(found))
        if found.status in UNUSABLE or found.needs_newer_client:
            why = found.in_words or "It refuses messages from this client."
            for name in ("text", "upload", "cancel"):
                steps.append(Step(name, "skipped", f"Not tried: {why[0].lower()}{why[1:]}"))
        else:
            plan = (await plan_inputs(endpoint, UserAbilities(), discovery=found)).plan()
            steps.append(await _text_step(endpoint, plan))
            steps.append(await _upload_step(endpoint, plan))
            steps.append(await _cancel_step(endpoint, plan))
    except Exception:
        logger.exception("the probe of %s stopped", endpoint.slug)
        steps.append(Step("probe", "failed", "The probe could not go on: something went wrong here."))
    finally:
        await sync_to_async(_finish)(probe, steps)
    return probe


def _finish(probe: Probe, steps: list[Step]) -> None:
    if not steps or all(step.outcome in ("failed", "skipped") for step in steps):
        outcome = Probe.Outcome.FAILED
    elif any(step.outcome in ("failed", "refused") for step in steps):
        outcome = Probe.Outcome.FINDINGS
    else:
        outcome = Probe.Outcome.PASSED
    probe.steps, probe.outcome, probe.finished_at = [asdict(step) for step in steps], outcome, timezone.now()
    probe.save(update_fields=["steps", "outcome", "finished_at"])
    _prune(probe.endpoint_id)
    conformance.refresh_drift(probe.endpoint_id)
    if outcome == Probe.Outcome.PASSED and conformance.report_of(probe.endpoint, recent=0).contradictions:
        Probe.objects.filter(pk=probe.pk).update(outcome=Probe.Outcome.FINDINGS)
        probe.outcome = Probe.Outcome.FINDINGS


def _prune(endpoint_id: int) -> None:
    """Only the newest `KEEP` probes of an agent are kept, with their conversations and runs (a
    probe every minute would otherwise pile up): older probes' evidence goes with their runs."""
    kept = Probe.objects.filter(endpoint_id=endpoint_id).order_by("-started_at", "-pk")
    oldest = kept.values_list("started_at", flat=True)[KEEP - 1 : KEEP].first()
    if oldest is None:
        return
    Probe.objects.filter(endpoint_id=endpoint_id, started_at__lt=oldest).delete()
    Conversation.objects.filter(
        endpoint_id=endpoint_id, user__username=PROBE_USERNAME, created_at__lt=oldest
    ).delete()


def _discovery_step(found: Any) -> Step:
    if found.status == "declared" and found.needs_newer_client:
        return Step("discovery", "failed", f"It needs a newer client (SDK {found.min_version} or later).")
    if found.status == "declared":
        return Step("discovery", "passed", f"Its declaration was read again from {found.source_url}.")
    if found.status == "none":
        return Step(
            "discovery", "passed", "It has no discovery route: nothing is declared, so nothing is checked."
        )
    detail = found.error or found.in_words or found.status
    return Step("discovery", "failed", f"Its declaration could not be read: {detail}")


async def _text_step(endpoint: AgentEndpoint, plan: Plan) -> Step:
    run = await sync_to_async(_new_run)(endpoint, "text run", TEXT)
    return await _watched("text", run, plan)


async def _upload_step(endpoint: AgentEndpoint, plan: Plan) -> Step:
    control = plan["upload"]
    if control.hidden:
        return Step("upload", "skipped", "Not tried: it declares no file upload.")
    file = sample_file(control.details.get("accept") or (), control.details.get("refuse") or ())
    if file is None:
        types = ", ".join(control.details.get("accept") or ())
        return Step("upload", "skipped", f"Not tried: none of the types it takes ({types}) can be made here.")
    run = await sync_to_async(_new_run)(endpoint, "upload", UPLOAD_TEXT, file)
    step = await _watched("upload", run, plan)
    refused = await CapabilityEvidence.objects.filter(
        run_id=run.pk, capability="uploads", outcome=CapabilityEvidence.Outcome.REFUSED
    ).afirst()
    if refused is not None:
        sent = f"a {file[1]} file of {len(file[2])} bytes"
        sentence = f"It refused {sent} although it declares uploads: {refused.detail}"
        return Step("upload", "refused", sentence, step.run)
    if step.outcome == "passed":
        step.sentence = f"It took a {file[1]} file of {len(file[2])} bytes. {step.sentence}"
    return step


async def _cancel_step(endpoint: AgentEndpoint, plan: Plan) -> Step:
    run = await sync_to_async(_new_run)(endpoint, "cancel", CANCEL_TEXT)
    step = await _watched("cancel", run, plan, cancel=True)
    status = await Run.objects.filter(pk=run.pk).values_list("status", flat=True).afirst()
    if step.outcome == "stopped":
        return step
    if status == Run.Status.CANCELLED:
        return Step(
            "cancel",
            "passed",
            "A run was started and stopped at its first event: it ended stopped.",
            step.run,
        )
    if status == Run.Status.COMPLETED:
        return Step("cancel", "passed", "The run finished before the stop reached it.", step.run)
    return Step("cancel", step.outcome, step.sentence, step.run)


async def _watched(name: str, run: Run, plan: Plan, *, cancel: bool = False) -> Step:
    """Drive one run, stopping it at the first request for a person (or, for `cancel`, at its
    first event); its outcome in a sentence."""
    live = drive_here(run, plan)
    changed = live.subscribe()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + STEP_SECONDS
    stopped, timed_out = "", False
    try:
        while not live.done:
            remaining = deadline - loop.time()
            if remaining <= 0:
                timed_out = True
                await stop_run(run.pk, "The conformance probe's time for this step ran out.")
                break
            try:
                await asyncio.wait_for(changed.wait(), timeout=remaining)
            except TimeoutError:
                continue
            changed.clear()
            stopped = request_in(live.transcript)
            # A run whose agent already ended it is left to end here (its last writes go on).
            going = live.transcript.outcome is None
            if stopped:
                if going:
                    await stop_run(run.pk, AT_REQUEST)
                break
            if cancel and going and live.transcript.event_count:
                await stop_run(run.pk, CANCELLED)
                break
    finally:
        live.unsubscribe(changed)
    await _ended(live)
    ended = await Run.objects.only("status", "error").aget(pk=run.pk)
    run_id = str(run.pk)
    if stopped:
        return Step(name, "stopped", f"{AT_REQUEST} It asked: {stopped}.", run_id)
    if timed_out:
        return Step(
            name, "failed", f"No answer within {STEP_SECONDS:.0f} seconds: the run was stopped.", run_id
        )
    if ended.status == Run.Status.FAILED:
        return Step(name, "failed", ended.error or "The run failed.", run_id)
    if ended.status == Run.Status.CANCELLED and not cancel:
        return Step(name, "failed", ended.error or "The agent cancelled the run.", run_id)
    answer = " ".join(message.text for message in live.transcript.messages if message.role == "assistant")
    answer = " ".join(answer.split())
    said = (
        f"It answered: “{answer[:160]}{'…' if len(answer) > 160 else ''}”"
        if answer
        else "It ended without text."
    )
    return Step(name, "passed", said, run_id)


async def _ended(live: LiveRun) -> None:
    if live.task is not None:
        try:
            await asyncio.wait_for(asyncio.shield(live.task), timeout=10)
        except (TimeoutError, asyncio.CancelledError):
            pass


def request_in(transcript: Transcript) -> str:
    """What the run asks a person for, in a few words ("" when nothing): where the probe stops."""
    if transcript.approvals:
        request = next(iter(transcript.approvals.values()))
        return f"a decision ({request.name or request.message or 'approval'})"
    if transcript.tool_calls:
        call = next(iter(transcript.tool_calls.values()))
        return f"a tool call ({call.name or 'tool'})"
    if transcript.observed.a2ui or transcript.activities:
        return "a generated interface"
    task = transcript.task
    if task is not None and task.state in ("input-required", "auth-required"):
        return f"its task is {task.state}"
    return ""


def probe_user() -> Any:
    """The probe's own account: it cannot sign in (inactive, no usable password)."""
    user, created = get_user_model().objects.get_or_create(
        username=PROBE_USERNAME, defaults={"is_active": False, "first_name": "Conformance probe"}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def _new_run(
    endpoint: AgentEndpoint, title: str, text: str, file: tuple[str, str, bytes] | None = None
) -> Run:
    """A conversation of the probe's own with one message, and its run, marked running so that a
    run worker never claims it: the probe drives it itself."""
    with transaction.atomic():
        conversation = Conversation.objects.create(
            user=probe_user(), endpoint=endpoint, title=f"Conformance probe: {title}"
        )
        message = Message.objects.create(conversation=conversation, role=Message.Role.USER, content=text)
        if file is not None:
            name, mime_type, data = file
            Attachment.objects.create(
                message=message, name=name, mime_type=mime_type, size=len(data), data=data
            )
        run = Run.objects.create(
            conversation=conversation,
            status=Run.Status.RUNNING,
            request=RunRequest(message_id=message.pk).as_json(),
        )
    conversation.endpoint = endpoint
    run.conversation = conversation
    return run


def _png() -> bytes:
    """A 1x1 white PNG."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\xff\xff")
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 72 72]>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n"
)
# What the probe can make, in the order it prefers: the plainest first.
SAMPLES: tuple[tuple[str, str, bytes], ...] = (
    ("conformance-probe.txt", "text/plain", b"Agents UI conformance probe: a test file. Nothing to do.\n"),
    ("conformance-probe.png", "image/png", _png()),
    ("conformance-probe.pdf", "application/pdf", _PDF),
)


def _matches(mime_type: str, pattern: str) -> bool:
    pattern = pattern.lower().strip()
    return (
        pattern in ("*", "*/*")
        or mime_type == pattern
        or (pattern.endswith("/*") and mime_type.startswith(pattern[:-1]))
    )


def sample_file(accept: Any, refuse: Any = ()) -> tuple[str, str, bytes] | None:
    """A tiny file of a type the agent takes (any type, when it names none), or None."""
    for sample in SAMPLES:
        mime_type = sample[1]
        if any(_matches(mime_type, pattern) for pattern in refuse):
            continue
        if not accept or any(_matches(mime_type, pattern) for pattern in accept):
            return sample
    return None

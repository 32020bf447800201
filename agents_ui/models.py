"""What the product stores: the agent endpoints admins register and what each one declared."""

from __future__ import annotations

import json
import uuid
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models.functions import Now
from django.urls import reverse
from django.utils import timezone

from agents_ui.conformance_records import PROBE_EVERY_HELP, CapabilityEvidence, Probe  # noqa: F401 (no cycle)


def validate_agent_url(value: str) -> None:
    """http or https only, with a host, and never credentials inside the URL."""
    parts = urlsplit(value)
    if parts.scheme not in {"http", "https"}:
        raise ValidationError(
            "Use an http:// or https:// address (got %(scheme)s).",
            code="scheme",
            params={"scheme": f"{parts.scheme}://" if parts.scheme else "no scheme"},
        )
    if parts.username or parts.password or "@" in parts.netloc:
        raise ValidationError(
            "Do not put credentials in the URL: use the credential field, which is never shown again.",
            code="credentials_in_url",
        )
    if not parts.hostname:
        raise ValidationError("The URL has no host name.", code="no_host")


class AgentEndpointQuerySet(models.QuerySet):
    def usable_by(self, user) -> AgentEndpointQuerySet:
        """Enabled endpoints this user may use: open to every signed-in user unless groups are set."""
        enabled = self.filter(enabled=True)
        if not user.is_authenticated:
            return enabled.none()
        if user.is_superuser:
            return enabled
        return enabled.filter(
            models.Q(allowed_groups__isnull=True) | models.Q(allowed_groups__in=user.groups.all())
        ).distinct()


class AgentEndpoint(models.Model):
    """An agent the product can talk to: where it is, which protocol it speaks, how to authenticate."""

    class Protocol(models.TextChoices):
        AGUI = "agui", "AG-UI"
        EXTERNAL = "external", "External agent policy"
        A2A = "a2a", "A2A (Agent2Agent)"

    class RemoteImages(models.TextChoices):
        PROXY = "proxy", "Proxy remote images"
        LINKS = "links", "Links only"

    class AuthKind(models.TextChoices):
        NONE = "none", "None"
        BEARER = "bearer", "Bearer token"
        HEADER = "header", "Custom header"

    class SignaturePolicy(models.TextChoices):
        OFF = "off", "Off: do not check signatures"
        VERIFY = "verify", "Verify if present: a signature that does not verify is a warning"
        REQUIRE = "require", "Require: unsigned or not verifying, the agent cannot be used"

    name = models.CharField("display name", max_length=120)
    slug = models.SlugField(
        unique=True, max_length=80, help_text="Used in the workspace address /agents/<slug>/."
    )
    description = models.TextField(
        blank=True, help_text="Shown when the agent declares no description itself."
    )
    protocol = models.CharField(max_length=16, choices=Protocol.choices, default=Protocol.AGUI)
    base_url = models.URLField(
        "base URL",
        max_length=500,
        validators=[validate_agent_url],
        help_text=(
            "AG-UI: the URL runs are POSTed to. External agents: the base of /policy, /prepare ... "
            "A2A: the base its Agent Card is read from ({base URL}/.well-known/agent-card.json)."
        ),
    )
    discovery_url = models.URLField(
        "discovery URL override",
        max_length=500,
        blank=True,
        validators=[validate_agent_url],
        help_text=(
            "Leave empty to use {base URL}/capabilities (AG-UI), {base URL}/policy (external) or "
            "{base URL}/.well-known/agent-card.json (A2A)."
        ),
    )
    auth_kind = models.CharField(
        "credentials", max_length=16, choices=AuthKind.choices, default=AuthKind.NONE
    )
    auth_header_name = models.CharField(
        "header name", max_length=100, blank=True, help_text="For a custom header, e.g. X-Api-Key."
    )
    # Stored server-side only: never rendered into a page, a log line or an error message.
    credential = models.TextField(blank=True)
    connect_timeout = models.FloatField("connect timeout (s)", default=5.0)
    read_timeout = models.FloatField("read timeout (s)", default=60.0)
    remote_images = models.CharField(
        "remote images",
        max_length=8,
        choices=RemoteImages.choices,
        default=RemoteImages.PROXY,
        help_text="Images the agent names by URL: fetched by this server and shown from it (bounded, "
        "raster images only), or shown as links the person may open.",
    )
    # A2A Agent Card signatures: checked against these keys only, never keys the card names.
    signature_policy = models.CharField(
        "card signatures",
        max_length=8,
        choices=SignaturePolicy.choices,
        default=SignaturePolicy.VERIFY,
        help_text="A2A: whether its Agent Card must be signed by one of the keys below.",
    )
    signing_keys = models.JSONField(
        "signing keys (JWKS)",
        null=True,
        blank=True,
        help_text='The public keys that may sign its card, as a JWKS: {"keys": [{"kid": ..., "kty": ...}]}.',
    )
    signing_keys_url = models.URLField(
        "signing keys URL",
        max_length=500,
        blank=True,
        validators=[validate_agent_url],
        help_text="A JWKS URL, fetched by this server (through its address guard, no credential sent) "
        "at each discovery. A signature's “jku” is honoured only when it is this very URL.",
    )
    signer_name = models.CharField(
        "signer", max_length=120, blank=True, help_text="Who holds those keys, as people should read it."
    )
    enabled = models.BooleanField(default=True)
    is_demo = models.BooleanField("demo agent", default=False, editable=False)
    allowed_groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="agent_endpoints",
        help_text="Who may use this agent. Empty: every signed-in user.",
    )
    # {control name: "hide" | "allow"}: force a control hidden, or allow it where nothing is declared.
    overrides = models.JSONField(default=dict, blank=True)
    # What runs have shown this agent doing, whatever it declares: {"reasoning": true, ...}.
    observed = models.JSONField(default=dict, blank=True, editable=False)
    # The read-only probe's schedule (0: never), and the drift alarm (agents_ui.endpoints.conformance).
    probe_every = models.PositiveIntegerField("probe every (minutes)", default=0, help_text=PROBE_EVERY_HELP)
    drift = models.JSONField(default=list, blank=True, editable=False)
    drift_since = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    objects = AgentEndpointQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        verbose_name = "agent endpoint"
        # What a user may do with the agents they can use; the workspace disables a control without it.
        permissions = [
            ("upload_files", "Can upload files to agents"),
            ("approve_actions", "Can approve or reject agent actions"),
            ("view_reasoning", "Can see agent reasoning"),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("workspace", kwargs={"slug": self.slug})

    def clean(self) -> None:
        errors = {}
        if self.auth_kind == self.AuthKind.HEADER and not self.auth_header_name:
            errors["auth_header_name"] = "Name the header the credential is sent in."
        if self.auth_header_name and not self.auth_header_name.replace("-", "").isalnum():
            errors["auth_header_name"] = "A header name has only letters, digits and dashes."
        if self.connect_timeout is not None and self.connect_timeout <= 0:
            errors["connect_timeout"] = "The timeout must be more than 0 seconds."
        if self.read_timeout is not None and self.read_timeout <= 0:
            errors["read_timeout"] = "The timeout must be more than 0 seconds."
        if errors:
            raise ValidationError(errors)

    @property
    def host(self) -> str:
        return urlsplit(self.base_url).netloc

    @property
    def has_credential(self) -> bool:
        return bool(self.credential)

    def scrub(self, text: str) -> str:
        """Text from an agent with any echo of the credential blanked out, before it is kept or shown."""
        if self.credential and text and self.credential in text:
            return text.replace(self.credential, "[credential]")
        return text

    def scrub_payload(self, payload: Any) -> Any:
        """A declaration with any echoed credential blanked out."""
        if payload is None or not self.credential:
            return payload
        text = json.dumps(payload)
        escaped = json.dumps(self.credential)[1:-1]
        return json.loads(text.replace(escaped, "[credential]")) if escaped in text else payload

    def auth_headers(self) -> dict[str, str]:
        """The headers that carry the credential to the agent (server-side only)."""
        if not self.credential or self.auth_kind == self.AuthKind.NONE:
            return {}
        if self.auth_kind == self.AuthKind.BEARER:
            return {"Authorization": f"Bearer {self.credential}"}
        return {self.auth_header_name: self.credential}


class CapabilitySnapshot(models.Model):
    """One distinct answer of an endpoint's discovery route, kept so admins can see the history."""

    class Status(models.TextChoices):
        DECLARED = "declared", "Declared"
        NONE = "none", "No discovery"
        INVALID = "invalid", "Invalid declaration"
        UNREACHABLE = "unreachable", "Unreachable"
        # A valid A2A Agent Card offering no interface the client speaks (gRPC only, say).
        UNSUPPORTED = "unsupported", "Interface not supported"
        # An A2A card an admin requires signed, unsigned or not verifying: the agent cannot be used.
        UNTRUSTED = "untrusted", "Signature required"

    endpoint = models.ForeignKey(AgentEndpoint, on_delete=models.CASCADE, related_name="snapshots")
    status = models.CharField(max_length=16, choices=Status.choices)
    content_hash = models.CharField(max_length=64, db_index=True)
    source = models.CharField(max_length=500, help_text="The URL the declaration was read from.")
    payload = models.JSONField(null=True, blank=True, help_text="The declaration as received.")
    error = models.TextField(blank=True, help_text="Why it is invalid or unreachable.")
    # A2A: what checking the card's signatures found (agents_ui.sdk.a2a.signing.SignatureCheck).
    signature = models.JSONField(null=True, blank=True)
    # A2A: the extended card asked with the credential: {"payload", "signature", "error"}.
    extended = models.JSONField(null=True, blank=True)
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["-last_seen_at"]
        get_latest_by = "last_seen_at"

    def __str__(self) -> str:
        return f"{self.endpoint} {self.get_status_display()} {self.content_hash[:8]}"


class Conversation(models.Model):
    """A user's thread with one agent. The AG-UI threadId is our id; external agents have their own."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations")
    endpoint = models.ForeignKey(AgentEndpoint, on_delete=models.CASCADE, related_name="conversations")
    title = models.CharField(max_length=200, blank=True)
    remote_id = models.CharField(
        max_length=200, blank=True, help_text="The external agent's conversation id, once created."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at"]
        indexes = [models.Index(fields=["user", "endpoint", "-updated_at"], name="conversation_recent")]

    def __str__(self) -> str:
        return self.title or f"Conversation {str(self.id)[:8]}"

    def get_absolute_url(self) -> str:
        return reverse("conversation", kwargs={"slug": self.endpoint.slug, "conversation_id": self.id})

    @property
    def thread_id(self) -> str:
        return str(self.id)


class Run(models.Model):
    """One call of the agent: the user's message (or a resume) in, a stream of events out."""

    class Status(models.TextChoices):
        PENDING = "pending", "Waiting to start"
        RUNNING = "running", "Running"
        INTERRUPTED = "interrupted", "Waiting for approval"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Stopped"
        # An A2A task waiting for credentials: the next message continues it.
        AUTH_REQUIRED = "auth-required", "Needs authorization"

    FINISHED = (Status.INTERRUPTED, Status.COMPLETED, Status.FAILED, Status.CANCELLED, Status.AUTH_REQUIRED)

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="runs")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # What was asked: {"kind": "message"|"resume", "message_id", "subagent", "resume": [...], ...}.
    request = models.JSONField(default=dict)
    error = models.TextField(blank=True)
    event_count = models.PositiveIntegerField(default=0)
    # The agent's state document when the run ended (AG-UI sends it back on the next run).
    state = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # When the agent's first event arrived: the time to its first word is this less started_at.
    first_event_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The tokens the agent said the run took, per kind ({"input_tokens": 120, ...}): token_counts.
    usage = models.JSONField(null=True, blank=True)
    # What the AG-UI consumer rules stripped or translated in the agent's stream (sentences for staff,
    # docs/PROTOCOLS.md 1.7), and the rule it broke when one ended the run: {"rule", "spec", "event"}.
    protocol_warnings = models.JSONField(default=list, blank=True)
    violation = models.JSONField(null=True, blank=True)
    # Set when the person regenerated this answer, retried it, or edited a message before it: the
    # run is no longer part of the thread (not shown, not sent back to the agent).
    superseded_at = models.DateTimeField(null=True, blank=True)
    # The composer's token for the message this run answers: a second submit of it gets this run.
    client_token = models.CharField(max_length=64, blank=True, default="", editable=False)
    # The run's OpenTelemetry trace (32 hex digits), when tracing was on: shown to staff.
    trace_id = models.CharField(max_length=32, blank=True, default="", editable=False)
    # With separate run workers (AGENTS_UI_RUN_WORKERS=separate, agents_ui.runs.queue): how many
    # times a worker claimed the run, the worker that holds it now ("" while queued, or once its lease
    # was taken away) and when that worker last said it still drives it. Every write a worker makes
    # about the run checks (attempt, worker): a worker that lost the run can no longer write to it.
    attempt = models.PositiveIntegerField(default=0, editable=False)
    worker = models.CharField(max_length=200, blank=True, default="", editable=False)
    heartbeat_at = models.DateTimeField(null=True, blank=True, editable=False)

    class Meta:
        ordering = ["created_at"]
        get_latest_by = "created_at"
        constraints = [
            models.UniqueConstraint(
                fields=["client_token"], condition=~models.Q(client_token=""), name="run_client_token_once"
            )
        ]
        indexes = [
            # The queue: pending runs no worker holds, oldest first.
            models.Index(
                fields=["created_at"], condition=models.Q(status="pending", worker=""), name="run_queued"
            ),
            # The sweeper: the runs some worker holds.
            models.Index(
                fields=["worker", "heartbeat_at"], condition=~models.Q(worker=""), name="run_leased"
            ),
        ]

    def __str__(self) -> str:
        return f"Run {str(self.id)[:8]} ({self.get_status_display()})"

    @property
    def violation_detail(self) -> str:
        """The broken rule and the event that broke it, as staff read them (empty when none)."""
        found = self.violation if isinstance(self.violation, dict) else None
        if not found:
            return ""
        rule = f"AG-UI 1.1, {found.get('spec', '')}: {found.get('rule', '')}"
        return f"{rule}\n\nThe event:\n{found.get('event', '')}"

    @property
    def is_finished(self) -> bool:
        return self.status in self.FINISHED


class RunEvent(models.Model):
    """The event log of a run, in the order received: what the agent said, as it said it."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="events")
    seq = models.PositiveIntegerField()
    type = models.CharField(max_length=64)
    payload = models.JSONField()
    # Filled by the database: the event log is written with plain INSERTs, a batch at a time.
    received_at = models.DateTimeField(db_default=Now(), null=True)

    class Meta:
        ordering = ["run", "seq"]
        constraints = [models.UniqueConstraint(fields=["run", "seq"], name="run_event_seq_unique")]

    def __str__(self) -> str:
        return f"{self.seq} {self.type}"


class Message(models.Model):
    """A message of a conversation. The user's is saved before the agent is called."""

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        # Sealed reasoning the agent asked to get back on the next turn; never shown.
        REASONING = "reasoning", "Reasoning"

    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    run = models.ForeignKey(Run, on_delete=models.SET_NULL, null=True, blank=True, related_name="messages")
    role = models.CharField(max_length=16, choices=Role.choices)
    remote_id = models.CharField(max_length=200, blank=True)
    content = models.TextField(blank=True)
    subagent = models.CharField(max_length=200, blank=True)
    # An opaque blob (AG-UI encryptedValue) kept to send back to the agent, never rendered.
    encrypted_value = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set when the person edited this message or one before it, or had its answer made again: the
    # thread goes on without it, and the agent no longer gets it in the history.
    superseded_at = models.DateTimeField(null=True, blank=True)
    # A message the person edited and sent again points to the one it replaces.
    edited_from = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="edits"
    )

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:40]}"


class Attachment(models.Model):
    """A file the user sent with a message, checked against the agent's policy before it left."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="attachments")
    name = models.CharField(max_length=255)
    mime_type = models.CharField(max_length=120)
    size = models.PositiveBigIntegerField()
    data = models.BinaryField()
    remote_id = models.CharField(max_length=200, blank=True)

    def __str__(self) -> str:
        return self.name


class ApprovalRecord(models.Model):
    """A decision on an agent's request to act: who, when, what, and any edited arguments."""

    class Decision(models.TextChoices):
        APPROVED = "approved", "Approved"
        APPROVED_WITH_EDITS = "approved_with_edits", "Approved with edits"
        REJECTED = "rejected", "Rejected"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="approvals")
    request_id = models.CharField(max_length=200, help_text="The interrupt id or approval id.")
    tool_name = models.CharField(max_length=200, blank=True)
    arguments = models.JSONField(default=dict, blank=True)
    decision = models.CharField(max_length=24, choices=Decision.choices)
    edited_arguments = models.JSONField(null=True, blank=True)
    reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True)
    decided_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["run", "request_id"], name="one_decision_per_request")]

    def __str__(self) -> str:
        return f"{self.get_decision_display()} {self.tool_name}"


class WaitingItemQuerySet(models.QuerySet):
    def open_for(self, user, now=None) -> WaitingItemQuerySet:
        """What waits on this person now: not closed, not decided (the decision record says so),
        not expired, of an agent they may still use. Snoozed items are in it (`awake` leaves them out)."""
        now = now or timezone.now()
        decided = ApprovalRecord.objects.filter(
            run=models.OuterRef("run_id"), request_id=models.OuterRef("request_id")
        )
        return (
            self.filter(user=user, closed_at__isnull=True)
            .filter(models.Q(expires_at__isnull=True) | models.Q(expires_at__gt=now))
            # A run that failed or was stopped after it asked (a restart, a stop) waits for nothing.
            .exclude(run__status__in=(Run.Status.FAILED, Run.Status.CANCELLED))
            .filter(endpoint__in=AgentEndpoint.objects.usable_by(user).values("pk"))
            .exclude(models.Exists(decided))
        )

    def awake(self, now=None) -> WaitingItemQuerySet:
        now = now or timezone.now()
        return self.filter(models.Q(snoozed_until__isnull=True) | models.Q(snoozed_until__lte=now))


class WaitingItem(models.Model):
    """Something a run left waiting on its person (an approval, an answer to a tool call, a task's
    question or its need for authorization): the inbox reads these rows, never the runs' events.

    Kept by the run's lifecycle (agents_ui/runs/waiting.py): written when the run ends waiting (or
    while it streams, for a request its stream holds for), closed once the thread goes on or the
    run no longer waits. Whether it was decided is the ApprovalRecord's to say, never this row's.
    """

    class Kind(models.TextChoices):
        APPROVAL = "approval", "Asks for approval"
        ANSWER = "answer", "Waits for an answer"
        INPUT = "input", "Asks a question"
        AUTH = "auth", "Needs authorization"

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="waiting_items")
    # The conversation's person and agent, kept here so the inbox is one indexed query.
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="waiting_items")
    endpoint = models.ForeignKey(AgentEndpoint, on_delete=models.CASCADE, related_name="waiting_items")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    # The approval request's id, the tool call's id, or the task's id.
    request_id = models.CharField(max_length=200)
    # What is asked, in a line: the tool's name, the question.
    title = models.CharField(max_length=200, blank=True)
    detail = models.TextField(blank=True)
    asked_at = models.DateTimeField()
    expires_at = models.DateTimeField(null=True, blank=True)
    # "Not now": left out of the count and the list until then; nothing is decided.
    snoozed_until = models.DateTimeField(null=True, blank=True)
    closed_at = models.DateTimeField(null=True, blank=True)

    objects = WaitingItemQuerySet.as_manager()

    class Meta:
        ordering = ["asked_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "kind", "request_id"], name="one_waiting_item_per_request")
        ]
        indexes = [
            models.Index(
                fields=["user", "asked_at"],
                condition=models.Q(closed_at__isnull=True),
                name="waiting_item_open",
            )
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()}: {self.title}"


class Feedback(models.Model):
    """A thumbs up or down on an agent's answer (sent to the agent too where it takes interactions)."""

    class Value(models.TextChoices):
        UP = "up", "Helpful"
        DOWN = "down", "Not helpful"

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    value = models.CharField(max_length=8, choices=Value.choices)
    sent_to_agent = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["message", "user"], name="one_feedback_per_user")]

    def __str__(self) -> str:
        return f"{self.value} on {self.message_id}"


class SharedLinkQuerySet(models.QuerySet):
    def open_to(self, user) -> SharedLinkQuerySet:
        """Links this user is in the audience of (revoked ones too: they say so). Never anonymous."""
        if not user.is_authenticated:
            return self.none()
        return self.filter(
            models.Q(audience=SharedLink.Audience.SIGNED_IN)
            | models.Q(people=user)
            | models.Q(conversation__user=user)
        ).distinct()


class SharedLink(models.Model):
    """A read-only link to a conversation as it was when the link was made: later turns stay out.

    ``covered`` names the thread's runs at that moment, each with the last event it had stored and
    its status then, so the shared page folds exactly that (agents_ui/runs/snapshots.py).
    """

    class Audience(models.TextChoices):
        SIGNED_IN = "signed-in", "Everyone signed in here"
        PEOPLE = "people", "Only the people I name"

    token = models.CharField(max_length=64, unique=True, editable=False)
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="shares")
    audience = models.CharField(max_length=16, choices=Audience.choices, default=Audience.SIGNED_IN)
    people = models.ManyToManyField(settings.AUTH_USER_MODEL, blank=True, related_name="shared_with")
    title = models.CharField(max_length=200, help_text="The conversation's name when it was shared.")
    covered = models.JSONField(default=list, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = SharedLinkQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "shared link"

    def __str__(self) -> str:
        return f"{self.title} ({self.get_audience_display()})"

    def get_absolute_url(self) -> str:
        return reverse("shared", kwargs={"token": self.token})

    @property
    def revoked(self) -> bool:
        return self.revoked_at is not None

"""What the product stores: the agent endpoints admins register and what each one declared."""

from __future__ import annotations

from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import models
from django.urls import reverse


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

    class AuthKind(models.TextChoices):
        NONE = "none", "None"
        BEARER = "bearer", "Bearer token"
        HEADER = "header", "Custom header"

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
        help_text="AG-UI: the URL runs are POSTed to. External agents: the base of /policy, /prepare ...",
    )
    discovery_url = models.URLField(
        "discovery URL override",
        max_length=500,
        blank=True,
        validators=[validate_agent_url],
        help_text="Leave empty to use {base URL}/capabilities (AG-UI) or {base URL}/policy (external).",
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

    endpoint = models.ForeignKey(AgentEndpoint, on_delete=models.CASCADE, related_name="snapshots")
    status = models.CharField(max_length=16, choices=Status.choices)
    content_hash = models.CharField(max_length=64, db_index=True)
    source = models.CharField(max_length=500, help_text="The URL the declaration was read from.")
    payload = models.JSONField(null=True, blank=True, help_text="The declaration as received.")
    error = models.TextField(blank=True, help_text="Why it is invalid or unreachable.")
    first_seen_at = models.DateTimeField(auto_now_add=True)
    last_seen_at = models.DateTimeField()

    class Meta:
        ordering = ["-last_seen_at"]
        get_latest_by = "last_seen_at"

    def __str__(self) -> str:
        return f"{self.endpoint} {self.get_status_display()} {self.content_hash[:8]}"

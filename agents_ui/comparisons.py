"""The records of comparisons (views/compare.py): kept beside models.py, which holds the rest, and
registered with the app when it is ready (apps.py)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse

from agents_ui.models import AgentEndpoint, Conversation


class CompareSession(models.Model):
    """One message sent to 2 to 4 agents at once. Each agent answers in a conversation of its own
    (a `ComparePane`), with ordinary runs: the comparison is a view over them, never a run of its own."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="comparisons")
    content = models.TextField(help_text="The message every chosen agent was sent.")
    # The form's token: the same form submitted twice makes one comparison.
    client_token = models.CharField(max_length=64, blank=True, default="", editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "comparison"
        constraints = [
            models.UniqueConstraint(
                fields=["user", "client_token"],
                condition=~models.Q(client_token=""),
                name="one_comparison_per_token",
            )
        ]

    def __str__(self) -> str:
        return " ".join(self.content.split())[:80] or "Files"

    def get_absolute_url(self) -> str:
        return reverse("compare-session", kwargs={"compare_id": self.pk})


class ComparePane(models.Model):
    """One agent's side of a comparison: its conversation, kept out of the person's conversation
    lists until "Continue with this one" makes it an ordinary conversation."""

    session = models.ForeignKey(CompareSession, on_delete=models.CASCADE, related_name="panes")
    position = models.PositiveSmallIntegerField()
    conversation = models.OneToOneField(Conversation, on_delete=models.CASCADE, related_name="compare_pane")
    continued_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["position"]
        constraints = [models.UniqueConstraint(fields=["session", "position"], name="one_pane_per_position")]

    def __str__(self) -> str:
        return f"{self.session_id} #{self.position}"


class CompareRating(models.Model):
    """ "This one is better": the person's choice of one agent of a comparison over the others."""

    session = models.OneToOneField(CompareSession, on_delete=models.CASCADE, related_name="rating")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="compare_ratings"
    )
    winner = models.ForeignKey(AgentEndpoint, on_delete=models.CASCADE, related_name="compare_wins")
    others = models.ManyToManyField(AgentEndpoint, related_name="compare_losses")
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "comparison rating"

    def __str__(self) -> str:
        return f"{self.winner} preferred"

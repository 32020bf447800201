"""People's "this one is better" ratings from Compare, read-only, and above their list, per pair of
agents compared together, how often each was preferred (of the ratings the list's filters select)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

from agents_ui.comparisons import CompareRating
from agents_ui.models import AgentEndpoint


@dataclass(frozen=True)
class PairRow:
    first: AgentEndpoint
    second: AgentEndpoint
    first_wins: int
    second_wins: int

    @property
    def total(self) -> int:
        return self.first_wins + self.second_wins

    @property
    def first_share(self) -> int:
        return round(100 * self.first_wins / self.total) if self.total else 0

    @property
    def second_share(self) -> int:
        return 100 - self.first_share if self.total else 0


def preference_pairs(ratings: Iterable[tuple[AgentEndpoint, Iterable[AgentEndpoint]]]) -> list[PairRow]:
    """Each rating counts once for every pair it decides: the winner over each of the others."""
    wins: dict[tuple[int, int], int] = {}
    agents: dict[int, AgentEndpoint] = {}
    for winner, others in ratings:
        agents[winner.pk] = winner
        for other in others:
            agents[other.pk] = other
            wins[(winner.pk, other.pk)] = wins.get((winner.pk, other.pk), 0) + 1
    pairs = {tuple(sorted(pair, key=lambda pk: agents[pk].name)) for pair in wins}
    rows = [PairRow(agents[a], agents[b], wins.get((a, b), 0), wins.get((b, a), 0)) for a, b in pairs]
    return sorted(rows, key=lambda row: (-row.total, row.first.name, row.second.name))


@admin.register(CompareRating)
class CompareRatingAdmin(admin.ModelAdmin):
    list_display = ["created_at", "person", "winner", "over", "message"]
    list_filter = ["winner", "created_at"]
    search_fields = ["user__username", "session__content", "winner__name"]
    list_select_related = ["user", "winner", "session"]
    fields = ["created_at", "person", "winner", "over", "message"]
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: CompareRating | None = None) -> bool:
        return False

    def get_queryset(self, request: HttpRequest) -> Any:
        return super().get_queryset(request).prefetch_related("others")

    @admin.display(description="person", ordering="user__username")
    def person(self, obj: CompareRating) -> str:
        return obj.user.get_username()

    @admin.display(description="preferred over")
    def over(self, obj: CompareRating) -> str:
        return ", ".join(sorted(other.name for other in obj.others.all()))

    @admin.display(description="message")
    def message(self, obj: CompareRating) -> str:
        return str(obj.session)

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        response = super().changelist_view(request, extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            ratings = changelist.queryset.select_related("winner").prefetch_related("others")
            response.context_data["pairs"] = preference_pairs(
                (rating.winner, rating.others.all()) for rating in ratings
            )
        return response

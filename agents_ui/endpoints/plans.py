"""A plan of controls, one way: gather its inputs (`plan_inputs`), then decide it (`PlanInputs.plan`).

The decisions themselves are made in agents_ui.decisions; this module only gathers their inputs
from the database, the discovery service and the agent's prepare() answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async

from agents_ui.capabilities import read_card
from agents_ui.decisions import Observations, Plan, UserAbilities, decide
from agents_ui.endpoints.discovery import Discovery, discover_one
from agents_ui.endpoints.memo import Memo
from agents_ui.endpoints.negotiation import prepared_for
from agents_ui.models import AgentEndpoint
from agents_ui.sdk import PrepareResult
from agents_ui.sdk.transcript import Observed


async def user_abilities(user: Any) -> UserAbilities:
    # One trip to a thread for both of its queries (the async form takes one for each).
    return await sync_to_async(abilities_of)(user)


def abilities_of(user: Any) -> UserAbilities:
    """user_abilities, for a caller already on a thread of its own."""
    return UserAbilities.from_permissions(user.get_all_permissions())


@dataclass(frozen=True)
class PlanInputs:
    """What a plan is decided from, once fetched: the endpoint, its discovery, the user's abilities
    and, for an external agent whose workspace negotiates, its prepare() answer."""

    endpoint: AgentEndpoint
    discovery: Discovery
    user: UserAbilities
    prepared: PrepareResult | None = None
    # Why there is no prepare() answer when one was asked for ("" when there is one).
    prepare_error: str = ""

    def plan(self, shown: Observed | None = None) -> Plan:
        """The plan; `shown` is what the run on the page showed so far, added to what earlier runs
        of the agent showed. An external agent's prepare() answer supersedes its discovered policy."""
        observed = observations_of(self.endpoint, shown)
        endpoint, discovery, prepared = self.endpoint, self.discovery, self.prepared
        # decide() is pure: a plan is reused while its inputs are the same (a warm catalogue).
        key = None
        if prepared is None and discovery.digest:
            key = (
                discovery.digest,
                discovery.status,
                discovery.protocol,
                json.dumps(endpoint.overrides or {}, sort_keys=True),
                self.user,
                observed,
                endpoint.name,
                endpoint.description,
            )
            plan = _PLANS.get(key)
            if plan is not None:
                return plan
        if discovery.protocol == AgentEndpoint.Protocol.A2A:
            plan = decide(
                profile=read_card(discovery.card, discovery.declaration),
                overrides=endpoint.overrides or {},
                user=self.user,
                observed=observed,
                fallback_identity={"name": endpoint.name, "description": endpoint.description},
            )
            return _PLANS.put(key, plan) if key is not None else plan
        plan = decide(
            capabilities=discovery.capabilities,
            policy=prepared.policy if prepared else discovery.policy,
            negotiated=prepared.negotiated if prepared else None,
            overrides=endpoint.overrides or {},
            user=self.user,
            observed=observed,
            fallback_identity={"name": endpoint.name, "description": endpoint.description},
        )
        return _PLANS.put(key, plan) if key is not None else plan


_PLANS = Memo("plans", size=4096)


async def plan_inputs(
    endpoint: AgentEndpoint,
    user: UserAbilities,
    *,
    discovery: Discovery | None = None,
    negotiate: bool = True,
    profile: str | None = None,
) -> PlanInputs:
    """The inputs of this user's plan for an endpoint.

    `discovery`: when the caller discovered many endpoints at once (the catalogue). `negotiate`: an
    external agent is asked what it grants (prepare(), cached), as the workspace, the message that
    starts a run and the stream that shows it all must see; the catalogue shows what it offers.
    `profile`: the stream profile asked for, when the person chose one.
    """
    if discovery is None:
        discovery = await discover_one(endpoint)
    prepared, problem = (None, "")
    if negotiate:
        prepared, problem = await prepared_for(endpoint, discovery, profile)
    return PlanInputs(endpoint, discovery, user, prepared, problem)


def observations_of(endpoint: AgentEndpoint, shown: Observed | None = None) -> Observations:
    """What runs of this agent showed (kept on the endpoint), and what the run on the page shows."""
    stored = Observations.from_json(endpoint.observed)
    return stored if shown is None else stored | Observations.of(shown)


def remembered(
    observed: dict[str, Any] | None, shown: Observed, subagents: list[str]
) -> dict[str, Any] | None:
    """What an endpoint keeps after a run showed ``shown`` (and these sub-agents): None if nothing new."""
    before = dict(observed or {})
    after = {**before, **(Observations.from_json(before) | Observations.of(shown, subagents)).to_json()}
    return after if after != before else None

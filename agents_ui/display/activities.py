"""AG-UI activities in the conversation: one block each, at its place among messages and tool
calls, drawn by the renderer of its type; a type without one is a readable card (its type and its
content as a folding tree), never dropped.

A2UI surfaces (`a2ui-surface`, sdk/a2ui/) are drawn as Django templates (templates/agents_ui/a2ui/):
each surface is one form; a button that sends an event posts it, and the action goes to the agent as
AG-UI's A2UI middleware expects it (`forwardedProps.a2uiAction.userAction`) in a new run
(views/a2ui_actions.py).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from agents_ui.display.cards import ActivityCard
from agents_ui.display.state_tree import state_tree
from agents_ui.sdk import a2ui
from agents_ui.sdk.transcript import ActivityRecord

CONTROL = "generative-ui"
# What a run's request holds when it takes a person's action on a surface to the agent.
ACTION_KEY = "a2ui_action"


def dom_of(run_id: Any, message_id: str) -> str:
    """An activity's block id, scoped by run (AG-UI ids are not unique across a thread's runs)."""
    digest = hashlib.blake2s(f"{run_id}:{message_id}".encode(), digest_size=6).hexdigest()
    return f"act-{digest}"


def activity_view(rv: Any, record: ActivityRecord) -> ActivityCard:
    """What the activity templates read for one activity of a run."""
    kind, dom = record.activity_type[:80], dom_of(rv.run.pk, record.message_id)
    renderer = RENDERERS.get(record.activity_type)
    note = ""
    if renderer is not None:
        note = refused_by_plan(rv.plan)
        if not note:
            return ActivityCard(id=record.message_id, type=kind, dom=dom, **renderer(rv, record, dom))
    return ActivityCard(
        id=record.message_id,
        type=kind,
        dom=dom,
        template="agents_ui/activities/card.html",
        note=note,
        tree=state_tree(record.content),
    )


def refused_by_plan(plan: Any) -> str:
    """Why this agent's surfaces are shown as their content only: the admin turned the renderer
    off (evidence from runs shows it otherwise, whatever was declared)."""
    try:
        control = plan[CONTROL]
    except KeyError:
        return ""
    if control.hidden and any(reason.source == "override" for reason in control.reasons):
        return "The admin turned generative UI off for this agent: its interface is shown as its content."
    return ""


def signature(record: ActivityRecord) -> Any:
    """What changes when the activity's block must be drawn again."""
    return (record.activity_type, record.revision)


# --- A2UI ------------------------------------------------------------------------------------------


def _a2ui_contents(records: Iterable[ActivityRecord], before: int | None = None) -> list[Any]:
    chosen = [
        r
        for r in records
        if r.activity_type == a2ui.ACTIVITY_TYPE and (before is None or r.position < before)
    ]
    return [r.content for r in sorted(chosen, key=lambda r: r.position)]


def prior_surfaces(
    transcripts: Iterable[Any], start: Mapping[str, a2ui.Surface] | None = None
) -> dict[str, a2ui.Surface]:
    """The thread's A2UI surfaces as these runs (oldest first) left them, after `start`: a later
    turn's update of a surface goes on from there."""
    state: dict[str, a2ui.Surface] = dict(start or {})
    for transcript in transcripts:
        state = a2ui.thread_surfaces(_a2ui_contents(transcript.activities.values()), state)
    return state


def surfaces_before(
    prior: Mapping[str, a2ui.Surface], transcript: Any, record: ActivityRecord
) -> dict[str, a2ui.Surface]:
    """The thread's surfaces just before this activity: the earlier runs', then this run's before it."""
    return a2ui.thread_surfaces(_a2ui_contents(transcript.activities.values(), record.position), prior)


def _a2ui_view(rv: Any, record: ActivityRecord, dom: str) -> dict[str, Any]:
    prior = getattr(rv, "a2ui_prior", None)
    prior = prior() if callable(prior) else prior or {}
    transcript = getattr(rv, "transcript", None)
    activity = a2ui.read_activity(
        record.content, surfaces_before(prior, transcript, record) if transcript is not None else prior
    )
    sent = rv.a2ui_sent.get(record.message_id, {}) if hasattr(rv, "a2ui_sent") else {}
    # Where the agent's protocol carries no action back, its surfaces are shown, not used.
    plan = getattr(rv, "plan", None)
    readonly = plan is not None and not plan.surfaces_take_actions
    shared = bool(getattr(rv, "shared", False))  # through a shared link nothing acts for the reader
    surfaces = []
    for index, surface in enumerate(activity.surfaces):
        action = sent.get(surface.id)
        values = action.get("values") if isinstance(action, Mapping) else None
        if not surface.supported:
            surfaces.append(
                {
                    "id": surface.id,
                    "dom": f"{dom}-s{index}",
                    "unsupported": surface.catalog_id or "(none)",
                    "tree": state_tree(
                        {"components": list(surface.components.values()), "data": surface.data}
                    ),
                }
            )
            continue
        tree = a2ui.render(surface, values if isinstance(values, Mapping) else None)
        surfaces.append(
            {
                "id": surface.id,
                "dom": f"{dom}-s{index}",
                "root": tree.root,
                "notes": tree.notes,
                "agent_name": surface.agent_name,
                "sent": action or None,
                "actions": bool(tree.actions),
                "readonly": readonly or shared,
                "shared": shared,
                # Signs the Image components' URLs for the image proxy (None: links only).
                "images": getattr(rv, "image_proxy", None),
            }
        )
    return {
        "template": "agents_ui/a2ui/activity.html",
        "surfaces": surfaces,
        "status": activity.status,
        "error": activity.error,
        "deleted": activity.deleted,
        "notes": activity.notes,
    }


# activity type -> its renderer: (RunView, record, dom id) -> what its template reads.
RENDERERS: dict[str, Callable[[Any, ActivityRecord, str], dict[str, Any]]] = {a2ui.ACTIVITY_TYPE: _a2ui_view}


def sent_actions(runs: list[Any]) -> dict[Any, dict[str, dict[str, dict[str, Any]]]]:
    """The actions later runs took to the agent, by the run whose surface they came from:
    run pk (as text) -> activity id -> surface id -> the action (the last one wins)."""
    found: dict[Any, dict[str, dict[str, dict[str, Any]]]] = {}
    for run in runs:
        action = (run.request or {}).get(ACTION_KEY)
        if isinstance(action, Mapping) and isinstance(action.get("activity"), str):
            by_activity = found.setdefault(str(action.get("run")), {})
            by_activity.setdefault(action["activity"], {})[str(action.get("surface"))] = dict(action)
    return found

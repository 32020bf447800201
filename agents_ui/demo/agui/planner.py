"""The Launch Planner: a shared state document, advanced step by step with JSON Patch.

A follow-up message builds on the plan the thread already has (the state the client sends back in
RunAgentInput.state): the goal and the steps stay, the new request adds steps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    ExecutionCapabilities,
    HumanInTheLoopCapabilities,
    ReasoningCapabilities,
    StateCapabilities,
    StateDeltaEvent,
    StateSnapshotEvent,
    StepFinishedEvent,
    StepStartedEvent,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, text_message
from agents_ui.demo.replies import keywords, pause, topic_of

# How long one step of the plan takes, in pacing steps: long enough to watch each one advance.
STEP_WORK = 30
STATUSES = {"pending", "in_progress", "done"}


class Planner(AgUiDemoAgent):
    slug = "planner"
    name = "Launch Planner"
    description = (
        "Builds a step-by-step plan as a shared state document and advances it live with JSON Patch "
        "updates, within a fixed number of iterations."
    )
    version = "1.0.0"
    max_iterations = 5

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            state=StateCapabilities(snapshots=True, deltas=True, persistent_state=True, memory=False),
            execution=ExecutionCapabilities(max_iterations=self.max_iterations, max_execution_time=30_000),
            # Explicitly false (not absent): the planner is known not to reason visibly or call tools.
            reasoning=ReasoningCapabilities(supported=False),
            tools=ToolsCapabilities(supported=False),
            human_in_the_loop=HumanInTheLoopCapabilities(supported=True, interventions=True),
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        request = topic_of(ctx.user_text)
        previous = earlier_plan(ctx.input.state)
        terms = keywords(ctx.user_text, 2)
        set_aside: list[str] = []
        if previous is None:
            goal, revision, requests, steps = request, 1, [request], []
            new = [
                (f"Clarify the goal: {request}", "Scope written down; owner and deadline named."),
                *(
                    (f"Gather what {term} needs", f"Listed what {term} needs: people, budget, dates.")
                    for term in terms
                ),
                ("Draft the schedule", f"Milestones for {goal} laid out week by week."),
                ("Review the risks and sign off", "Top risks each have an owner; ready to sign off."),
            ]
        elif previous["status"] == "planning":
            # The pass that made this plan was stopped midway: the message changes its course. The
            # steps done stay; those not finished are set aside for the change.
            goal, revision = previous["goal"], previous["revision"] + 1
            requests = [*previous["requests"], request]
            steps = [step for step in previous["steps"] if step["status"] == "done"]
            set_aside = [step["title"] for step in previous["steps"] if step["status"] != "done"]
            new = [
                (
                    f"Change course: {request}",
                    "The plan now follows the change; what was set aside is listed.",
                ),
                *((f"Rework the plan for {term}", f"Steps touching {term} redone.") for term in terms),
                ("Re-check the schedule", "The schedule holds with the new course; dates confirmed."),
            ]
        else:
            # A follow-up builds on the plan the thread already has: same goal, its steps kept.
            goal, steps = previous["goal"], previous["steps"]
            revision = previous["revision"] + 1
            requests = [*previous["requests"], request]
            new = [
                (f"Work in the change: {request}", "Change placed in the plan; the steps it touches marked."),
                *((f"Adjust the plan for {term}", f"Steps touching {term} updated.") for term in terms),
                ("Re-check the schedule", "The schedule still holds with the change; dates confirmed."),
            ]
        notes = {len(steps) + offset: note for offset, (_, note) in enumerate(new)}
        steps = [*steps, *({"title": title, "status": "pending"} for title, _ in new)]
        # Unfinished steps first, then the new ones, within the iterations of one run.
        todo = [index for index, step in enumerate(steps) if step["status"] != "done"][: self.max_iterations]
        state = {
            "goal": goal,
            "revision": revision,
            "requests": requests,
            "iteration": 0,
            "maxIterations": self.max_iterations,
            "status": "planning",
            "steps": steps,
        }
        if set_aside:
            state["setAside"] = set_aside
        yield StateSnapshotEvent(snapshot=state)
        for iteration, index in enumerate(todo, start=1):
            title = steps[index]["title"]
            yield StepStartedEvent(step_name=title)
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "in_progress"},
                    {"op": "replace", "path": "/iteration", "value": iteration},
                ]
            )
            await pause(STEP_WORK)
            note = notes.get(index, "Done as planned.")
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "done"},
                    {"op": "add", "path": f"/steps/{index}/note", "value": note},
                ]
            )
            yield StepFinishedEvent(step_name=title)
            steps[index].update(status="done", note=note)
        left = sum(1 for step in steps if step["status"] != "done")
        state.update(iteration=len(todo), status="ready" if not left else "paused")
        yield StateDeltaEvent(delta=[{"op": "replace", "path": "/status", "value": state["status"]}])
        # A final snapshot lets a client that missed a delta resynchronise.
        yield StateSnapshotEvent(snapshot=state)
        async for event in text_message(self._summary(state, previous, len(new), left)):
            yield event

    def _summary(self, state: dict[str, Any], previous: dict[str, Any] | None, added: int, left: int) -> str:
        steps, goal = state["steps"], state["goal"]
        worked = state["iteration"]
        if state.get("setAside"):
            aside = state["setAside"]
            text = f"I changed course on the plan for {goal} (revision {state['revision']}): "
            text += f"{len(aside)} unfinished step{'s' if len(aside) != 1 else ''} set aside "
            text += f"({'; '.join(aside)}), {added} new steps for “{state['requests'][-1]}” after the "
            text += f"{len(steps) - added} already done; this pass worked through {worked} of at most "
            text += f"{self.max_iterations}."
        elif previous is None:
            text = f"The plan for {goal} is ready: {len(steps)} steps, worked through in {worked} of "
            text += f"{self.max_iterations} iterations."
        else:
            kept = len(previous["steps"])
            text = f"I built on the plan for {goal} (revision {state['revision']}): {added} new steps for "
            text += f"“{state['requests'][-1]}” after the {kept} already there; this pass worked through "
            text += f"{worked} of at most {self.max_iterations}."
        if left:
            text += f" {left} step{'s' if left != 1 else ''} still open: send another message to go on."
        return text


def earlier_plan(state: Any) -> dict[str, Any] | None:
    """The plan a thread already has, from the state the client sent back; None when there is none.

    The state comes from the client, so only the fields of a plan are read, and only their shapes.
    """
    if not isinstance(state, dict) or not isinstance(state.get("goal"), str) or not state["goal"]:
        return None
    steps = []
    for step in state.get("steps") if isinstance(state.get("steps"), list) else []:
        if not isinstance(step, dict) or not isinstance(step.get("title"), str):
            continue
        kept: dict[str, Any] = {
            "title": step["title"],
            "status": step.get("status") if step.get("status") in STATUSES else "pending",
        }
        if isinstance(step.get("note"), str):
            kept["note"] = step["note"]
        steps.append(kept)
    requests = state.get("requests") if isinstance(state.get("requests"), list) else [state["goal"]]
    revision = state.get("revision")
    return {
        "goal": state["goal"],
        # "planning": the pass that left this plan was stopped before it finished.
        "status": state.get("status") if state.get("status") in ("planning", "ready", "paused") else "ready",
        "steps": steps,
        "requests": [request for request in requests if isinstance(request, str)],
        "revision": revision if isinstance(revision, int) and revision > 0 else 1,
    }

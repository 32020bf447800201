"""The Launch Planner: a shared state document, advanced step by step with JSON Patch."""

from __future__ import annotations

from collections.abc import AsyncIterator

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
        goal = topic_of(ctx.user_text)
        previous = ctx.input.state if isinstance(ctx.input.state, dict) else {}
        revision = int(previous.get("revision", 0)) + 1 if previous.get("goal") else 1
        titles = [
            f"Clarify the goal: {goal}",
            *(f"Gather what is needed for {term}" for term in keywords(ctx.user_text, 2)),
            "Draft the schedule",
            "Review risks and sign off",
        ][: self.max_iterations]
        state = {
            "goal": goal,
            "revision": revision,
            "iteration": 0,
            "maxIterations": self.max_iterations,
            "status": "planning",
            "steps": [{"title": title, "status": "pending"} for title in titles],
        }
        yield StateSnapshotEvent(snapshot=state)
        for index, title in enumerate(titles):
            yield StepStartedEvent(step_name=title)
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "in_progress"},
                    {"op": "replace", "path": "/iteration", "value": index + 1},
                ]
            )
            await pause()
            yield StateDeltaEvent(
                delta=[
                    {"op": "replace", "path": f"/steps/{index}/status", "value": "done"},
                    {"op": "add", "path": f"/steps/{index}/note", "value": f"{title}: done."},
                ]
            )
            yield StepFinishedEvent(step_name=title)
            state["steps"][index].update(status="done", note=f"{title}: done.")
        state.update(iteration=len(titles), status="ready")
        yield StateDeltaEvent(delta=[{"op": "replace", "path": "/status", "value": "ready"}])
        # A final snapshot lets a client that missed a delta resynchronise.
        yield StateSnapshotEvent(snapshot=state)
        async for event in text_message(
            f"The plan for {goal} is ready: {len(titles)} steps in {len(titles)} of "
            f"{self.max_iterations} iterations (revision {revision})."
        ):
            yield event

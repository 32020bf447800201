"""How a run's task is worded: the SDK records what happened, the display says it."""

from __future__ import annotations

from agents_ui.display.task import task_ending, task_view
from agents_ui.sdk.transcript import Artifact, ArtifactPart, TaskStatus


def test_a_failed_or_declined_task_is_worded_with_the_agents_reason():
    assert task_ending(TaskStatus(state="failed"), "It broke.") == "The task failed: It broke."
    assert task_ending(TaskStatus(state="failed"), None) == "The task failed."
    assert task_ending(TaskStatus(state="rejected"), "No.") == "The agent declined the task: No."
    assert task_ending(TaskStatus(state="completed"), "Done.") is None
    assert task_ending(None, "An error") is None


def test_the_non_text_parts_of_an_answer_are_named_as_such():
    parts = [ArtifactPart("data", text="{}")]
    answer = Artifact("m1", parts=parts, complete=True, of_answer=True)
    plain = Artifact("a1", parts=parts, complete=True)
    view = task_view(TaskStatus(state="completed"), artifacts=[answer, plain])
    assert [artifact["name"] for artifact in view["artifacts"]] == ["With the answer", "Artifact"]

"""The State panel as a page load draws it (a reload, a fresh visit of the conversation's address),
after one run or several, from real frameworks' captures: the document as a tree, the latest one.

Live, the stream swaps the document in as a tree; a page load must draw the same tree from the
thread's stored runs, never "Nothing yet." beside a raw JSON that holds the document.
"""

from __future__ import annotations

import html as html_lib
import json
import re

import pytest

from tests.views.test_thread_pages import thread

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["thread"]  # the fixture, imported so pytest finds it here


def state_panel(page: str) -> str:
    return re.search(r'<section class="panel" id="state-panel".*?</section>', page, re.S).group(0)


def raw_state(page: str) -> object:
    raw = re.search(r'<summary class="small">Raw JSON</summary><pre>(.*?)</pre>', state_panel(page), re.S)
    return json.loads(html_lib.unescape(raw.group(1)))


def steps(page: str) -> list[tuple[str, str]]:
    """The checklist the tree draws: (step, done) pairs."""
    panel = state_panel(page)
    return re.findall(r'<li class="step-\w+" data-step-done="(\w+)">.*?</svg> (.*?) <span', panel, re.S)


def sse(*events: dict) -> str:
    return "".join(f"data: {json.dumps(event)}\n\n" for event in events)


def delta(*operations: dict) -> dict:
    return {"type": "STATE_DELTA", "delta": list(operations)}


def shaped(run: str, *events: dict) -> str:
    return sse(
        {"type": "RUN_STARTED", "threadId": "t", "runId": run},
        *events,
        {"type": "RUN_FINISHED", "threadId": "t", "runId": run},
    )


@pytest.mark.parametrize(
    "captures",
    [
        ("pydantic-ai-state-1.sse", "pydantic-ai-state-2.sse"),
        ("pydantic-ai-store-state-1.sse", "pydantic-ai-store-state-2.sse"),
        ("adk-state-1.sse", "adk-state-2.sse"),
        ("agent-framework-state-1.sse", "agent-framework-state-2.sse"),
        ("langgraph-state-1.sse", "langgraph-state-2.sse"),
    ],
    ids=lambda names: names[0].removesuffix("-state-1.sse"),
)
async def test_after_two_runs_a_page_load_draws_the_state_as_a_tree(thread, captures):
    _, _, say, page = await thread(*captures)
    await say("update the state")
    first = await page()
    assert "Nothing yet." not in state_panel(first)
    assert ("true", "Ship") in steps(first)
    await say("hello")
    second = await page()
    panel = state_panel(second)
    assert "Nothing yet." not in panel and "data-checklist" in panel
    assert steps(second) == [("true", "Draft"), ("true", "Ship")]


async def test_the_starter_agentic_generative_ui_document_is_drawn_on_load(thread):
    """AG-UI's server starter: a snapshot, ten patches, a snapshot."""
    _, _, say, page = await thread("../agui-captures/starter-agentic_generative_ui.sse")
    await say("hello")
    html = await page()
    assert "Nothing yet." not in state_panel(html)
    assert len(steps(html)) == 10 and all(done == "true" for done, _ in steps(html))


@pytest.fixture
def bodies(tmp_path):
    """Write SSE bodies as captures the fake agent answers with, in order; their names."""

    def write(*texts: str) -> list[str]:
        names = []
        for number, text in enumerate(texts, start=1):
            path = tmp_path / f"run-{number}.sse"
            path.write_text(text)
            names.append(str(path))  # absolute: joined to the captures' folder, it stays itself
        return names

    return write


async def test_a_later_run_patches_the_state_the_runs_before_it_left(thread, bodies):
    """AG-UI's shared-state pattern: one run sends the document, the next only a patch to it. The
    patch applies to the thread's last state, live and on load, not to an empty document."""
    recipe = {"recipe": {"title": "Soup", "ingredients": [{"name": "Leek", "done": False}]}}
    names = bodies(
        shaped("r1", {"type": "STATE_SNAPSHOT", "snapshot": recipe}),
        shaped("r2", delta({"op": "replace", "path": "/recipe/title", "value": "Leek soup"})),
        shaped("r3", delta({"op": "add", "path": "/recipe/serves", "value": 4})),
    )
    server, _, say, page = await thread(*names)
    await say("make a soup")
    await say("call it leek soup")
    # The second run was sent the state the first left, and patched that.
    assert json.loads(server.requests[-1].body)["state"] == recipe
    second = await page()
    assert raw_state(second) == {"recipe": {**recipe["recipe"], "title": "Leek soup"}}
    assert "couldn" not in second.lower() and "not applied" not in second.lower()
    await say("for four")
    third = await page()
    assert raw_state(third) == {"recipe": {**recipe["recipe"], "title": "Leek soup", "serves": 4}}
    assert ("false", "Leek") in steps(third)

"""Conversations with every demo agent through the real composer, streaming live into the browser.

Each test talks to the embedded demo agents over real HTTP (served by the ASGI live server), so what
is checked here is the whole product: composer -> run -> agent -> SSE fragments -> the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.demo import registry
from agents_ui.demo.external.store import STORE
from agents_ui.demo.registry import register_demo_agents
from agents_ui.models import Feedback, Message, Run, RunEvent
from tests.factories import make_user
from tests.support.browser import streams_closed

pytestmark = pytest.mark.e2e

TIMEOUT = 15_000  # ms: a whole run with pacing stays well under this
# The agent's sealed reasoning starts with these 18 bytes, so its base64 always starts like this.
CIPHER_BLOB_PREFIX = "YWdlbnRzLXVpLWRlbW86djE6"

# Every demo agent that converses, with what a first answer to GREETING says.
GREETING = "Tell me about solar panels efficiency. Thanks."
ANSWERS = {
    "research-assistant": "Most rooftop panels sold today turn about 20 to 22% of the sunlight",
    "orchestrator": "Plan for “Tell me about solar panels efficiency”",
    "document-reviewer": "but I review documents",
    "operations": "It is sensitive, so I need your approval first.",
    "planner": "The plan for Tell me about solar panels efficiency is ready",
    "toolsmith": "I have these tools loaded right now",
    "cipher": "I thought about “Tell me about solar panels efficiency” privately",
    "legacy": "From our FAQ on “Tell me about solar panels efficiency”",
    "support-desk": "About “Tell me about solar panels efficiency”",
}
# How each agent's first run ends.
FINAL_STATUS = {"operations": "interrupted"}


# --- Fixtures and helpers (the other browser test modules import these) ------------------------------


@pytest.fixture
def demo(live_url: str) -> Iterator[str]:
    """The demo agents registered against the live server, each test from a blank slate."""
    cache.clear()  # discovery answers are cached per endpoint
    registry.reset_state()
    register_demo_agents(live_url)
    yield live_url
    registry.reset_state()


def open_agent(page: Page, base: str, slug: str) -> None:
    page.goto(f"{base}/agents/{slug}/")
    expect(page.locator("[data-composer]")).to_be_visible()


def send(page: Page, text: str) -> None:
    """Type into the real composer and press Send."""
    page.fill("#message", text)
    page.locator("[data-composer] button.button-primary").click()


def last_run(page: Page):
    return page.locator("#transcript section.run").last


def run_status(page: Page, index: int = -1):
    runs = page.locator("#transcript section.run")
    run = runs.last if index == -1 else runs.nth(index)
    return run.locator(".run-status")


def wait_run(page: Page, status: str = "completed", index: int = -1) -> None:
    expect(run_status(page, index)).to_have_attribute("data-run-status", status, timeout=TIMEOUT)


def answer_text(page: Page) -> str:
    return last_run(page).locator(".msg-assistant").all_inner_texts().__str__()


def sample_growth(
    page: Page, *, selector: str = ".msg-assistant .msg-text", limit_ms: int = 60_000
) -> list[Any]:
    """Sample, every 10 ms in the page, the text of the last run's answer until the run ends.

    Returns [[text length, run status], ...] each time either changed.
    """
    return page.evaluate(
        """async ([selector, limit]) => {
            const seen = [];
            const end = Date.now() + limit;
            while (Date.now() < end) {
                const runs = document.querySelectorAll("#transcript section.run");
                const run = runs[runs.length - 1];
                if (run) {
                    const text = Array.from(run.querySelectorAll(selector)).map(e => e.textContent).join("");
                    const status = run.querySelector(".run-status").dataset.runStatus;
                    const last = seen[seen.length - 1];
                    const changed = !last || last[0] !== text.length || last[1] !== status;
                    if (changed) seen.push([text.length, status]);
                    if (!["running", "pending"].includes(status)) break;
                }
                await new Promise(resolve => setTimeout(resolve, 10));
            }
            return seen;
        }""",
        [selector, limit_ms],
    )


def assert_incremental(samples: list[Any]) -> None:
    """The answer grew several times while the run was still running: not all at the end."""
    running = [length for length, status in samples if status in ("running", "pending")]
    final = samples[-1][0]
    partial = sorted({length for length in running if 0 < length < final})
    assert final > 0, samples
    # Two partial lengths: the shortest answer (cipher's) has five deltas, and a loaded machine may join
    # the first ones before the page has subscribed to the stream.
    assert len(partial) >= 2, f"text did not grow step by step while running: {samples}"
    # Until the answer is complete (then its Markdown is rendered, which may shorten it), it only grows.
    growing = running[: running.index(max(running)) + 1]
    assert growing == sorted(growing), f"text shrank while streaming: {samples}"


# --- Every agent: a full conversation ---------------------------------------------------------------


@pytest.mark.parametrize("slug", list(ANSWERS))
def test_every_agent_answers_two_turns_streaming_text_incrementally(
    page: Page, demo: str, signed_in, settings, slug: str
):
    settings.AGENTS_UI_DEMO_PACING = 0.08
    signed_in()
    open_agent(page, demo, slug)

    send(page, GREETING)
    samples = sample_growth(page)
    wait_run(page, FINAL_STATUS.get(slug, "completed"))
    assert_incremental(samples)
    expect(last_run(page).locator(".msg-assistant").first).to_contain_text(ANSWERS[slug])
    expect(page.locator(".msg-user").first).to_contain_text(GREETING)
    expect(page.locator("#message")).to_have_value("")  # the composer is cleared once sent

    # The second turn goes to the same conversation (and the agent sees the first one).
    settings.AGENTS_UI_DEMO_PACING = 0.0
    send(page, "And what about wind turbines?")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page, FINAL_STATUS.get(slug, "completed"))
    expect(last_run(page).locator(".msg-assistant").first).to_contain_text(re.compile(r"\w"))
    runs = Run.objects.filter(conversation__endpoint__slug=slug)
    assert runs.count() == 2
    assert runs.values("conversation").distinct().count() == 1
    assert Message.objects.filter(run__in=runs, role=Message.Role.ASSISTANT).count() >= 2

    # Reloading the conversation shows both turns from the database.
    page.reload()
    expect(page.locator(".msg-user")).to_have_count(2)
    expect(page.locator("#transcript section.run").first.locator(".msg-assistant").first).to_contain_text(
        ANSWERS[slug]
    )


def test_archive_answers_with_a_table_module(page: Page, demo: str, signed_in):
    """The archive streams modules only (modules-v1): the answer is a table, no text to stream."""
    signed_in()
    open_agent(page, demo, "archive")
    send(page, "Find the records about invoices from Lisbon")
    wait_run(page)
    table = last_run(page).locator("[data-module=table] table")
    expect(table).to_contain_text("invoices-record")
    expect(last_run(page).locator("[data-module=citation]")).to_contain_text("Policy handbook")


def test_future_agent_shows_the_banner_and_cannot_be_written_to(page: Page, demo: str, signed_in, screenshot):
    signed_in()
    open_agent(page, demo, "future-agent")
    expect(page.locator("[data-banner=newer-client]")).to_contain_text("Needs a newer client")
    # The product knows the agent refuses this client: no message can be lost to a doomed run.
    expect(page.locator("#message")).to_be_disabled()
    expect(page.locator("#message")).to_have_attribute("placeholder", re.compile("needs a newer client"))
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    screenshot("future-agent-refused")
    assert not Run.objects.exists()


# --- What each agent shows besides text --------------------------------------------------------------


def test_orchestrator_shows_the_subagent_tree_and_a_chosen_subagent_answers(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "orchestrator")
    send(page, "Prepare a launch brief for the new bike")
    wait_run(page)
    tree = last_run(page).locator(".subagent-tree")
    for name in ("researcher", "fact-checker", "writer", "reviewer"):
        expect(tree).to_contain_text(name)
    # The reviewer took the conversation over and speaks last, as itself.
    expect(last_run(page).locator(".msg-assistant").last.locator(".msg-from")).to_have_text("reviewer")

    page.select_option("[data-control=subagents] select", "writer")
    send(page, "Draft the press release")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    reply = last_run(page).locator(".msg-assistant", has=page.locator(".msg-from"))
    expect(reply.locator(".msg-from")).to_have_text("writer")
    expect(reply).to_contain_text("Writer here, on Draft the press release")
    expect(last_run(page).locator(".subagent-tree")).not_to_contain_text("reviewer")
    run = Run.objects.order_by("-created_at").first()
    assert run.request["subagent"] == "writer"


def test_planner_state_panel_follows_the_state_document(page: Page, demo: str, signed_in, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.02
    signed_in()
    open_agent(page, demo, "planner")
    state = page.locator("#state-document")
    expect(state.locator(".state-raw pre")).to_have_text("{}")
    send(page, "Plan the product launch in Berlin")
    # Live, patch by patch: a step in progress before the plan is ready.
    expect(state).to_contain_text('"in_progress"', timeout=TIMEOUT)
    expect(state).to_contain_text('"status": "planning"')
    wait_run(page)
    expect(state).to_contain_text('"status": "ready"')
    expect(state).not_to_contain_text("in_progress")
    expect(state).to_contain_text("Clarify the goal: Plan the product launch in Berlin")
    expect(state).to_contain_text('"revision": 1')

    # The state travels back on the next run: the agent builds on its plan.
    send(page, "Now plan the Munich launch")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(state).to_contain_text('"revision": 2')
    expect(state).to_contain_text("Clarify the goal: Plan the product launch in Berlin")
    expect(state).to_contain_text("Work in the change: Now plan the Munich launch")


def test_cipher_shows_that_reasoning_is_hidden_never_the_blob(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "cipher")
    send(page, "Which of my two offers is better?")
    wait_run(page)
    expect(last_run(page).locator("[data-reasoning=encrypted]")).to_contain_text("Reasoning hidden")
    assert CIPHER_BLOB_PREFIX not in page.content()
    sealed = Message.objects.get(role=Message.Role.REASONING)
    assert sealed.encrypted_value.startswith(CIPHER_BLOB_PREFIX)  # kept, to send back

    send(page, "And the third one?")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("You sent back 1 encrypted reasoning")
    page.reload()
    expect(page.locator("[data-reasoning=encrypted]")).to_have_count(2)
    assert CIPHER_BLOB_PREFIX not in page.content()


def test_legacy_agent_shows_reasoning_it_never_declared(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "legacy")
    expect(page.locator("[data-banner=none]")).to_be_visible()
    send(page, "My printer is offline")
    wait_run(page)
    expect(last_run(page).locator(".reasoning .reasoning-text")).to_contain_text("Look up the FAQ entry")
    page.reload()  # now observed: the workspace shows its reasoning control too
    expect(page.locator("[data-control=reasoning]")).to_be_visible()
    expect(page.locator(".reasoning .reasoning-text")).to_contain_text("Look up the FAQ entry")


def test_research_assistant_shows_reasoning_and_tool_calls(page: Page, demo: str, signed_in, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.03
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "How efficient are heat pumps in winter?")
    # Reasoning streams first, before the answer.
    expect(last_run(page).locator(".reasoning .reasoning-text")).to_contain_text(
        "I will search", timeout=TIMEOUT
    )
    wait_run(page)
    expect(last_run(page).locator(".reasoning .reasoning-text")).to_contain_text(
        "keep only claims two sources agree on"
    )
    for tool in ("web_search", "read_paper"):
        call = last_run(page).locator(f"[data-tool-call={tool}]")
        expect(call).to_contain_text("done")
        call.locator("summary").click()
        expect(call.locator(".tool-io")).to_contain_text("efficient heat pumps")
    expect(last_run(page).locator("[data-module=result]")).to_contain_text("Structured result")


def test_support_desk_shows_a_citation_and_its_sources(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "support-desk")
    expect(page.locator("[data-control=grounding]")).to_be_visible()
    send(page, "Where is my parcel with the blue shoes?")
    wait_run(page)
    citation = last_run(page).locator("[data-module=citation]")
    expect(citation).to_contain_text("Policy handbook")
    expect(citation.locator("a")).to_have_attribute("href", "https://help.example.com/policy")
    sources = last_run(page).locator("[data-grounding]")
    expect(sources).to_contain_text("Sources")
    expect(sources.locator("li")).to_have_count(2)
    expect(sources.locator("li").first).to_contain_text("Help centre:")
    # The same after a reload (from the event log, not the live stream).
    page.reload()
    expect(page.locator("[data-grounding] li")).to_have_count(2)
    expect(page.locator("[data-module=citation]")).to_contain_text("Policy handbook")


# --- Stop, reload, second tab, feedback --------------------------------------------------------------


@pytest.mark.parametrize("slug", ["document-reviewer", "support-desk"])
def test_stop_mid_run_keeps_the_partial_answer(page: Page, demo: str, signed_in, settings, screenshot, slug):
    settings.AGENTS_UI_DEMO_PACING = 0.1
    signed_in()
    open_agent(page, demo, slug)
    stop = page.locator("[data-control=stop]")
    expect(stop).to_be_disabled()
    send(page, "Please look at this in detail: " + "every single word matters here " * 3)
    text = last_run(page).locator(".msg-assistant .msg-text").first
    expect(text).to_contain_text(re.compile(r"\w+\s+\w+\s+\w+"), timeout=TIMEOUT)
    expect(stop).to_be_enabled()
    stop.click()
    wait_run(page, "cancelled")
    expect(run_status(page)).to_contain_text("Stopped. The answer so far is kept.")
    expect(stop).to_be_disabled()
    screenshot(f"stopped-run-{slug}")

    run = Run.objects.get()
    assert run.status == Run.Status.CANCELLED
    kept = Message.objects.get(run=run, role=Message.Role.ASSISTANT).content
    assert kept and len(kept) < 200
    shown = last_run(page).locator(".msg-assistant").first.inner_text()
    assert kept.split()[0] in shown
    # Nothing more arrives after the stop: its stream is closed.
    streams_closed(page)
    assert last_run(page).locator(".msg-assistant").first.inner_text() == shown
    page.reload()
    expect(run_status(page)).to_contain_text("Stopped")
    expect(page.locator(".msg-assistant").first).to_contain_text(kept.split()[0])


def test_reload_mid_run_loses_nothing_and_does_not_start_a_second_run(
    page: Page, demo: str, signed_in, settings, monkeypatch
):
    starts: list[str] = []
    agent = registry.AGUI_AGENTS["document-reviewer"]
    original = agent.run

    def counting_run(ctx):
        starts.append(ctx.input.run_id)
        return original(ctx)

    monkeypatch.setattr(agent, "run", counting_run)
    settings.AGENTS_UI_DEMO_PACING = 0.08
    signed_in()
    open_agent(page, demo, "document-reviewer")
    send(page, "Could you review the quarterly figures for the board?")
    text = last_run(page).locator(".msg-assistant .msg-text").first
    expect(text).to_contain_text(re.compile(r"\w+\s+\w+\s+\w+"), timeout=TIMEOUT)
    page.wait_for_url(re.compile(r"/c/"))  # htmx pushed the conversation's URL
    before = text.inner_text()

    page.reload()
    # The page has what was said so far, then the same run goes on streaming into it.
    again = last_run(page).locator(".msg-assistant .msg-text").first
    expect(again).to_contain_text(before.strip()[:20])
    samples = sample_growth(page)
    wait_run(page)
    assert any(status == "running" for _, status in samples), samples
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("attach a PDF or an image")
    expect(page.locator("#transcript section.run")).to_have_count(1)
    assert Run.objects.count() == 1
    assert RunEvent.objects.filter(type="RUN_STARTED").count() == 1
    assert len(starts) == 1
    saved = Message.objects.get(role=Message.Role.ASSISTANT).content
    assert last_run(page).locator(".msg-assistant").first.inner_text().strip().startswith(saved[:40])


def test_a_second_tab_follows_the_same_run(page: Page, demo: str, signed_in, settings):
    settings.AGENTS_UI_DEMO_PACING = 0.06
    signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "Compare lithium and sodium batteries")
    page.wait_for_url(re.compile(r"/c/"))
    other = page.context.new_page()
    other.goto(page.url)
    wait_run(other)
    wait_run(page)
    for tab in (page, other):  # a finished answer gets its Copy button: compare once both have it
        expect(last_run(tab).get_by_role("button", name="Copy", exact=True).first).to_be_visible()
    first = last_run(page).locator(".run-items").inner_text()
    second = last_run(other).locator(".run-items").inner_text()
    assert "Lithium-ion cells still store the most energy for their weight" in first
    assert first == second
    assert Run.objects.count() == 1
    other.close()


def test_feedback_is_saved_and_confirmed(page: Page, demo: str, signed_in):
    user = signed_in()
    open_agent(page, demo, "research-assistant")
    send(page, "What is a heat pump?")
    wait_run(page)
    form = last_run(page).locator("form.feedback")
    form.get_by_role("button", name="Helpful", exact=True).click()
    expect(last_run(page).locator(".feedback-done")).to_have_text("Thanks: marked helpful.")
    record = Feedback.objects.get()
    assert (record.user, record.value) == (user, "up")


def test_feedback_reaches_an_external_agent(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "support-desk")
    send(page, "Where is my order?")
    wait_run(page)
    last_run(page).locator("form.feedback").get_by_role("button", name="Not helpful").click()
    expect(last_run(page).locator(".feedback-done")).to_have_text("Thanks: marked not helpful.")
    record = Feedback.objects.get()
    assert record.value == "down" and record.sent_to_agent
    assert [i["value"] for i in STORE.interactions] == ["down"]


def test_a_user_without_reasoning_permission_is_told_so(page: Page, demo: str, signed_in):
    signed_in(make_user(perms=["upload_files", "approve_actions"]))
    open_agent(page, demo, "legacy")
    send(page, "My screen is black")
    wait_run(page)
    expect(last_run(page).locator(".reasoning")).to_contain_text("do not have permission")
    assert "Look up the FAQ entry" not in page.content()

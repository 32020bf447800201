"""A2A agents in a browser: registered by URL from the admin, beside AG-UI and external agents in the
catalogue, and a conversation that streams, asks, takes an answer, makes artifacts, fails with a
reason and stops, each still there after a reload. Against an A2A server built with a2a-sdk
(tests/support/a2a_agent.py) and the product's own demo A2A agent (Trip Planner)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Run
from tests.e2e.test_admin import admin_page  # noqa: F401  (a fixture)
from tests.e2e.test_runs import TIMEOUT, demo, last_run, open_agent, run_status, send, wait_run  # noqa: F401
from tests.support.a2a_agent import A2ATestAgent

pytestmark = pytest.mark.e2e


@pytest.fixture
def a2a_agent():
    server = A2ATestAgent().start()
    yield server
    server.stop()


def test_an_a2a_server_registered_by_url_converses_beside_agui_and_external_agents(
    admin_page: Page,  # noqa: F811
    demo: str,  # noqa: F811
    a2a_agent: A2ATestAgent,
    screenshot,
):
    page = admin_page
    page.set_viewport_size({"width": 1440, "height": 900})
    # Registered by its base URL only: the card is found at /.well-known/agent-card.json.
    page.goto(f"{demo}/admin/agents_ui/agentendpoint/add/")
    page.locator("#id_name").press_sequentially("Echo over A2A")
    page.select_option("#id_protocol", "a2a")
    page.fill("#id_base_url", a2a_agent.url)
    page.select_option("#id_auth_kind", "none")
    page.click("input[name=_continue]")
    expect(page.locator("ul.messagelist li").first).to_contain_text("was added successfully")
    page.click("button[data-tool=rediscover]")
    expect(page.locator(".discovery-declared").first).to_be_visible()
    expect(page.locator(".required-credentials")).to_contain_text("X-Api-Key")
    screenshot("a2a-admin")

    # The catalogue: AG-UI, external and A2A agents side by side, each with its own badges.
    page.goto(f"{demo}/")
    card = page.locator("[data-agent=echo-over-a2a]")
    expect(card).to_have_attribute("data-status", "declared")
    expect(card.locator(".badges")).to_contain_text("2 skills")
    expect(card.locator(".badges")).to_contain_text("Asks the person")
    for slug in ("research-assistant", "support-desk", "trip-planner"):
        expect(page.locator(f"[data-agent={slug}]")).to_be_visible()
    screenshot("a2a-catalogue")

    open_agent(page, demo, "echo-over-a2a")
    expect(page.locator("[data-control=skills] select option")).to_have_count(3)
    expect(page.locator("[data-skill-prompt]")).to_have_text(["Echo this"])
    # Explained by card field.
    expect(page.locator("#explain [data-explain=skills]")).to_contain_text("skills")

    # It asks; the answer continues the same task.
    send(page, "ask me")
    wait_run(page)
    expect(last_run(page).locator("[data-task-asks]")).to_contain_text("Which colour?")
    send(page, "blue")
    wait_run(page)
    expect(last_run(page)).to_contain_text("Noted: blue.")
    expect(last_run(page).locator("[data-artifact=answer]")).to_contain_text("You chose blue.")
    # The answer carried the task's id and context: the same task, not a new one.
    answer = a2a_agent.executor.received[-1]
    assert answer.task_id and answer.context_id

    # Artifacts: Markdown, and data as a tree, each with its MIME type.
    send(page, "hello world")
    wait_run(page)
    echo = last_run(page).locator("[data-artifact=echo]")
    expect(echo.locator("strong")).to_have_text("Echo")
    expect(echo.locator("[data-mime]")).to_have_text(["text/markdown"])
    expect(last_run(page).locator("[data-artifact=stats] [data-state-key=words]")).to_be_visible()

    # A failure says why.
    send(page, "fail")
    wait_run(page, "failed")
    expect(run_status(page)).to_contain_text("The task failed: The echo chamber collapsed.")

    # A task that needs authorization has a status of its own; the next message continues it.
    send(page, "auth")
    wait_run(page, "auth-required")
    expect(run_status(page).locator("[data-needs-auth]")).to_contain_text("Sign in with an API key first.")
    expect(last_run(page).locator("[data-task-auth]")).to_contain_text("header X-Api-Key")
    send(page, "my key is set")
    wait_run(page)
    expect(last_run(page)).to_contain_text("Authorized, going on: my key is set.")
    assert a2a_agent.executor.received[-1].task_id == a2a_agent.executor.received[-2].task_id

    # A slow answer streams, then Stop cancels the task at the agent.
    send(page, "slow")
    slow = last_run(page).locator("[data-artifact=slow]")
    expect(slow).to_contain_text("chunk 0", timeout=TIMEOUT)
    expect(slow).to_contain_text("chunk 1", timeout=TIMEOUT)
    assert run_status(page).get_attribute("data-run-status") == "running"
    page.locator("[data-control=stop]").click()
    wait_run(page, "cancelled")
    assert a2a_agent.executor.canceled
    screenshot("a2a-conversation")

    # After a reload, every turn is shown as it ended, from the event log.
    page.reload()
    runs = page.locator("#transcript section.run")
    expect(runs).to_have_count(7)
    expect(runs.nth(0).locator("[data-task-asks]")).to_contain_text("Which colour?")
    expect(runs.nth(1)).to_contain_text("Noted: blue.")
    expect(runs.nth(2).locator("[data-artifact=echo] strong")).to_have_text("Echo")
    expect(run_status(page, 3)).to_contain_text("The task failed: The echo chamber collapsed.")
    expect(run_status(page, 4)).to_have_attribute("data-run-status", "auth-required")
    expect(run_status(page, 4).locator("[data-needs-auth]")).to_contain_text("Sign in with an API key first.")
    expect(runs.nth(5)).to_contain_text("Authorized, going on")
    expect(run_status(page, 6)).to_contain_text("Stopped")
    expect(runs.nth(6).locator("[data-task-label]")).to_have_text("Canceled")
    expect(runs.nth(6).locator("[data-artifact=slow]")).to_contain_text("chunk 0")
    assert Run.objects.filter(conversation__endpoint__slug="echo-over-a2a").count() == 7


def test_the_demo_trip_planner_asks_streams_an_itinerary_and_reads_a_file(
    page: Page,
    demo: str,  # noqa: F811
    signed_in,
    screenshot,
):
    signed_in()
    page.set_viewport_size({"width": 1440, "height": 900})
    open_agent(page, demo, "trip-planner")
    # An example prompt fills the composer and chooses its skill.
    page.locator("[data-skill-prompt='Plan a trip']").click()
    expect(page.locator("#message")).to_have_value("Plan a trip")
    expect(page.locator("[data-control=skills] select")).to_have_value("plan-trip")
    # The skill takes text/plain: a text file too, nothing else.
    expect(page.locator("#attachment")).to_have_attribute("accept", "text/plain")
    expect(page.locator("#attachment")).to_be_enabled()
    page.locator("[data-composer] button.button-primary").click()
    wait_run(page)
    expect(last_run(page).locator("[data-task-asks]")).to_contain_text("Where would you like to go")
    send(page, "Lisbon")
    itinerary = last_run(page).locator("[data-artifact=itinerary]")
    expect(itinerary.locator("h1")).to_have_text("Lisbon in two days", timeout=TIMEOUT)
    wait_run(page)
    expect(itinerary.locator("table")).to_be_visible()
    expect(last_run(page).locator("[data-artifact=budget]")).to_contain_text("destination")
    screenshot("a2a-trip-planner-desktop")

    # Each control explained by the card field it was read from.
    page.locator("[data-open-explain]").click()
    explain = page.locator("#explain")
    expect(explain).to_be_visible()
    expect(explain.locator("[data-explain=skills]")).to_contain_text("A2A Agent Card")
    expect(explain.locator("[data-explain=upload]")).to_contain_text("defaultInputModes")
    expect(explain.locator("[data-explain=stop]")).to_contain_text("CancelTask")
    screenshot("a2a-explain")
    page.keyboard.press("Escape")

    # A file for the packing-list skill: a CSV comes back, to download.
    page.select_option("[data-control=skills] select", "packing-list")
    page.set_input_files(
        "#attachment", files=[{"name": "notes.csv", "mimeType": "text/csv", "buffer": b"socks\nhat\n"}]
    )
    send(page, "Make a packing list from my notes")
    wait_run(page)
    link = last_run(page).locator("[data-artifact=packing-list] a[download]")
    expect(link).to_have_text("packing-list.csv")
    with page.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == "packing-list.csv"
    with open(download.value.path(), "rb") as saved:
        assert saved.read().startswith(b"item,packed")

    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("#transcript section.run")).to_have_count(3)
    screenshot("a2a-trip-planner-phone")
    assert AgentEndpoint.objects.get(slug="trip-planner").protocol == "a2a"
    assert re.search("Lisbon", page.content())

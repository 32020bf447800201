"""Deciding an interrupt in the browser, for agents whose responseSchema asks for their own answer:
a string ("approved" or "rejected"), and a decision with a reason the person types in a form."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import Run
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support.shaped_agent import ShapedAgentServer

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shaped() -> Iterator[ShapedAgentServer]:
    server = ShapedAgentServer().start()
    yield server
    server.stop()


def asked(page: Page, live_url: str, shaped: ShapedAgentServer, name: str):
    cache.clear()
    make_endpoint(slug=name, name=f"{name.title()} agent", base_url=shaped.url_for(name))
    open_agent(page, live_url, name)
    send(page, "publish the launch post")
    wait_run(page, "interrupted")
    form = last_run(page).locator("form[data-approval-form]")
    expect(form).to_contain_text("Publish the post?")
    return form


def told(page: Page, payload: str) -> None:
    runs = page.locator("#transcript section.run")
    expect(runs).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(f"Told: {payload}")
    resumed = Run.objects.get(request__kind="resume")
    assert resumed.status == Run.Status.COMPLETED, resumed.error


@pytest.mark.parametrize(("choice", "word"), [("approve", "approved"), ("reject", "rejected")])
def test_a_string_schema_gets_the_word_it_asks_for(page: Page, live_url, signed_in, shaped, choice, word):
    signed_in()
    form = asked(page, live_url, shaped, "worded")
    expect(form.locator('input[value="edit"]')).to_have_count(0)  # a string takes no edited arguments
    form.locator(f'input[value="{choice}"]').check()
    form.get_by_role("button", name="Send decision").click()
    told(page, f'"{word}"')
    page.reload()
    expect(page.locator("#transcript section.run").first.locator("[data-decided]")).to_contain_text(
        word.capitalize()
    )


def test_a_reason_the_schema_requires_is_asked_and_checked(page: Page, live_url, signed_in, shaped):
    signed_in()
    form = asked(page, live_url, shaped, "reasoned")
    reason = form.locator("[data-answer-fields]").get_by_label("Why")
    expect(reason).to_be_visible()
    form.locator('input[value="reject"]').check()
    reason.fill("no")  # shorter than the agent's schema allows
    form.get_by_role("button", name="Send decision").click()
    expect(form.locator(".approval-errors")).to_contain_text("does not fit")
    expect(page.locator("#transcript section.run")).to_have_count(1)
    reason.fill("Not before Monday")
    form.get_by_role("button", name="Send decision").click()
    told(page, '{"decision": "reject", "reason": "Not before Monday"}')

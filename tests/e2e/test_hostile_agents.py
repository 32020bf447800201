"""Hostile agents in a real browser: a long unbroken line never widens the page; Send twice, one answer."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Message, Run
from tests.e2e.test_runs import TIMEOUT, open_agent, send, wait_run
from tests.factories import make_endpoint, make_user
from tests.support.browser import htmx_idle
from tests.support.fault_agent import LONG_LINE, FaultAgentServer
from tests.support.waiting import eventually_sync

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


def page_width(page: Page) -> tuple[int, int]:
    return page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")


@pytest.mark.parametrize("viewport", [(1280, 800), (390, 844)])
def test_a_long_unbroken_line_never_widens_the_page(
    page: Page, live_url, signed_in, fault_agent, viewport, record_property
):
    record_property("fault", "long-lines")
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    make_endpoint(slug="long", name="Long lines", base_url=fault_agent.url_for("long-lines"))
    signed_in(make_user(perms=["approve_actions", "view_reasoning"]))
    open_agent(page, live_url, "long")
    send(page, "Say something long")
    wait_run(page, "interrupted")
    expect(page.locator("form[data-approval-form]")).to_contain_text(LONG_LINE[:100])
    page.locator(".tool-call details").first.evaluate("(d) => d.open = true")
    width, viewport_width = page_width(page)
    assert width <= viewport_width, f"the page is {width} px wide in a {viewport_width} px window"
    page.reload()  # the page as rendered by the server, not only the stream
    expect(page.locator("form[data-approval-form]")).to_be_visible()
    width, viewport_width = page_width(page)
    assert width <= viewport_width, f"the page is {width} px wide in a {viewport_width} px window"


def test_double_clicking_send_sends_the_message_once(
    page: Page, live_url, signed_in, fault_agent, record_property
):
    record_property("fault", "double-submit")
    make_endpoint(slug="once", name="Once", base_url=fault_agent.url_for("ok"))
    signed_in()
    open_agent(page, live_url, "once")
    page.fill("#message", "Only once, please")
    page.locator("[data-composer] button.button-primary").dblclick()
    wait_run(page)
    htmx_idle(page)  # a second send would be in flight or answered by now
    assert Message.objects.filter(role="user", content="Only once, please").count() == 1
    assert Run.objects.count() == 1
    expect(page.locator("#transcript section.run")).to_have_count(1, timeout=TIMEOUT)
    # The next message is a new one, with the new token the answer gave the composer.
    send(page, "And a second one")
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=TIMEOUT)
    wait_run(page)
    assert Run.objects.count() == 2


def test_a_plain_form_submitted_twice_is_answered_once(
    page: Page, live_url, signed_in, fault_agent, record_property
):
    record_property("fault", "double-submit")
    """Without htmx (a browser that resubmits the form), the server still answers once."""
    make_endpoint(slug="twice", name="Twice", base_url=fault_agent.url_for("ok"))
    signed_in()
    open_agent(page, live_url, "twice")
    page.fill("#message", "Sent twice")
    token = page.locator("#client-token").input_value()
    form = {
        "content": "Sent twice",
        "client_token": token,
        "csrfmiddlewaretoken": page.locator("[data-composer] input[name=csrfmiddlewaretoken]").input_value(),
    }
    for _ in range(2):
        response = page.request.post(
            f"{live_url}/agents/twice/send/", form=form, headers={"Referer": page.url}
        )
        assert response.ok
    eventually_sync(
        lambda: not Run.objects.filter(status__in=[Run.Status.PENDING, Run.Status.RUNNING]).exists(),
        what="the run to end",
    )
    assert Message.objects.filter(role="user", content="Sent twice").count() == 1

"""Stored script in a real browser, over every protocol: a hostile agent (AG-UI, A2A, external) and a
hostile person fill every surface with tests/support/fault_agent.py's payloads, and on every page
where they land (the workspace live and after a reload, the catalogue, the card, the conversations,
the inbox, the shared page read by another person, the admin's endpoint and run pages) nothing ran
(`window.__pwned` unset), no dialog opened, the CSP had nothing to block, and the page asked nothing
of another origin; the files it offers are downloads."""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import Conversation, Run
from tests.a2a.test_a2a_runs import a2a_endpoint
from tests.e2e.test_bad_input import WATCH, assert_nothing_ran
from tests.e2e.test_runs import open_agent, send, wait_run
from tests.e2e.test_share import make_link, other_person
from tests.factories import make_endpoint, make_user
from tests.support import hostile_external
from tests.support.a2a_agent import A2ATestAgent, with_payloads
from tests.support.fault_agent import PAYLOADS, FaultAgentServer, P
from tests.support.inert import assert_pages_inert
from tests.views.test_hostile_surfaces import DOWNLOAD_TYPES, HOSTILE_TITLE, PROTOCOLS, offered

pytestmark = pytest.mark.e2e
__all__ = ["other_person"]  # the fixture, imported so pytest finds it here

SHOTS = (
    Path(os.environ.get("AGENTS_UI_HOSTILE_SHOTS", "")) if os.environ.get("AGENTS_UI_HOSTILE_SHOTS") else None
)


@pytest.fixture(scope="module")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


@pytest.fixture
def hostile_endpoint(request, live_url, fault_agent):
    """(endpoint, the message that makes it send its payloads) for the protocol asked."""
    cache.clear()
    with contextlib.ExitStack() as stack:
        if request.param == "agui":
            endpoint = make_endpoint(
                slug="evil", name="Evil", base_url=fault_agent.url_for("script-payloads")
            )
            ask = "Go"
        elif request.param == "a2a":
            agent = A2ATestAgent(card_edit=with_payloads).start()
            stack.callback(agent.stop)
            endpoint, ask = a2a_endpoint(agent.url), "payloads"
        else:
            endpoint, ask = stack.enter_context(hostile_external.serving(live_url)), "Go"
        # Discovered off this thread: Playwright's loop runs in it.
        with ThreadPoolExecutor(1) as pool:
            found = pool.submit(asyncio.run, discover_one(endpoint, refresh=True)).result()
        assert found.status == "declared", found.error
        yield endpoint, ask


# The text reaching past the window's right edge, to name what widens a page.
WIDEST = """(() => {
  const found = [], walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode()) && found.length < 3;) {
    const range = document.createRange(); range.selectNodeContents(node);
    if (range.getBoundingClientRect().right + scrollX > innerWidth + 1)
      found.push(`${node.parentElement.tagName}.${node.parentElement.className}: ${node.data.slice(0, 60)}`);
  } return found; })()"""


class Watched:
    """A page whose dialogs and requests to other origins are recorded."""

    def __init__(self, page: Page, live_url: str, tag: str = "") -> None:
        self.page, self.dialogs, self.elsewhere, self.tag = page, [], [], tag
        page.add_init_script(WATCH)
        page.on("dialog", lambda dialog: (self.dialogs.append(dialog.message), dialog.dismiss()))
        page.on("request", self._request)
        self._origin = live_url

    def _request(self, request) -> None:
        if not request.url.startswith((self._origin, "data:", "blob:", "about:")):
            self.elsewhere.append(request.url)

    def check(self, where: str, *, shot: bool = True) -> str:
        """Wake what would run on a look (open every details, hover what the agent wrote); nothing ran."""
        page = self.page
        for details in page.locator("main details").all()[:40]:
            details.evaluate("d => d.open = true")
        for element in page.locator("main b, main strong, main img, main a").all()[:12]:
            with contextlib.suppress(Exception):
                element.hover(timeout=1000)
        assert_nothing_ran(page, where)
        width, window = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= window, f"{where}: {width} px wide in a {window} px window: {page.evaluate(WIDEST)}"
        assert self.dialogs == [], f"{where}: dialogs {self.dialogs}"
        assert self.elsewhere == [], f"{where}: requests to other origins {self.elsewhere}"
        html = page.content()  # before a screenshot, which leaves style="" on some elements
        if SHOTS and shot:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"{self.tag}{where.replace(' ', '-')}.png"), full_page=True)
        return html


@pytest.mark.parametrize("hostile_endpoint", PROTOCOLS, indirect=True)
def test_nothing_a_hostile_agent_or_person_writes_runs_in_the_browser(
    page: Page, live_url, signed_in, other_person, hostile_endpoint
):
    every_page(page, live_url, signed_in, other_person, hostile_endpoint, "")


@pytest.mark.parametrize("hostile_endpoint", ["external"], indirect=True)
def test_at_phone_width_too(page: Page, live_url, signed_in, other_person, hostile_endpoint):
    page.set_viewport_size({"width": 390, "height": 844})
    every_page(page, live_url, signed_in, other_person, hostile_endpoint, "phone-")


def every_page(page: Page, live_url, signed_in, other_person, hostile_endpoint, size: str) -> None:
    endpoint, ask = hostile_endpoint
    tag = f"{size}{endpoint.protocol}-"
    watched = Watched(page, live_url, tag)
    signed_in(make_user(superuser=True))
    seen: dict[str, str] = {}

    page.goto(f"{live_url}/")
    expect(page.locator("main")).to_contain_text("window.__pwned")
    seen["catalogue"] = watched.check("catalogue")
    page.goto(f"{live_url}/agents/{endpoint.slug}/card/")
    seen["card"] = watched.check("card")

    open_agent(page, live_url, endpoint.slug)
    page.wait_for_function("() => window.htmx !== undefined")
    # No screenshot of a page that goes on: Playwright's capture leaves style="" on elements htmx
    # later copies, which the CSP (rightly) blocks.
    seen["workspace with explain"] = watched.check("workspace with explain", shot=False)
    send(page, f"{ask} {P}")  # the person's own markup, typed
    wait_run(page)
    expect(page.locator("#transcript .msg-user").last).to_contain_text(PAYLOADS[1])
    seen["conversation live"] = watched.check("conversation live")
    page.reload()
    expect(page.locator("#transcript section.run")).to_have_count(1)
    # The hostile A2UI surface (AG-UI's activity, A2A's DataPart, the external `a2ui` module) is drawn,
    # its script addresses refused.
    expect(page.locator("#transcript [data-a2ui-refused]").first).to_be_attached()
    seen["conversation after reload"] = watched.check("conversation after reload")
    run = Run.objects.select_related("conversation").latest("created_at")
    Conversation.objects.filter(pk=run.conversation_id).update(title=HOSTILE_TITLE)
    if endpoint.protocol == "a2a" and not size:  # a task's question of markup, waiting in the inbox
        send(page, "ask-payloads")
        expect(page.locator("#transcript section.run")).to_have_count(2)
        wait_run(page)
        page.goto(f"{live_url}/inbox/")
        expect(page.locator("main")).to_contain_text("window.__pwned")
        expect(page.locator("#inbox-link [data-inbox-badge]")).to_contain_text("1")
        seen["inbox with a question"] = watched.check("inbox with a question")

    for name, url in {
        "conversations": "/conversations/",
        "inbox": "/inbox/",
        "admin endpoint": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/",
        "admin declarations": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/",
        "admin run": f"/admin/agents_ui/run/{run.pk}/change/",
        "admin runs": "/admin/agents_ui/run/",
    }.items():
        page.goto(f"{live_url}{url}")
        seen[name] = watched.check(name)

    page.goto(f"{live_url}{run.conversation.get_absolute_url()}")
    link = make_link(page)
    reader = other_person(make_user(everyday=True))
    reader.set_viewport_size(page.viewport_size)
    watched_reader = Watched(reader, live_url, tag)
    reader.goto(link)
    expect(reader.locator("#transcript")).to_contain_text(HOSTILE_TITLE)
    seen["shared page"] = watched_reader.check("shared page")
    assert_pages_inert(seen)

    for url in offered(f"/runs/{run.pk}/artifacts/", seen["conversation after reload"]):
        response = page.request.get(f"{live_url}{url.replace('&amp;', '&')}")
        assert response.ok, url
        headers = response.headers
        assert headers["x-content-type-options"] == "nosniff", url
        assert headers["content-disposition"].startswith("attachment"), url
        assert headers["content-type"].split(";")[0] in DOWNLOAD_TYPES, url

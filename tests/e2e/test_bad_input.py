"""Markup and script from agents and people, in a real browser: shown as text, never executed.

The fault agent's `script-payloads` fault puts a payload that would set `window.__pwned` in every field
an agent controls: identity, tool names, descriptions and schemas, sub-agents, state, reasoning,
tool-call arguments and results, step names, and a Markdown answer with script, event handlers and
javascript: links. The person types payloads too. Every page that shows any of it is opened, and
the page must have run none of it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Message, Run
from tests.factories import make_endpoint, make_user
from tests.support.fault_agent import PAYLOADS, FaultAgentServer

pytestmark = pytest.mark.e2e

TIMEOUT = 15_000

# Runs before any page script, outside the page's CSP: records violations and any execution.
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective} ${e.blockedURI} ${e.sample || ""}`);
});
"""


@pytest.fixture(scope="module")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


@pytest.fixture
def evil(live_url: str, fault_agent: FaultAgentServer) -> AgentEndpoint:
    cache.clear()
    return make_endpoint(slug="evil", name="Evil agent", base_url=fault_agent.url_for("script-payloads"))


def assert_nothing_ran(page: Page, where: str) -> None:
    assert page.evaluate("typeof window.__pwned") == "undefined", f"{where}: a payload executed"
    violations = page.evaluate("window.__violations")
    # A violation means the browser blocked something: fine for safety, but the product itself must
    # not put inline script or handlers in a page, so none is expected.
    assert violations == [], f"{where}: {violations}"


SURFACES = [
    "declaration in the catalogue",
    "declaration in the workspace and explain panel (identity, tools, schemas, sub-agents)",
    "typed message with markup",
    "markdown answer (script, handlers, javascript: links)",
    "state document, reasoning, tool arguments and results, step and sub-agent names",
    "reloaded conversation and conversation list",
    "admin pages (list, change, declarations)",
]


def test_agent_controlled_fields_and_typed_markup_never_execute(
    page: Page, evil, live_url, signed_in, record_property
):
    for surface in SURFACES:
        record_property("bad_input", f"browser: {surface}")
    page.add_init_script(WATCH)
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    signed_in(make_user(superuser=True))

    page.goto(f"{live_url}/")
    expect(page.locator("main article")).to_contain_text(PAYLOADS[1])  # the declared description
    assert_nothing_ran(page, "catalogue")

    page.goto(f"{live_url}/agents/evil/")
    expect(page.locator("[data-composer]")).to_be_visible()
    # The declaration's payloads are on the page, as text.
    expect(page.locator("body")).to_contain_text("evil<script>window.__pwned='tool'</script>")
    page.locator("[data-open-explain]").click()
    for details in page.locator("#explain details").all():
        details.evaluate("d => d.open = true")
    expect(page.locator("#explain")).to_contain_text("onerror")
    assert_nothing_ran(page, "workspace and explain panel")
    page.keyboard.press("Escape")  # the explain dialog closes; the composer is usable again

    typed = " ".join(PAYLOADS)
    page.wait_for_function(
        "() => window.htmx !== undefined"
    )  # a function: an expression would be eval(), which the CSP forbids
    page.fill("#message", typed)
    page.locator("[data-composer] button.button-primary").click()
    status = page.locator("#transcript section.run .run-status").last
    expect(status).to_have_attribute("data-run-status", "completed", timeout=TIMEOUT)
    run = page.locator("#transcript section.run").last
    expect(run).to_contain_text("Title <script>window.__pwned='script'</script>")  # the Markdown heading
    # What the person typed, as text.
    expect(page.locator("#transcript .msg-user").last).to_contain_text(PAYLOADS[1])
    expect(page.locator("#state-document")).to_contain_text("onerror")
    # A javascript: link from the agent is not a link.
    assert page.locator("#transcript a[href^='javascript' i]").count() == 0
    page.mouse.move(10, 10)
    for element in page.locator("#transcript b, #transcript strong").all()[:5]:
        element.hover()
    assert_nothing_ran(page, "live run")
    assert Message.objects.filter(role="user", content=typed).exists()

    conversation = Run.objects.select_related("conversation__endpoint").get().conversation
    page.goto(f"{live_url}{conversation.get_absolute_url()}")
    expect(page.locator("#transcript")).to_contain_text("Title <script>")
    assert_nothing_ran(page, "the conversation, reloaded")

    page.goto(f"{live_url}/conversations/")
    assert_nothing_ran(page, "conversations")

    endpoint = AgentEndpoint.objects.get(slug="evil")
    for url in (
        "/admin/agents_ui/agentendpoint/",
        f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/",
        f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/",
    ):
        page.goto(f"{live_url}{url}")
        expect(page.locator("body")).to_be_visible()
        assert_nothing_ran(page, url)
    assert dialogs == []

    # The control: had any payload reached the page as markup, the watch would have seen it.
    page.evaluate("document.body.insertAdjacentHTML('beforeend', `" + PAYLOADS[1] + "`)")
    page.wait_for_function("() => window.__violations.length > 0")
    assert page.evaluate("typeof window.__pwned") == "undefined"  # and the CSP would have blocked it

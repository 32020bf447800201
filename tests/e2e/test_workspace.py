"""The workspace of every demo agent, in a browser: exactly the controls its declaration calls for.

The expected plans below are derived by hand from each demo agent's declaration
(agents_ui/demo/agui/, agents_ui/demo/external/) and the rules of agents_ui.decisions, not read
back from the page: a change to either shows up here as a difference to explain.
"""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.test import Client
from playwright.sync_api import Page, expect

from agents_ui.decisions import CONTROL_NAMES
from agents_ui.demo.registry import DEMO_AGENTS, register_demo_agents
from agents_ui.models import AgentEndpoint
from tests.factories import make_user

# Controls each demo agent gets for a user with every permission; every other control is hidden.
# AG-UI has no field for grounding, host context or stream profiles: always hidden for AG-UI agents.
SHOWN: dict[str, set[str]] = {
    # reasoning.supported; tools.items; output.structuredOutput; humanInTheLoop.feedback;
    # transport.streaming (stop); execution limits; multimodal.input.audio (upload and the audio
    # recorder); codeExecution in a sandbox; state.memory; custom.rateLimit (throttle, custom). No
    # approvals/interrupts declared: unknown. state declares only memory: no state panel.
    "research-assistant": {
        "identity",
        "reasoning",
        "tools",
        "structured-output",
        "feedback",
        "stop",
        "limits",
        "upload",
        "audio-recorder",
        "code-execution",
        "memory",
        "throttle",
        "custom",
    },
    # multiAgent.subagents (4); tools.items; streaming; execution.maxIterations.
    "orchestrator": {"identity", "subagents", "tools", "stop", "limits"},
    # multimodal.input image + pdf (and the image picker); reasoning.supported; streaming; custom.input.
    # output lists MIME types but not structuredOutput (unknown); no execution limits.
    "document-reviewer": {"identity", "reasoning", "upload", "stop", "image-picker", "custom"},
    # humanInTheLoop.approvals/interrupts; tools.items; interventions + streaming; maxExecutionTime.
    # state declares only persistentState: snapshots/deltas unknown, so no state panel.
    "operations": {"identity", "approvals", "tools", "stop", "limits"},
    # state snapshots + deltas; interventions; execution limits. reasoning and tools explicitly false.
    "planner": {"identity", "state", "stop", "limits"},
    # tools.items (changes per discovery); streaming; tools.clientProvided.
    "toolsmith": {"identity", "tools", "stop", "frontend-tools"},
    # tools.items; streaming; multimodal.output image and audio (drawn in answers, not as a control).
    "studio": {"identity", "tools", "stop", "media-output"},
    # reasoning.supported (encrypted); streaming. state declares only memory/persistentState false.
    "cipher": {"identity", "reasoning", "stop"},
    # custom.a2ui (A2UI's server capabilities): generative UI and the custom card; streaming.
    "booking-desk": {"identity", "stop", "generative-ui", "custom"},
    # No discovery (404): everything unknown but the identity card; no run has been observed yet.
    "legacy": {"identity"},
    # External policy: files + filePolicy.upload, approvals, domainTools, negotiated citation modules
    # and grounding, interactions, messages, rate/spend limits, host context, three stream profiles.
    # The policy has no field for reasoning, sub-agents, state, media, code execution, memory, a send
    # rate or custom capabilities; its messages stream as usual and carry no client tools; its output
    # modules hold no `a2ui` module (no generative UI).
    "support-desk": set(CONTROL_NAMES)
    - {"reasoning", "subagents", "skills", "state", "image-picker", "audio-recorder", "media-output"}
    - {"frontend-tools", "transport", "code-execution", "memory", "throttle", "generative-ui", "custom"},
    # files false, approvals false (no tool needs one), grounding false, interactions false.
    "archive": {"identity", "tools", "structured-output", "stop", "limits", "host-context", "stream-profile"},
    # Needs a newer SDK: never prepared, so read from the policy alone. Empty outputModuleTypes,
    # domainTools, limits and acceptedFields rule those out; interactions, messages and one stream
    # profile are declared.
    "future-agent": {"identity", "feedback", "stop", "stream-profile"},
    # A2A Agent Card: skills (with examples), defaultInputModes beyond text (upload), tasks/cancel (stop).
    # streaming true and pushNotifications false: nothing to show about the connection. A2UI's
    # extension (capabilities.extensions[0]): generative UI; its other extension is kept and shown:
    # custom, in the explain view.
    "trip-planner": {"identity", "skills", "upload", "stop", "generative-ui", "custom"},
}
assert set(SHOWN) == {agent.slug for agent in DEMO_AGENTS}

ALL_PERMISSIONS = ["upload_files", "approve_actions", "view_reasoning"]
# Controls that need a permission to be used: without it they are disabled, never hidden.
NEEDS_PERMISSION = {"reasoning", "upload", "approvals", "image-picker", "audio-recorder"}
# Decided and explained, not drawn as a control of their own (custom: in the explain view only).
NOT_DRAWN = {"media-output", "frontend-tools", "generative-ui", "custom"}


def expected_plan(slug: str, *, permissions: bool = True) -> dict[str, str]:
    plan = {}
    for name in CONTROL_NAMES:
        decision = "shown" if name in SHOWN[slug] else "hidden"
        if decision == "shown" and not permissions and name in NEEDS_PERMISSION:
            decision = "disabled"
        plan[name] = decision
    return plan


def page_controls(page: Page) -> dict[str, str]:
    """{control: decision} of the adaptive controls on the page, outside the explain panel."""
    pairs = page.eval_on_selector_all(
        "[data-control]",
        "els => els.filter(e => !e.closest('#explain')).map(e => [e.dataset.control, e.dataset.decision])",
    )
    names = [name for name, _ in pairs]
    assert len(names) == len(set(names)), f"a control appears twice: {names}"
    return dict(pairs)


def explained(page: Page) -> dict[str, str]:
    pairs = page.eval_on_selector_all(
        "#explain [data-explain]", "els => els.map(e => [e.dataset.explain, e.dataset.decision])"
    )
    assert [name for name, _ in pairs] == list(CONTROL_NAMES), (
        "the explain panel lists every control in order"
    )
    return dict(pairs)


@pytest.fixture
def demo_agents(live_url) -> dict[str, AgentEndpoint]:
    return {endpoint.slug: endpoint for endpoint in register_demo_agents(live_url)}


@pytest.fixture
def sign_in_as(page, live_url):
    """Sign in by session cookie: the login form is tested elsewhere, and skipping it (and the
    catalogue it lands on, which discovers every agent) keeps each test well under a second."""

    def sign_in(user) -> None:
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        page.context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": live_url}])

    return sign_in


def open_workspace(page: Page, live_url: str, slug: str) -> None:
    response = page.goto(f"{live_url}/agents/{slug}/")
    assert response is not None and response.status == 200


@pytest.mark.parametrize("slug", list(SHOWN))
def test_workspace_shows_exactly_the_controls_the_agent_declares(
    page, live_url, sign_in_as, demo_agents, screenshot, slug
):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, slug)

    expected = expected_plan(slug)
    assert page_controls(page) == {n: d for n, d in expected.items() if d != "hidden" and n not in NOT_DRAWN}
    assert explained(page) == expected
    screenshot(f"workspace-{slug}")


@pytest.mark.parametrize("slug", list(SHOWN))
def test_without_permissions_the_controls_that_need_one_are_disabled_not_hidden(
    page, live_url, sign_in_as, demo_agents, slug
):
    sign_in_as(make_user())
    open_workspace(page, live_url, slug)

    expected = expected_plan(slug, permissions=False)
    assert page_controls(page) == {n: d for n, d in expected.items() if d != "hidden" and n not in NOT_DRAWN}
    assert explained(page) == expected
    for name in NEEDS_PERMISSION & SHOWN[slug]:
        expect(page.locator(f"#explain [data-explain={name}]")).to_contain_text("You do not have permission")


def test_disabled_controls_say_why_and_cannot_be_used(page, live_url, sign_in_as, demo_agents):
    sign_in_as(make_user())
    open_workspace(page, live_url, "support-desk")

    upload = page.locator("[data-control=upload]")
    expect(upload.locator("input[type=file]")).to_be_disabled()
    expect(upload.locator("label")).to_have_attribute("aria-disabled", "true")
    expect(upload.locator("[data-upload-limits]")).to_have_text("You may not upload files.")
    expect(page.locator("[data-control=approvals]")).to_contain_text("you may not decide them")

    open_workspace(page, live_url, "research-assistant")
    expect(page.locator("[data-control=reasoning]")).to_contain_text(
        re.compile("you do not have permission", re.IGNORECASE)
    )


def test_an_admin_override_hides_a_control_and_the_explain_panel_says_so(
    page, live_url, sign_in_as, demo_agents
):
    endpoint = demo_agents["research-assistant"]
    # "allow" shows a control the agent is silent about; "hide" never hides the identity card.
    endpoint.overrides = {"tools": "hide", "feedback": "hide", "state": "allow", "identity": "hide"}
    endpoint.save()
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "research-assistant")

    expected = expected_plan("research-assistant") | {
        "tools": "hidden",
        "feedback": "hidden",
        "state": "shown",
    }
    assert page_controls(page) == {n: d for n, d in expected.items() if d != "hidden" and n not in NOT_DRAWN}
    assert explained(page) == expected
    for name in ("tools", "feedback"):
        reasons = page.locator(f"#explain [data-explain={name}] .reasons")
        expect(reasons).to_contain_text("override The admin forced this control off")
    expect(page.locator("#explain [data-explain=state] .reasons")).to_contain_text("the admin allowed it")
    expect(page.locator("#explain [data-explain=identity] .reasons")).to_contain_text("it is always shown")
    expect(page.locator("[data-control=tools]")).to_have_count(0)


def test_support_desk_upload_offers_only_its_types_and_states_its_limit(
    page, live_url, sign_in_as, demo_agents
):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "support-desk")

    file_input = page.locator("[data-control=upload] input[type=file]")
    expect(file_input).to_have_attribute("accept", "application/pdf,image/png")
    expect(file_input).to_have_attribute("data-max-bytes", str(5 * 1024 * 1024))
    expect(file_input).to_be_enabled()
    expect(page.locator("[data-upload-limits]")).to_have_text("application/pdf, image/png, up to 5 MB")


def test_document_reviewer_upload_offers_images_and_pdfs(page, live_url, sign_in_as, demo_agents):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "document-reviewer")

    file_input = page.locator("[data-control=upload] input[type=file]")
    expect(file_input).to_have_attribute(
        "accept", "application/pdf,image/png,image/jpeg,image/webp,image/gif"
    )
    expect(page.locator("[data-upload-limits]")).to_contain_text("application/pdf, image/png")


def test_document_reviewer_upload_states_its_size_limit(page, live_url, sign_in_as, demo_agents):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "document-reviewer")

    expect(page.locator("[data-upload-limits]")).to_contain_text("up to 10 MB", timeout=1000)


def test_legacy_agent_says_it_has_no_discovery(page, live_url, sign_in_as, demo_agents):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "legacy")

    expect(page.locator("[data-banner=none]")).to_contain_text("does not say what it can do")
    expect(page.locator("[data-banner=newer-client]")).to_have_count(0)
    # Unknown, not unsupported: the explain panel says nothing was declared.
    expect(page.locator("#explain [data-explain=reasoning] .reasons")).to_contain_text("no discovery")


def test_future_agent_says_it_needs_a_newer_client(page, live_url, sign_in_as, demo_agents):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, "future-agent")

    banner = page.locator("[data-banner=newer-client]")
    expect(banner).to_contain_text("Needs a newer client")
    expect(banner).to_contain_text("2.0.0")
    expect(page.locator("[data-banner=prepare]")).to_have_count(0)


def focus_order(page: Page, until: str = "button:Send", presses: int = 60) -> list[str]:
    """What Tab focuses from the top of the page, one descriptor per press, up to `until`."""
    page.locator("body").focus()
    seen: list[str] = []
    while len(seen) < presses and until not in seen:
        page.keyboard.press("Tab")
        seen.append(
            page.evaluate(
                """() => {
                  const e = document.activeElement;
                  if (e.id) return '#' + e.id;
                  return e.tagName.toLowerCase() + ':' + (e.textContent || '').trim().split(/\\s+/)[0];
                }"""
            )
        )
    return seen


@pytest.mark.parametrize("slug", ["support-desk", "document-reviewer"])
def test_composer_is_reachable_with_the_keyboard(page, live_url, sign_in_as, demo_agents, slug):
    sign_in_as(make_user(perms=ALL_PERMISSIONS))
    open_workspace(page, live_url, slug)

    order = focus_order(page)
    assert "#message" in order and "#attachment" in order and "button:Send" in order, order
    assert order.index("#message") < order.index("#attachment") < order.index("button:Send")
    # The file input is visually hidden; its visible label is what a person reads.
    expect(page.get_by_label("Attach file")).to_have_id("attachment")
    # Typing then Ctrl+Enter is the keyboard path to send; here it is enough that focus can get there.
    page.locator("#message").focus()
    page.keyboard.type("hello")
    expect(page.locator("#message")).to_have_value(re.compile("hello"))

"""Bad input from people and from agents: refused, escaped or sanitised, never executed or trusted.

What tests/test_run_views.py already refuses (an empty or 20,001-character message, a PNG to a
PDF-only agent, text labelled PDF, an empty file, an unknown sub-agent, files without permission,
another user's run) is not repeated here. Each case records `bad_input` so `make reliability` can
count what was tried and refused. The browser half is tests/e2e/test_bad_input.py.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient, Client

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import ApprovalRecord, Attachment, Conversation, Message, Run
from tests.factories import make_endpoint, make_user
from tests.support.fault_agent import PAYLOADS, FaultAgentServer
from tests.support.htmx import HtmxClient
from tests.support.inert import assert_inert, assert_pages_inert
from tests.support.waiting import settle

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[1]
PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
PNG = bytes.fromhex("89504e470d0a1a0a0000000d4948445200000001000000010806000000") + b"\x00" * 40
EXE = (
    b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff\x00\x00"
    + b"\x00" * 48
    + b"PE\x00\x00"
    + b"\x00" * 64
)
ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56
HTML = b"<!doctype html><html><script>window.__pwned=1</script></html>"
SVG = b'<svg xmlns="http://www.w3.org/2000/svg" onload="window.__pwned=1"><script>alert(1)</script></svg>'


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()


@pytest.fixture(scope="session")
def fault_agent() -> Iterator[FaultAgentServer]:
    server = FaultAgentServer().start()
    yield server
    server.stop()


# --- Uploads --------------------------------------------------------------------------------------


@pytest.fixture
async def reader(fake_server):
    """An AG-UI agent taking PDFs and images up to 1,000 bytes."""
    declaration = {
        "identity": {"name": "Reader"},
        "transport": {"streaming": True},
        "multimodal": {"input": {"pdf": True, "image": True}},
        "custom": {"input": {"maxBytes": 1000}},
    }

    async def handler(exchange):
        if exchange.request.method == "GET":
            exchange.respond(200, declaration)
            return
        exchange.start_sse()
        for event in [
            {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
            {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
        ]:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="reader", base_url=f"{server.url}/agent")
    user = await sync_to_async(make_user)(perms=["upload_files"])
    client = HtmxClient()
    await client.aforce_login(user)
    client.server = server
    return client


@pytest.mark.parametrize(
    ("label", "upload", "problem"),
    [
        ("too large for the agent", ("big.pdf", PDF + b"%" * 2000, "application/pdf"), "too large"),
        ("windows program renamed .pdf", ("report.pdf", EXE, "application/pdf"), "labelled application/pdf"),
        ("linux program renamed .png", ("photo.png", ELF, "image/png"), "labelled image/png"),
        ("HTML page renamed .png", ("photo.png", HTML, "image/png"), "its content is text/plain"),
        ("script-carrying SVG", ("logo.svg", SVG, "image/svg+xml"), "not a type this agent accepts"),
        ("empty image", ("blank.png", b"", "image/png"), "is empty"),
    ],
)
async def test_bad_uploads_are_refused_and_nothing_is_sent(reader, record_property, label, upload, problem):
    record_property("bad_input", f"upload: {label}")
    name, data, content_type = upload
    response = await reader.post(
        "/agents/reader/send/",
        {"content": "Look", "attachment": SimpleUploadedFile(name, data, content_type)},
    )
    assert response["HX-Retarget"] == "#composer-errors"
    assert problem in response.content.decode()
    assert not await Message.objects.aexists() and not await Attachment.objects.aexists()
    assert [r.method for r in reader.server.requests] == ["GET"]  # discovery only


async def test_the_product_limit_applies_when_the_agent_declares_none(fake_server, settings, record_property):
    record_property("bad_input", "upload: over the product's own limit")
    settings.AGENTS_UI_MAX_UPLOAD_BYTES = 500

    async def handler(exchange):
        exchange.respond(200, {"multimodal": {"input": {"pdf": True}}})

    server = await fake_server(handler)
    await sync_to_async(make_endpoint)(slug="nolimit", base_url=f"{server.url}/agent")
    client = HtmxClient()
    await client.aforce_login(await sync_to_async(make_user)(perms=["upload_files"]))
    upload = SimpleUploadedFile("big.pdf", PDF + b"%" * 600, "application/pdf")
    response = await client.post("/agents/nolimit/send/", {"content": "x", "attachment": upload})
    assert "too large" in response.content.decode()
    assert not await Message.objects.aexists()


async def test_a_file_name_with_markup_is_kept_as_text(reader, record_property):
    record_property("bad_input", "upload: file name with markup")
    upload = SimpleUploadedFile("<img src=x onerror=alert(1)>.pdf", PDF, "application/pdf")
    response = await reader.post("/agents/reader/send/", {"content": "Read", "attachment": upload})
    await settle()
    body = response.content.decode()
    assert_inert(body)
    assert "&lt;img src=x onerror=alert(1)&gt;.pdf" in body


# --- Messages -------------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", PAYLOADS)
async def test_markup_in_a_message_is_shown_as_text_everywhere(reader, record_property, payload):
    record_property("bad_input", f"message: {payload[:40]}")
    response = await reader.post("/agents/reader/send/", {"content": f"Hi {payload}"})
    await settle()
    conversation = await Conversation.objects.select_related("endpoint").aget()
    assert (await Message.objects.aget(role="user")).content == f"Hi {payload}"  # kept as typed
    pages = [
        response.content.decode(),
        (await reader.get(conversation.get_absolute_url())).content.decode(),
        (await reader.get("/conversations/")).content.decode(),
    ]
    for html in pages:
        assert_inert(html)
        if "{{" in payload:
            assert "Hi {{ 7*7 }}{% now &#x27;Y&#x27; %}" in html  # never evaluated as a template


async def test_a_message_over_the_limit_is_refused_without_javascript_too(reader, settings, record_property):
    record_property("bad_input", "message: over the length limit (no JavaScript)")
    plain = AsyncClient()
    await plain.aforce_login(await sync_to_async(make_user)())
    response = await plain.post("/agents/reader/send/", {"content": "y" * (20_000 + 1)})
    assert response.status_code == 422
    assert "the limit is 20,000" in response.content.decode()
    assert not await Message.objects.aexists()
    response = await plain.post("/agents/reader/send/", {"content": "y" * 20_000})
    assert response.status_code == 302  # exactly at the limit is fine
    await settle()


# --- Cross-site request forgery -------------------------------------------------------------------

UUID = "00000000-0000-4000-8000-000000000000"
POST_ROUTES = [
    "/agents/reader/send/",
    "/agents/reader/stop/",
    f"/runs/{UUID}/stop/",
    f"/runs/{UUID}/decide/",
    f"/runs/{UUID}/feedback/",
    f"/conversations/{UUID}/share/",
    "/shared/1/revoke/",
    "/accounts/logout/",
    "/accounts/password_change/",
    "/admin/agents_ui/agentendpoint/add/",
    "/admin/logout/",
]


@pytest.mark.parametrize("route", POST_ROUTES)
def test_every_post_without_a_csrf_token_is_refused(route, record_property):
    record_property("bad_input", f"no CSRF token: {route}")
    make_endpoint(slug="reader")
    client = Client(enforce_csrf_checks=True)
    client.force_login(make_user(superuser=True))
    response = client.post(route, {"content": "hello", "name": "x"})
    assert response.status_code == 403
    assert not Message.objects.exists()


def test_the_login_form_without_a_csrf_token_is_refused(record_property):
    record_property("bad_input", "no CSRF token: /accounts/login/")
    user = make_user()
    client = Client(enforce_csrf_checks=True)
    response = client.post("/accounts/login/", {"username": user.username, "password": "x"})
    assert response.status_code == 403


def test_with_the_token_the_same_post_goes_through(client):
    """The control: the 403s above are the CSRF check, not something else."""
    make_endpoint(slug="reader", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2)
    checked = Client(enforce_csrf_checks=True)
    checked.force_login(make_user())
    checked.get("/agents/reader/")
    token = checked.cookies["csrftoken"].value
    response = checked.post(f"/runs/{UUID}/stop/", {"csrfmiddlewaretoken": token})
    assert response.status_code == 404  # past the CSRF check; no such run


# --- Other people's things, other groups' agents ------------------------------------------------


async def test_another_users_conversation_cannot_be_written_to_stopped_or_rated(reader, record_property):
    record_property("bad_input", "another user's conversation")
    await reader.post("/agents/reader/send/", {"content": "Mine"})
    await settle()
    run = await Run.objects.select_related("conversation__endpoint").aget()
    stranger = HtmxClient()
    await stranger.aforce_login(await sync_to_async(make_user)())
    conversation = str(run.conversation_id)
    assert (await stranger.post("/agents/reader/stop/", {"conversation": conversation})).status_code == 404
    assert (await stranger.post(f"/runs/{run.pk}/feedback/", {"value": "up"})).status_code == 404
    assert (await stranger.get(f"/agents/reader/c/{UUID}/")).status_code == 404
    assert (
        await stranger.post("/agents/reader/send/", {"content": "x", "conversation": "nope"})
    ).status_code == 404
    assert await Message.objects.acount() == 1


async def test_an_agent_restricted_to_another_group_is_not_found_for_every_route(
    fake_server, record_property
):
    record_property("bad_input", "another group's agent")

    async def handler(exchange):
        exchange.respond(200, {"identity": {"name": "Ledger"}})

    server = await fake_server(handler)

    def setup():
        finance, ops = Group.objects.create(name="Finance"), Group.objects.create(name="Ops")
        endpoint = make_endpoint(slug="ledger", base_url=f"{server.url}/agent")
        endpoint.allowed_groups.add(finance)
        member, outsider = make_user(), make_user()
        member.groups.add(finance)
        outsider.groups.add(ops)
        conversation = Conversation.objects.create(user=member, endpoint=endpoint, title="t")
        run = Run.objects.create(conversation=conversation, status=Run.Status.COMPLETED)
        return member, outsider, conversation, run

    member, outsider, conversation, run = await sync_to_async(setup)()
    client = HtmxClient()
    await client.aforce_login(outsider)
    assert (await client.post("/agents/ledger/send/", {"content": "pay me"})).status_code == 404
    assert (
        await client.post("/agents/ledger/stop/", {"conversation": str(conversation.pk)})
    ).status_code == 404
    assert (await client.get("/agents/ledger/card/")).status_code == 404
    assert not await Message.objects.aexists()
    # A member who leaves the group loses their own old runs too.
    await sync_to_async(member.groups.clear)()
    client = HtmxClient()
    await client.aforce_login(member)
    assert (await client.get(f"/runs/{run.pk}/events/")).status_code == 404
    assert (await client.get(f"/agents/ledger/c/{conversation.pk}/")).status_code == 404


# --- Approvals ------------------------------------------------------------------------------------


def interrupting_agent(expires_at: str | None):
    """Asks before acting on its first run; any later run (the resume) just finishes."""
    interrupt = {"id": "ask-1", "reason": "tool_call", "message": "Delete everything?", "toolCallId": "tc"}
    if expires_at:
        interrupt["expiresAt"] = expires_at
    first = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r1"},
        {"type": "TOOL_CALL_START", "toolCallId": "tc", "toolCallName": "delete_all"},
        {"type": "TOOL_CALL_ARGS", "toolCallId": "tc", "delta": "{}"},
        {"type": "TOOL_CALL_END", "toolCallId": "tc"},
        {
            "type": "RUN_FINISHED",
            "threadId": "t",
            "runId": "r1",
            "outcome": {"type": "interrupt", "interrupts": [interrupt]},
        },
    ]
    later = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r2"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r2"},
    ]
    runs = 0

    async def handler(exchange):
        nonlocal runs
        if exchange.request.method == "GET":
            exchange.respond(200, {"humanInTheLoop": {"interrupts": True, "approvals": True}})
            return
        runs += 1
        exchange.start_sse()
        for event in first if runs == 1 else later:
            await exchange.send(f"data: {json.dumps(event)}\n\n")

    return handler


async def interrupted_run(fake_server, *, expires_at: str | None = None, perms=("approve_actions",)):
    server = await fake_server(interrupting_agent(expires_at))
    await sync_to_async(make_endpoint)(slug="ops", base_url=f"{server.url}/agent")
    user = await sync_to_async(make_user)(perms=list(perms))
    client = HtmxClient()
    await client.aforce_login(user)
    await client.post("/agents/ops/send/", {"content": "Clean up"})
    await settle()
    run = await Run.objects.aget()
    assert run.status == Run.Status.INTERRUPTED
    return client, run, server


def posts(server) -> int:
    return sum(1 for r in server.requests if r.method == "POST")


async def test_an_approval_decided_twice_is_decided_once(fake_server, record_property):
    record_property("bad_input", "approval decided twice")
    client, run, server = await interrupted_run(fake_server)
    first = await client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "approve"})
    assert "already decided" not in first.content.decode()
    await settle()
    again = await client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "reject"})
    assert "This request was already decided." in again.content.decode()
    both = await asyncio.gather(
        client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "reject"}),
        client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "reject"}),
    )
    assert all("already decided" in r.content.decode() for r in both)
    await settle()
    assert [r.decision async for r in ApprovalRecord.objects.all()] == ["approved"]
    assert posts(server) == 2  # the first run and one resume


async def test_two_decisions_at_once_make_one_resume(fake_server, record_property):
    record_property("bad_input", "approval decided twice at the same moment")
    client, run, server = await interrupted_run(fake_server)
    answers = await asyncio.gather(
        *(client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "approve"}) for _ in range(3))
    )
    await settle()
    refused = [a for a in answers if "already decided" in a.content.decode()]
    assert len(refused) == 2
    assert await ApprovalRecord.objects.acount() == 1
    assert posts(server) == 2


async def test_an_expired_approval_cannot_be_decided(fake_server, record_property):
    record_property("bad_input", "approval decided after expiry")
    past = (datetime.now(UTC) - timedelta(minutes=1)).isoformat().replace("+00:00", "Z")
    client, run, server = await interrupted_run(fake_server, expires_at=past)
    answer = await client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "approve"})
    assert "expired" in answer.content.decode()
    assert not await ApprovalRecord.objects.aexists()
    assert posts(server) == 1


async def test_an_approval_cannot_be_decided_without_the_permission(fake_server, record_property):
    record_property("bad_input", "approval decided without permission")
    client, run, server = await interrupted_run(fake_server, perms=())
    answer = await client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "approve"})
    assert "do not have permission" in answer.content.decode()
    assert not await ApprovalRecord.objects.aexists()
    assert posts(server) == 1


async def test_a_resume_run_is_not_made_by_hand(fake_server, record_property):
    """A forged decision for an interrupt the run never had changes nothing."""
    record_property("bad_input", "approval for an interrupt that does not exist")
    client, run, server = await interrupted_run(fake_server)
    await client.post(f"/runs/{run.pk}/decide/", {"decision-ask-1": "approve", "decision-forged": "approve"})
    await settle()
    assert [r.request_id async for r in ApprovalRecord.objects.all()] == ["ask-1"]
    resume = [r for r in server.requests if r.method == "POST"][-1].json()["resume"]
    assert [entry["interruptId"] for entry in resume] == ["ask-1"]
    assert await Run.objects.filter(request__kind="resume").acount() == 1


# --- What agents control: declarations and runs full of markup --------------------------------------


async def test_every_field_an_agent_controls_reaches_the_page_as_text(fault_agent, record_property):
    record_property("bad_input", "agent: markup in declaration, tools, state, markdown, tool calls")
    endpoint = await sync_to_async(make_endpoint)(
        slug="evil", name="Evil", base_url=fault_agent.url_for("script-payloads")
    )
    admin = await sync_to_async(make_user)(superuser=True)
    client = HtmxClient()
    await client.aforce_login(admin)
    discovery = await discover_one(endpoint, refresh=True)
    assert discovery.status == "declared"

    response = await client.post("/agents/evil/send/", {"content": "Go"})
    run_id = re.search(r"/runs/([0-9a-f-]+)/events/", response.content.decode()).group(1)
    stream = await client.get(f"/runs/{run_id}/events/")
    stream = b"".join([c async for c in stream.streaming_content]).decode()
    await settle()
    run = await Run.objects.select_related("conversation__endpoint").aget(pk=run_id)
    assert run.status == Run.Status.COMPLETED, run.error
    pages = {
        "catalogue": "/",
        "card": "/agents/evil/card/",
        "workspace (with the explain panel)": "/agents/evil/",
        "conversation": run.conversation.get_absolute_url(),
        "conversations": "/conversations/",
        "admin list": "/admin/agents_ui/agentendpoint/",
        "admin change": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/",
        "admin declarations": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/",
    }
    seen = {"stream": stream}
    for name, url in pages.items():
        page = await client.get(url)
        assert page.status_code == 200, name
        seen[name] = page.content.decode()
    assert_pages_inert(seen)
    # Shown, as text: the payloads are visible, escaped.
    assert "&lt;script&gt;window.__pwned" in seen["workspace (with the explain panel)"]
    assert "window.__pwned" in seen["conversation"]
    assert "{{ 7*7 }}" in seen["conversation"]  # never evaluated as a template
    # The links in every spelling reached the page, none as an address; so did the activity.
    assert "link 6" in seen["conversation"] and "vbscript:msgbox(1)" in seen["conversation"]
    assert 'data-activity="evil&lt;img src=x onerror=' in seen["conversation"]


# --- Headers and settings -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["/", "/agents/reader/", "/conversations/", "/shared/", "/accounts/login/", "/admin/", "/admin/login/"],
)
def test_every_page_carries_the_security_headers(client, url, record_property):
    record_property("bad_input", f"headers: {url}")
    make_endpoint(slug="reader", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2)
    if "login" not in url:
        client.force_login(make_user(superuser=True))
    response = client.get(url)
    assert response.status_code == 200
    csp = response["Content-Security-Policy"]
    directives = dict(
        (part.split()[0], part.split()[1:]) for part in (p.strip() for p in csp.split(";")) if part
    )
    assert any(v.startswith("'nonce-") for v in directives["script-src"])
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    assert directives["frame-ancestors"] == ["'none'"]
    assert directives["object-src"] == ["'none'"]
    assert directives["default-src"] == ["'self'"]
    assert response["X-Frame-Options"] == "DENY"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Content-Type-Options"] == "nosniff"
    nonce = directives["script-src"][-1].removeprefix("'nonce-").rstrip("'")
    html = response.content.decode()
    # Every script in the page is an allowed file or carries the nonce; no inline handlers.
    for tag in re.findall(r"<script\b[^>]*>", html):
        assert f'nonce="{nonce}"' in tag, tag
    assert not re.search(r"\son[a-z]+=", html), "an inline event handler would need unsafe-inline"


def test_cookies_are_secure_and_https_enforced_outside_development(record_property):
    record_property("bad_input", "settings: secure cookies outside development")
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}}
    env.update(DEBUG="false", SECRET_KEY="s" * 64, ALLOWED_HOSTS="agents.example.com")
    code = (
        "import django, json; django.setup(); from django.conf import settings as s; print(json.dumps({"
        "'session': s.SESSION_COOKIE_SECURE, 'csrf': s.CSRF_COOKIE_SECURE, "
        "'httponly': s.SESSION_COOKIE_HTTPONLY, 'ssl': s.SECURE_SSL_REDIRECT, "
        "'hsts': s.SECURE_HSTS_SECONDS, 'private': s.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES, "
        "'referrer': s.SECURE_REFERRER_POLICY, 'debug': s.DEBUG}))"
    )
    env["DJANGO_SETTINGS_MODULE"] = "project.settings"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    assert found == {
        "session": True, "csrf": True, "httponly": True, "ssl": True, "hsts": 31536000,
        "private": False, "referrer": "same-origin", "debug": False,
    }  # fmt: skip

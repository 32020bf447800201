"""Stored script through every surface, over every protocol: a hostile agent (AG-UI, A2A, external)
and a hostile person fill every field they control with the payloads of tests/support/fault_agent.py,
and every page where any of it lands, for the owner, for another person reading a shared link and
for the admin, holds nothing a browser would run, open or load (tests/support/inert.py). Every file
the product hands over goes out as a download: nosniff, attachment, a type from the bytes."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import AgentEndpoint, Conversation, Run, SharedLink, WaitingItem
from tests.a2a.test_a2a_runs import a2a_endpoint
from tests.demo.conftest import PNG_1PX
from tests.factories import make_endpoint, make_user
from tests.support import hostile_external
from tests.support.a2a_agent import A2ATestAgent, with_payloads
from tests.support.fault_agent import PAYLOADS, SHOWN_AS_TEXT, URL_PAYLOADS, FaultAgentServer, P
from tests.support.htmx import HtmxClient
from tests.support.inert import assert_pages_inert
from tests.support.waiting import eventually, settle
from tests.test_faults import follow, send

pytestmark = pytest.mark.django_db(transaction=True)

PROTOCOLS = ["agui", "a2a", "external"]
# What the person types: every payload, as a message, a conversation name and an edit.
HOSTILE_MESSAGE = f"Hello {P}"
HOSTILE_TITLE = PAYLOADS[1][:100]


@dataclass
class Hostile:
    protocol: str
    endpoint: AgentEndpoint
    ask: str  # the message that makes the agent send its payloads
    fail: str | None  # a message that makes it fail with an error sentence of markup, on its endpoint
    fail_endpoint: AgentEndpoint | None = None


@pytest.fixture(scope="module")
def fault_agent():
    server = FaultAgentServer().start()
    yield server
    server.stop()


@pytest.fixture
async def hostile(request, live_url, fault_agent) -> AsyncIterator[Hostile]:
    protocol = request.param
    if protocol == "agui":
        endpoint = await sync_to_async(make_endpoint)(
            slug="evil", name="Evil", base_url=fault_agent.url_for("script-payloads")
        )
        failing = await sync_to_async(make_endpoint)(
            slug="evil-error", name="Evil error", base_url=fault_agent.url_for("error-payloads")
        )
        yield Hostile(protocol, endpoint, "Go", "Fail", failing)
    elif protocol == "a2a":
        agent = A2ATestAgent(card_edit=with_payloads).start()
        try:
            endpoint = await sync_to_async(a2a_endpoint)(agent.url)
            yield Hostile(protocol, endpoint, "payloads", "fail-payloads", endpoint)
        finally:
            agent.stop()
    else:
        serving = hostile_external.serving(live_url)
        endpoint = await sync_to_async(serving.__enter__)()
        try:
            yield Hostile(protocol, endpoint, "Go", "fail", endpoint)
        finally:
            serving.__exit__(None, None, None)


async def signed_in(user) -> HtmxClient:
    client = HtmxClient()
    await client.aforce_login(user)
    return client


async def pages_of(client: HtmxClient, urls: dict[str, str]) -> dict[str, str]:
    seen = {}
    for name, url in urls.items():
        response = await client.get(url)
        assert response.status_code == 200, (name, url, response.status_code)
        seen[name] = response.content.decode()
    return seen


def offered(prefix: str, page: str) -> list[str]:
    """The download links of a page under `prefix`."""
    return sorted(set(re.findall(rf'href="({re.escape(prefix)}[^"]+)"', page)))


async def run_to_end(client: HtmxClient, slug: str, text: str, conversation: str = "") -> tuple[Run, str]:
    if conversation:
        response = await client.post(f"/agents/{slug}/send/", {"content": text, "conversation": conversation})
        run_id = re.search(r'sse-connect="/runs/([0-9a-f-]+)/events/"', response.content.decode()).group(1)
    else:
        run_id = await send(client, slug, text)
    stream = await follow(client, run_id, limit=30)
    await settle(20)
    return await Run.objects.select_related("conversation__endpoint").aget(pk=run_id), stream


# The types a download may carry: none is drawn as markup by a browser.
DOWNLOAD_TYPES = ("application/octet-stream", "text/plain", "text/markdown", "application/json")


def assert_download(response, name: str) -> str:
    """A file the product hands over: saved, never drawn, its type from its bytes."""
    assert response.status_code == 200, (name, response.status_code)
    assert response["X-Content-Type-Options"] == "nosniff", name
    assert response["Content-Disposition"].startswith("attachment"), name
    assert "sandbox" in response["Content-Security-Policy"], name
    kind = response["Content-Type"].split(";")[0]
    assert kind in DOWNLOAD_TYPES, (name, kind)
    return kind


@pytest.mark.parametrize("hostile", PROTOCOLS, indirect=True)
async def test_nothing_a_hostile_agent_or_person_writes_runs_on_any_page(hostile: Hostile):
    owner = await sync_to_async(make_user)("owner", perms=["approve_actions", "view_reasoning"])
    reader = await sync_to_async(make_user)("reader", everyday=True)
    admin = await sync_to_async(make_user)("admin", superuser=True)
    person, other, staff = await signed_in(owner), await signed_in(reader), await signed_in(admin)
    endpoint = hostile.endpoint
    assert (await discover_one(endpoint, refresh=True)).status == "declared"

    # The agent's payloads, in answer to the person's own.
    first, first_stream = await run_to_end(person, endpoint.slug, f"{hostile.ask} {HOSTILE_MESSAGE}")
    conversation = first.conversation
    assert first.status in (Run.Status.COMPLETED, Run.Status.INTERRUPTED), first.error
    renamed = await person.post(f"/conversations/{conversation.pk}/rename/", {"title": HOSTILE_TITLE})
    assert renamed.status_code in (200, 302)
    assert (await Conversation.objects.aget(pk=conversation.pk)).title == HOSTILE_TITLE

    # An error sentence of markup.
    fail_endpoint = hostile.fail_endpoint or endpoint
    if fail_endpoint.pk != endpoint.pk:
        assert (await discover_one(fail_endpoint, refresh=True)).status == "declared"
    failed, failed_stream = await run_to_end(person, fail_endpoint.slug, f"{hostile.fail} {PAYLOADS[0]}")
    assert failed.status == Run.Status.FAILED and failed.error

    waiting: dict[str, str] = {}
    if hostile.protocol == "external":  # an approval whose input is markup, waiting in the inbox
        response = await person.post(
            f"/agents/{endpoint.slug}/send/", {"content": "A refund", "conversation": str(conversation.pk)}
        )
        assert response.status_code == 200
        await eventually(lambda: WaitingItem.objects.filter(user=owner).aexists(), what="the approval")
        waiting = await pages_of(
            person, {"inbox (waiting)": "/inbox/", "conversation (waiting)": conversation.get_absolute_url()}
        )
        assert "__pwned" in waiting["inbox (waiting)"] and "__pwned" in waiting["conversation (waiting)"]
        asking = await Run.objects.filter(conversation=conversation).alatest("created_at")
        await person.post(f"/runs/{asking.pk}/stop/")
        await settle(20)

    share = await person.post(f"/conversations/{conversation.pk}/share/", {"audience": "signed-in"})
    assert share.status_code == 302, share.content.decode()[:1000]
    link = await SharedLink.objects.alatest("created_at")

    slug = endpoint.slug
    seen = {"live stream": first_stream, "failed stream": failed_stream, **waiting}
    seen |= await pages_of(
        person,
        {
            "catalogue": "/",
            "card": f"/agents/{slug}/card/",
            "workspace": f"/agents/{slug}/",
            "conversation (after reload)": conversation.get_absolute_url(),
            "failed conversation": failed.conversation.get_absolute_url(),
            "conversations": "/conversations/",
            "side list": f"/agents/{slug}/conversations/",
            "inbox": "/inbox/",
            "shared links": "/shared/",
            "compare": "/compare/",
        },
    )
    seen |= await pages_of(other, {"shared page (another person)": link.get_absolute_url()})
    seen |= await pages_of(
        staff,
        {
            "admin endpoints": "/admin/agents_ui/agentendpoint/",
            "admin endpoint": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/",
            "admin declarations": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/",
            "admin runs": "/admin/agents_ui/run/",
            "admin run": f"/admin/agents_ui/run/{first.pk}/change/",
            "admin failed run": f"/admin/agents_ui/run/{failed.pk}/change/",
            "staff preview": f"/agents/{slug}/?preview=1",
        },
    )
    assert_pages_inert(seen)
    # Shown, as text, where it landed: the payloads are visible, escaped, not dropped.
    shown = ("catalogue", "conversation (after reload)", "shared page (another person)", "admin declarations")
    for name in (*shown, "failed conversation", "admin failed run"):
        assert SHOWN_AS_TEXT in seen[name], name
    # Its A2UI surface (AG-UI's activity, A2A's DataPart, the external `a2ui` module) is drawn, its
    # script addresses refused, live, after a reload and to a reader of the shared page.
    for name in ("conversation (after reload)", "shared page (another person)"):
        assert "data-a2ui-refused" in seen[name], name
    assert "a2ui" in first_stream
    assert "onerror" in seen["conversations"]  # the person's own name for it, as text

    # Every file of the run goes out as a download, whatever the agent named or labelled it.
    files = offered(rf"/runs/{first.pk}/artifacts/", seen["conversation (after reload)"])
    kinds = [assert_download(await person.get(url.replace("&amp;", "&")), url) for url in files]
    shared_files = offered(rf"/s/{link.token}/runs/", seen["shared page (another person)"])
    for url in shared_files:
        assert_download(await other.get(url.replace("&amp;", "&")), url)
    if hostile.protocol in ("a2a", "external"):  # its .html and .svg files, labelled so, are bytes
        assert kinds.count("application/octet-stream") >= 2, (files, kinds)
    for extension in ("md", "json"):
        assert_download(await person.get(f"/conversations/{conversation.pk}/export.{extension}"), extension)


@pytest.mark.parametrize("hostile", ["agui"], indirect=True)
async def test_an_edit_of_markup_is_text_to_the_person_and_to_the_admin(hostile: Hostile):
    owner = await sync_to_async(make_user)("owner", perms=["view_reasoning"])
    person, staff = await signed_in(owner), await signed_in(await sync_to_async(make_user)(superuser=True))
    first, _ = await run_to_end(person, hostile.endpoint.slug, "Go")
    edited = await person.post(f"/runs/{first.pk}/edit/", {"content": PAYLOADS[2] + PAYLOADS[8]})
    assert edited.status_code in (200, 302)
    await settle(20)
    latest = await Run.objects.exclude(pk=first.pk).alatest("created_at")
    seen = await pages_of(person, {"conversation": first.conversation.get_absolute_url()})
    seen |= await pages_of(staff, {"admin run": f"/admin/agents_ui/run/{latest.pk}/change/"})
    assert_pages_inert(seen)
    assert "&lt;svg onload" in seen["conversation"]


def test_the_protocols_named_are_every_protocol_the_product_speaks():
    assert sorted(PROTOCOLS) == sorted(value for value, _ in AgentEndpoint.Protocol.choices)


async def test_arguments_a_person_edits_into_markup_are_text_to_them_a_reader_and_the_admin(fault_agent):
    endpoint = await sync_to_async(make_endpoint)(
        slug="asks", name="Asks", base_url=fault_agent.url_for("long-lines")
    )
    owner = await sync_to_async(make_user)("owner", perms=["approve_actions", "view_reasoning"])
    person = await signed_in(owner)
    staff = await signed_in(await sync_to_async(make_user)(superuser=True))
    run, _ = await run_to_end(person, endpoint.slug, "Send it")
    assert run.status == Run.Status.INTERRUPTED, run.error
    edited = {"to": P, "link": URL_PAYLOADS[0]}
    decided = await person.post(
        f"/runs/{run.pk}/decide/", {"decision-ask-1": "edit", "edited-ask-1": json.dumps(edited)}
    )
    assert decided.status_code in (200, 302), decided.content.decode()[:500]
    await settle(20)
    share = await person.post(f"/conversations/{run.conversation_id}/share/", {"audience": "signed-in"})
    assert share.status_code == 302
    link = await SharedLink.objects.alatest("created_at")
    seen = await pages_of(person, {"conversation": run.conversation.get_absolute_url(), "inbox": "/inbox/"})
    seen |= await pages_of(await signed_in(await sync_to_async(make_user)("reader", everyday=True)),
                           {"shared page": link.get_absolute_url()})  # fmt: skip
    seen |= await pages_of(staff, {"admin run": f"/admin/agents_ui/run/{run.pk}/change/"})
    assert_pages_inert(seen)
    assert "window.__pwned" in seen["conversation"] and "window.__pwned" in seen["shared page"]


@pytest.mark.parametrize("hostile", ["external"], indirect=True)
async def test_a_file_name_of_markup_is_text_to_the_person_a_reader_and_the_admin(hostile: Hostile):
    owner = await sync_to_async(make_user)("owner", perms=["upload_files"])
    person = await signed_in(owner)
    staff = await signed_in(await sync_to_async(make_user)(superuser=True))
    assert (await discover_one(hostile.endpoint, refresh=True)).status == "declared"
    name = "<img src=x onerror=window.__pwned='upload'>.png"
    upload = SimpleUploadedFile(name, PNG_1PX, "image/png")
    response = await person.post(
        f"/agents/{hostile.endpoint.slug}/send/", {"content": "Go", "attachment": upload}
    )
    assert response.status_code == 200, response.content.decode()[:500]
    await settle(20)
    run = await Run.objects.select_related("conversation__endpoint").alatest("created_at")
    assert run.status == Run.Status.COMPLETED, run.error
    share = await person.post(f"/conversations/{run.conversation_id}/share/", {"audience": "signed-in"})
    assert share.status_code == 302
    link = await SharedLink.objects.alatest("created_at")
    seen = {"sent": response.content.decode()}
    seen |= await pages_of(person, {"conversation": run.conversation.get_absolute_url()})
    seen |= await pages_of(await signed_in(await sync_to_async(make_user)("reader", everyday=True)),
                           {"shared page": link.get_absolute_url()})  # fmt: skip
    seen |= await pages_of(staff, {"admin run": f"/admin/agents_ui/run/{run.pk}/change/"})
    assert_pages_inert(seen)
    assert "&lt;img src=x onerror=window.__pwned=" in seen["conversation"]


async def test_what_an_agent_asks_in_markup_is_text_in_the_inbox_and_its_count(fault_agent):
    """The titles the inbox shows are the agent's: an approval's tool name, an interrupt's reason and
    message (AG-UI), a task's question (A2A). Each is text on /inbox/ and in the header's count."""
    owner = await sync_to_async(make_user)("owner", perms=["approve_actions"])
    person = await signed_in(owner)
    asking = await sync_to_async(make_endpoint)(
        slug="asks-evil", name="Asks", base_url=fault_agent.url_for("inbox-payloads")
    )
    agent = A2ATestAgent().start()
    try:
        questioning = await sync_to_async(a2a_endpoint)(agent.url)
        interrupted, _ = await run_to_end(person, asking.slug, "Send it")
        assert interrupted.status == Run.Status.INTERRUPTED, interrupted.error
        questioned, _ = await run_to_end(person, questioning.slug, "ask-payloads")
        assert questioned.status == Run.Status.COMPLETED, questioned.error  # its task waits on input
    finally:
        agent.stop()
    titles = [item.title async for item in WaitingItem.objects.filter(user=owner)]
    assert len(titles) == 3, titles
    assert all("__pwned" in title for title in titles), titles
    seen = await pages_of(
        person, {"inbox": "/inbox/", "catalogue (the header's count)": "/", "count": "/inbox/count/"}
    )
    assert_pages_inert(seen)
    inbox = seen["inbox"]
    assert "send&lt;img src=x onerror=" in inbox  # the tool's name
    assert "&lt;svg onload=" in inbox  # the interrupt's reason
    assert SHOWN_AS_TEXT in inbox  # the task's question
    for name in ("catalogue (the header's count)", "count"):
        assert 'data-inbox-count="3"' in seen[name], name

"""A hostile A2A agent: markup, script and script addresses in its card and in every part of its
task reach each page as text, and its files go out as bytes to save, never as a page."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from agents_ui.endpoints.discovery import discover_one
from tests.a2a.test_a2a_runs import a2a_endpoint, finish, turn
from tests.factories import make_user
from tests.support.a2a_agent import A2ATestAgent, with_payloads
from tests.support.inert import assert_pages_inert

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent():
    server = A2ATestAgent(card_edit=with_payloads).start()
    yield server
    server.stop()


async def test_every_field_of_a_hostile_card_and_task_is_text_and_its_files_are_bytes(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    assert (await discover_one(endpoint, refresh=True)).status == "declared"
    run = await finish(await turn(endpoint, "payloads"))
    assert run.status == "completed", run.error

    def check() -> None:
        client = Client()
        client.force_login(make_user(superuser=True))
        conversation = run.conversation
        pages = {
            "catalogue": "/",
            "card": f"/agents/{endpoint.slug}/card/",
            "workspace": f"/agents/{endpoint.slug}/",
            "admin change": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/change/",
            "admin declarations": f"/admin/agents_ui/agentendpoint/{endpoint.pk}/history-of-declarations/",
        }
        seen = {}
        for name, url in pages.items():
            response = client.get(url)
            assert response.status_code == 200, name
            seen[name] = response.content.decode()
        owner = Client()
        owner.force_login(conversation.user)
        seen["conversation"] = owner.get(conversation.get_absolute_url()).content.decode()
        assert_pages_inert(seen)
        assert "&lt;script&gt;window.__pwned" in seen["catalogue"]
        assert "&lt;script&gt;window.__pwned" in seen["conversation"]
        assert "evil.html" in seen["conversation"] and "vbscript:msgbox(1)" in seen["conversation"]
        for index in (0, 1):
            download = owner.get(f"/runs/{run.pk}/artifacts/evil-files/{index}/")
            assert download.status_code == 200
            assert download["Content-Type"] == "application/octet-stream"
            assert download["Content-Disposition"].startswith("attachment;")
            assert download["X-Content-Type-Options"] == "nosniff"
        # A file the agent only points to is never fetched for the person.
        assert owner.get(f"/runs/{run.pk}/artifacts/evil-files/2/").status_code == 404

    await sync_to_async(check)()

"""A file an agent sent inline, downloaded through a shared link by its audience (and nobody else),
with the headers of every download; a file that stays with the agent is not fetched for a reader."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import Attachment, Message, SharedLink
from tests.a2a.test_a2a_runs import a2a_endpoint, finish, turn
from tests.factories import make_user
from tests.support.a2a_agent import A2ATestAgent

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent():
    server = A2ATestAgent().start()
    yield server
    server.stop()


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def test_a_shared_run_s_file_downloads_for_the_audience_only(agent):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    run = await turn(endpoint, "see attached")

    def attach() -> None:  # the agent answers a file with a file of its own
        message = Message.objects.get(pk=run.request["message_id"])
        Attachment.objects.create(
            message=message, name="list.csv", mime_type="text/csv", size=4, data=b"a,b\n"
        )

    await sync_to_async(attach)()
    run = await finish(run)

    def check() -> None:
        owner = run.conversation.user
        reader = signed_in(make_user("reader"))
        response = signed_in(owner).post(
            f"/conversations/{run.conversation.pk}/share/", {"audience": "people", "people": "reader"}
        )
        assert response.status_code == 302
        link = SharedLink.objects.get()
        page = reader.get(link.get_absolute_url()).content.decode()
        address = f"/s/{link.token}/runs/{run.pk}/files/files/0/"
        assert f'href="{address}"' in page and f"/runs/{run.pk}/artifacts/" not in page
        download = reader.get(address)
        assert download.status_code == 200 and download.content == b"id,name\n1,echo\n"
        assert download["Content-Type"] == "application/octet-stream"
        assert download["Content-Disposition"].startswith("attachment;")
        assert download["X-Content-Type-Options"] == "nosniff"
        assert download["Content-Security-Policy"] == "sandbox; default-src 'none'"
        assert reader.get(f"/s/{link.token}/runs/{run.pk}/files/files/9/").status_code == 404
        assert signed_in(make_user()).get(address).status_code == 404  # not in the audience
        SharedLink.objects.filter(pk=link.pk).update(revoked_at="2026-01-01T00:00Z")
        assert reader.get(address).status_code == 410

    await sync_to_async(check)()

"""The server checks a file against the chosen skill's input modes, as the file picker does: the skill
must be one the agent's card names, and its modes replace the card's default ones."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import Attachment
from tests.a2a.test_a2a_runs import a2a_endpoint
from tests.e2e.test_uploads import pdf_bytes
from tests.factories import make_user
from tests.support.a2a_agent import A2ATestAgent, with_document_intake
from tests.views.test_conversation import settle

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def agent():
    server = A2ATestAgent(card_edit=with_document_intake).start()
    yield server
    server.stop()


async def send(client, **fields) -> str:
    fields.setdefault("attachment", SimpleUploadedFile("form.pdf", pdf_bytes(1), "application/pdf"))
    url = reverse("send-message", kwargs={"slug": "echo"})
    response = await sync_to_async(client.post)(url, {"content": "Here is the form", **fields})
    return response.content.decode()


async def test_the_chosen_skills_input_modes_rule_the_upload(agent, client):
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    await discover_one(endpoint, refresh=True)
    await sync_to_async(client.force_login)(await sync_to_async(make_user)(perms=["upload_files"]))

    assert "“form.pdf” is not a type this agent accepts. It takes: text/plain." in await send(client)
    said = await send(client, skill="ask")
    assert "“form.pdf” is not a type the skill Ask takes. It takes: text/plain." in said
    assert "Choose one of the skills this agent names." in await send(client, skill="forged")
    assert not await Attachment.objects.aexists()

    said = await send(client, skill="intake")
    await settle()  # the run it started ends here, not in a later test's event loop
    assert "is not a type" not in said
    attachment = await Attachment.objects.aget()
    assert (attachment.name, attachment.mime_type) == ("form.pdf", "application/pdf")

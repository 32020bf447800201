"""A skill's input modes rule its files on both sides: choosing an A2A agent's "Document intake" skill
(which takes PDFs, where the agent by default takes plain text) makes the file picker take a PDF, and
the server takes the same PDF (tests/a2a/test_skill_uploads.py checks the server's refusals)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache
from playwright.sync_api import Page, expect

from agents_ui.models import AgentEndpoint, Attachment
from tests.e2e.test_runs import TIMEOUT, last_run, open_agent, send, wait_run
from tests.e2e.test_uploads import attach, pdf_bytes
from tests.factories import make_endpoint
from tests.support.a2a_agent import A2ATestAgent, with_document_intake

pytestmark = pytest.mark.e2e


@pytest.fixture
def intake_agent() -> Iterator[A2ATestAgent]:
    server = A2ATestAgent(card_edit=with_document_intake).start()
    yield server
    server.stop()


def test_a_pdf_goes_with_the_skill_that_takes_pdfs(
    page: Page, live_url: str, intake_agent: A2ATestAgent, signed_in, screenshot
):
    cache.clear()
    make_endpoint(
        slug="intake", name="Intake", protocol=AgentEndpoint.Protocol.A2A, base_url=intake_agent.url
    )
    signed_in()
    open_agent(page, live_url, "intake")
    picker = page.locator("#attachment")
    expect(picker).to_have_attribute("accept", "text/plain")

    # Without a skill the agent's own modes apply: the picker refuses the PDF before anything is sent.
    attach(page, "form.pdf", "application/pdf", pdf_bytes(1))
    expect(page.locator("#composer-errors")).to_contain_text("“form.pdf” is not a type this agent accepts")

    # The chosen skill's modes: the picker takes PDFs and so does the server.
    page.select_option("[data-skill-select]", "intake")
    expect(picker).to_have_attribute("accept", "application/pdf")
    attach(page, "form.pdf", "application/pdf", pdf_bytes(1))
    send(page, "Here is the form")
    wait_run(page)
    expect(page.locator("#composer-errors")).to_be_empty()
    expect(last_run(page)).to_contain_text("form.pdf", timeout=TIMEOUT)
    assert Attachment.objects.filter(name="form.pdf", mime_type="application/pdf").count() == 1
    screenshot("skill-upload-pdf")

    # A skill that names other modes: the picker follows it again.
    page.select_option("[data-skill-select]", "ask")
    expect(picker).to_have_attribute("accept", "text/plain")

"""Uploads in the browser: what an agent's policy accepts reaches it; the rest is refused, early.

The browser refuses what it can tell is wrong (size, declared type) before anything is sent; the
server checks the bytes, so a mislabelled file is refused too. Either way the typed message stays.
"""

from __future__ import annotations

import base64

import pytest
from playwright.sync_api import Page, expect

from agents_ui.models import Attachment, Message, Run
from tests.e2e.test_runs import demo, last_run, open_agent, wait_run

pytestmark = pytest.mark.e2e
__all__ = ["demo"]  # the fixture, imported so pytest finds it here

PNG_1PX = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)
TYPED = "Here is the file you asked for, please check it."


def pdf_bytes(pages: int) -> bytes:
    """A tiny but valid PDF with `pages` pages."""
    objects = ["<< /Type /Catalog /Pages 2 0 R >>"]
    kids = " ".join(f"{3 + i} 0 R" for i in range(pages))
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>")
    objects += ["<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>"] * pages
    body = b"%PDF-1.4\n"
    offsets = []
    for number, obj in enumerate(objects, start=1):
        offsets.append(len(body))
        body += f"{number} 0 obj\n{obj}\nendobj\n".encode()
    xref = len(body)
    body += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    body += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode()
    body += f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return body


def attach(page: Page, name: str, mime_type: str, data: bytes) -> None:
    page.set_input_files("#attachment", files=[{"name": name, "mimeType": mime_type, "buffer": data}])


def watch_sends(page: Page) -> list[str]:
    sent: list[str] = []
    page.on("request", lambda request: sent.append(request.url) if "/send/" in request.url else None)
    return sent


def send_typed(page: Page) -> None:
    page.locator("[data-composer] button.button-primary").click()


# --- Accepted files reach the agent -------------------------------------------------------------------


def test_document_reviewer_reads_an_accepted_pdf_and_png(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "document-reviewer")
    page.fill("#message", TYPED)
    attach(page, "board-report.pdf", "application/pdf", pdf_bytes(3))
    expect(page.locator("[data-file-list]")).to_contain_text("Attached: board-report.pdf")
    send_typed(page)
    wait_run(page)
    answer = last_run(page).locator(".msg-assistant")
    expect(answer).to_contain_text("board-report.pdf: application/pdf")
    expect(answer).to_contain_text("3 pages")
    expect(page.locator(".msg-user .attachments")).to_contain_text("board-report.pdf")
    expect(page.locator("#message")).to_have_value("")
    expect(page.locator("[data-file-list]")).to_have_text("")

    attach(page, "chart.png", "image/png", PNG_1PX)
    page.fill("#message", "And this chart?")
    send_typed(page)
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=15_000)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text("chart.png: image/png")
    assert sorted(Attachment.objects.values_list("name", "mime_type")) == [
        ("board-report.pdf", "application/pdf"),
        ("chart.png", "image/png"),
    ]


def test_support_desk_receives_an_accepted_pdf_and_png(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "support-desk")
    expect(page.locator("[data-upload-limits]")).to_contain_text("up to 5")
    page.fill("#message", TYPED)
    attach(page, "invoice.pdf", "application/pdf", pdf_bytes(1))
    send_typed(page)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "I have your file: invoice.pdf (application/pdf"
    )

    page.fill("#message", "And the photo of the damage")
    attach(page, "damage.png", "image/png", PNG_1PX)
    send_typed(page)
    expect(page.locator("#transcript section.run")).to_have_count(2, timeout=15_000)
    wait_run(page)
    expect(last_run(page).locator(".msg-assistant")).to_contain_text(
        "I have your file: damage.png (image/png"
    )
    assert Attachment.objects.exclude(remote_id="").count() == 2  # uploaded to the agent


# --- Refused in the browser: too large, wrong type -----------------------------------------------------


@pytest.mark.parametrize(
    ("slug", "size"),
    [("support-desk", 5 * 1024 * 1024 + 1), ("document-reviewer", 20 * 1024 * 1024 + 1)],
)
def test_a_too_large_file_is_refused_before_sending(
    page: Page, demo: str, signed_in, screenshot, slug: str, size: int
):
    signed_in()
    open_agent(page, demo, slug)
    sent = watch_sends(page)
    page.fill("#message", TYPED)
    attach(page, "huge.pdf", "application/pdf", b"%PDF-1.4\n" + b"0" * (size - 9))
    expect(page.locator("#composer-errors")).to_contain_text("“huge.pdf” is")
    expect(page.locator("#composer-errors")).to_contain_text("over this agent's limit")
    screenshot(f"upload-refused-too-large-{slug}")
    send_typed(page)  # the file was dropped: only the message goes
    wait_run(page)
    assert not Attachment.objects.exists()
    assert len(sent) == 1


@pytest.mark.parametrize("slug", ["support-desk", "document-reviewer"])
def test_a_file_of_the_wrong_type_is_refused_before_sending(page: Page, demo: str, signed_in, slug: str):
    signed_in()
    open_agent(page, demo, slug)
    sent = watch_sends(page)
    page.fill("#message", TYPED)
    attach(page, "notes.txt", "text/plain", b"just some notes\n")
    expect(page.locator("#composer-errors")).to_contain_text("“notes.txt” is not a type this agent accepts")
    expect(page.locator("#message")).to_have_value(TYPED)
    expect(page.locator("[data-file-list]")).to_have_text("")
    assert page.eval_on_selector("#attachment", "input => input.files.length") == 0
    assert sent == []


# --- Refused by the server: the bytes are not what the label says -------------------------------------


@pytest.mark.parametrize("slug", ["support-desk", "document-reviewer"])
def test_a_mislabelled_file_is_refused_by_the_server(page: Page, demo: str, signed_in, screenshot, slug: str):
    signed_in()
    open_agent(page, demo, slug)
    page.fill("#message", TYPED)
    # Labelled image/png and named .png, so the browser's check lets it through; the bytes are text.
    attach(page, "photo.png", "image/png", b"this is not a picture at all\n")
    expect(page.locator("#composer-errors")).to_be_empty()
    send_typed(page)
    error = page.locator("#composer-errors")
    expect(error).to_contain_text("“photo.png” is not a type this agent accepts")
    expect(error).to_contain_text("its content is text/plain, although it is labelled image/png")
    expect(page.locator("#message")).to_have_value(TYPED)
    screenshot(f"upload-refused-mislabelled-{slug}")
    assert not Message.objects.exists()
    assert not Run.objects.exists()


def test_the_server_refuses_a_too_large_file_when_the_browser_check_is_bypassed(
    page: Page, demo: str, signed_in
):
    signed_in()
    open_agent(page, demo, "support-desk")
    page.eval_on_selector("#attachment", "input => { input.removeAttribute('data-max-bytes'); }")
    page.fill("#message", TYPED)
    attach(page, "big.pdf", "application/pdf", b"%PDF-1.4\n" + b"0" * (5 * 1024 * 1024))
    send_typed(page)
    expect(page.locator("#composer-errors")).to_contain_text("“big.pdf” is too large")
    expect(page.locator("#message")).to_have_value(TYPED)
    assert not Message.objects.exists()


def test_the_server_refuses_a_wrong_type_when_the_accept_list_is_bypassed(page: Page, demo: str, signed_in):
    signed_in()
    open_agent(page, demo, "support-desk")
    page.eval_on_selector("#attachment", "input => { input.removeAttribute('accept'); }")
    page.fill("#message", TYPED)
    attach(page, "notes.txt", "text/plain", b"just some notes\n")
    send_typed(page)
    expect(page.locator("#composer-errors")).to_contain_text("“notes.txt” is not a type this agent accepts")
    expect(page.locator("#message")).to_have_value(TYPED)
    assert not Message.objects.exists()

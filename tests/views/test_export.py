"""A conversation downloaded as Markdown and as JSON: the documented shape, its files, the headers."""

from __future__ import annotations

import base64
import json

import pytest
from django.test import Client

from agents_ui.display.export import FORMAT, INLINE_FILE_BYTES, export_document, export_markdown
from agents_ui.models import ApprovalRecord, Attachment, Conversation, Run
from agents_ui.runs.snapshots import FrozenTurn
from agents_ui.sdk.transcript import Artifact, ArtifactPart, Transcript
from tests.factories import make_endpoint, make_user
from tests.support.turns import say

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner():
    return make_user("owner", everyday=True)


@pytest.fixture
def thread(owner):
    endpoint = make_endpoint(
        slug="desk", name="Desk", base_url="http://127.0.0.1:9/agent", connect_timeout=0.2
    )
    conversation = Conversation.objects.create(
        user=owner, endpoint=endpoint, title="Refund: order 1042 / ünïcode"
    )
    run = say(conversation, "Where is my parcel?", "It left the depot on **Monday**.", tool="track_parcel")
    Attachment.objects.create(
        message=conversation.messages.get(),
        name="label.pdf",
        mime_type="application/pdf",
        size=4,
        data=b"%PDF",
    )
    ApprovalRecord.objects.create(
        run=run, request_id="ask-1", tool_name="refund", decision="approved_with_edits",
        arguments={"amount": 10}, edited_arguments={"amount": 5}, decided_by=owner,
    )  # fmt: skip
    say(conversation, "Thanks", "You are welcome.")
    return conversation


def test_the_json_export_has_its_documented_shape(owner, thread):
    client = Client()
    client.force_login(owner)
    response = client.get(f"/conversations/{thread.pk}/export.json")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment;") and 'filename="refund-order-1042-unicode-' in disposition
    document = json.loads(response.content)
    assert document["format"] == FORMAT and document["version"] == 1
    assert document["conversation"]["title"] == "Refund: order 1042 / ünïcode"
    assert document["conversation"]["agent"] == {"name": "Desk", "slug": "desk", "protocol": "agui"}
    first, second = document["runs"]
    assert first["status"] == "completed" and first["kind"] == "message"
    assert first["message"]["content"] == "Where is my parcel?"
    assert first["message"]["attachments"] == [
        {"name": "label.pdf", "media_type": "application/pdf", "size": 4, "content_base64": "JVBERg=="}
    ]
    assert [a["text"] for a in first["answers"]] == ["It left the depot on **Monday**."]
    call = first["tool_calls"][0]
    assert (call["name"], call["arguments"], call["result"]) == ("track_parcel", {"q": 1}, "42")
    assert (call["status"], call["error"]) == ("done", None)
    assert first["approvals"][0]["decision"] == "approved_with_edits"
    assert first["approvals"][0]["edited_arguments"] == {"amount": 5}
    assert first["approvals"][0]["decided_by"] == "owner"
    assert first["reasoning"] == []  # the owner may see reasoning: the key is there
    assert second["message"]["content"] == "Thanks"


def test_the_markdown_export_reads_as_the_conversation(owner, thread):
    client = Client()
    client.force_login(owner)
    response = client.get(f"/conversations/{thread.pk}/export.md")
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    assert (
        response["Content-Disposition"].startswith("attachment;")
        and '.md"' in response["Content-Disposition"]
    )
    text = response.content.decode()
    assert text.startswith("# Refund: order 1042 / ünïcode\n")
    assert "With Desk" in text
    assert "**You**" in text and "Where is my parcel?" in text
    assert "**Desk**\n\nIt left the depot on **Monday**." in text
    assert "- Tool `track_parcel`: done" in text
    assert "- Approval for `refund`: approved with edits by owner" in text
    assert "- Attached: label.pdf (application/pdf, 4\xa0bytes)" in text
    assert text.index("Where is my parcel?") < text.index("Thanks") < text.index("You are welcome.")
    assert "&lt;" not in text and "&amp;" not in text  # Markdown, not HTML-escaped text


def test_a_person_without_the_reasoning_permission_gets_no_reasoning(thread):
    thread.user.groups.clear()
    client = Client()
    client.force_login(thread.user)
    document = json.loads(client.get(f"/conversations/{thread.pk}/export.json").content)
    assert all("reasoning" not in run for run in document["runs"])


def test_artifacts_keep_their_text_and_small_files_their_bytes(owner, thread):
    run = thread.runs.first()
    transcript = Transcript()
    transcript.artifacts["report"] = Artifact(
        id="report", name="Report", complete=True,
        parts=[
            ArtifactPart(kind="text", text="Total: 3 parcels"),
            ArtifactPart(kind="file", media_type="image/png", filename="chart.png", raw=b"\x89PNG"),
            ArtifactPart(kind="file", media_type="application/zip", raw=b"0" * (INLINE_FILE_BYTES + 1)),
            ArtifactPart(kind="data", data={"rows": 3}),
        ],
    )  # fmt: skip
    transcript.artifacts["kept"] = Artifact(
        id="kept", name="Invoice", remote=True, media_type="text/csv", size=120
    )
    document = export_document(thread, [FrozenTurn(run, transcript, None)], {}, with_reasoning=False)
    report, kept = document["runs"][0]["artifacts"]
    text, small, large, data = report["parts"]
    assert text == {"kind": "text", "text": "Total: 3 parcels"}
    assert base64.b64decode(small["content_base64"]) == b"\x89PNG" and small["filename"] == "chart.png"
    assert large["content_base64"] is None and large["omitted"] == "larger than 1024 KiB"
    assert large["size"] == INLINE_FILE_BYTES + 1
    assert data == {"kind": "data", "data": {"rows": 3}}
    assert kept == {
        "id": "kept", "name": "Invoice", "description": "", "remote": True, "media_type": "text/csv",
        "size": 120, "parts": [],
    }  # fmt: skip
    markdown = export_markdown(document)
    assert "- Artifact: Report" in markdown and "- Artifact: Invoice (text/csv, 120\xa0bytes)" in markdown


def test_a_turn_that_is_not_finished_is_not_exported(owner, thread):
    say(thread, "Still going?", "Half", status=Run.Status.RUNNING)
    client = Client()
    client.force_login(owner)
    document = json.loads(client.get(f"/conversations/{thread.pk}/export.json").content)
    assert [run["message"]["content"] for run in document["runs"]] == ["Where is my parcel?", "Thanks"]

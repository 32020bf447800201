"""The Document Reviewer: PDFs and images as inline parts, checked on their bytes; reasoning not streamed."""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import math
from collections.abc import AsyncIterator
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

import filetype
from ag_ui.core import (
    AgentCapabilities,
    BaseEvent,
    DataSource,
    DocumentPart,
    ImagePart,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    OutputCapabilities,
    ReasoningCapabilities,
    TransportCapabilities,
    UrlSource,
)
from pypdf import PdfReader

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, last_user_message, reasoning, text_message
from agents_ui.demo.gate import MAX_BODY_BYTES
from agents_ui.demo.replies import human_size, topic_of

DOCUMENT_MAX_BYTES = 10 * 1024 * 1024
DOCUMENT_MIME_TYPES = ["application/pdf", "image/png", "image/jpeg", "image/webp", "image/gif"]


@dataclass
class ReceivedFile:
    name: str
    mime_type: str
    size: int | None = None
    pages: int | None = None
    note: str = ""


def pdf_page_count(data: bytes) -> int | None:
    """The number of pages a PDF reader finds, or None when the PDF cannot be read.

    Read with a PDF library, never by looking for page objects in the bytes: most PDFs keep their
    page tree in compressed object streams, where no `/Type /Page` is to be seen.
    """
    try:
        return len(PdfReader(io.BytesIO(data)).pages)
    except Exception:  # a damaged or hostile file may fail anywhere in the parser: it is unreadable
        return None


class DocumentReviewer(AgUiDemoAgent):
    slug = "document-reviewer"
    name = "Document Reviewer"
    description = (
        "Reviews the PDFs and images you attach: says what it received (names, types, sizes, PDF page "
        "counts) and what it would check next."
    )
    version = "0.9.4"
    # Room for one file at the limit, base64-encoded inline, beside the conversation.
    max_input_bytes = 4 * math.ceil(DOCUMENT_MAX_BYTES / 3) + MAX_BODY_BYTES

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            multimodal=MultimodalCapabilities(
                input=MultimodalInputCapabilities(image=True, pdf=True, audio=False, video=False, file=False),
                output=MultimodalOutputCapabilities(image=False, audio=False),
            ),
            reasoning=ReasoningCapabilities(supported=True, streaming=False),
            output=OutputCapabilities(supported_mime_types=["text/markdown"]),
            # AG-UI has no field for a size limit: declared here so a client can enforce it up front.
            custom={"input": {"maxBytes": DOCUMENT_MAX_BYTES, "mimeTypes": DOCUMENT_MIME_TYPES}},
        )

    def _inspect(self, index: int, part: ImagePart | DocumentPart) -> ReceivedFile:
        metadata = part.metadata if isinstance(part.metadata, dict) else {}
        source = part.source
        if isinstance(source, DataSource):
            name = str(metadata.get("filename") or metadata.get("name") or f"attachment-{index}")
            try:
                data = base64.b64decode(source.value, validate=True)
            except (binascii.Error, ValueError):
                return ReceivedFile(name, source.mime_type, note="its data is not valid base64")
            sniffed = filetype.guess_mime(data) or source.mime_type
            received = ReceivedFile(name, sniffed, size=len(data))
            if sniffed != source.mime_type:
                received.note = f"labelled {source.mime_type} but the bytes are {sniffed}"
            if len(data) > DOCUMENT_MAX_BYTES:
                received.note = f"over my {human_size(DOCUMENT_MAX_BYTES)} limit, so I did not read it"
            elif sniffed == "application/pdf":
                received.pages = pdf_page_count(data)
                if received.pages is None:
                    received.note = "I could not read its pages: the PDF looks damaged"
            return received
        if isinstance(source, UrlSource):
            name = str(metadata.get("filename") or unquote(urlsplit(source.value).path.rsplit("/", 1)[-1]))
            # Never fetched: a demo agent must not become a way to make the server call arbitrary URLs.
            return ReceivedFile(name or f"attachment-{index}", source.mime_type or "unknown", note="by URL")
        return ReceivedFile(
            f"attachment-{index}", source.mime_type or "unknown", note="a provider file handle I cannot open"
        )

    def _inspect_all(self, media: list[ImagePart | DocumentPart]) -> list[ReceivedFile]:
        return [self._inspect(index, part) for index, part in enumerate(media, start=1)]

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        message = last_user_message(ctx.input)
        parts = [] if message is None or isinstance(message.content, str) else message.content
        media = [part for part in parts if isinstance(part, (ImagePart, DocumentPart))]
        others = [part.type for part in parts if part.type not in ("text", "image", "document")]
        # Reading PDFs is CPU work: off the event loop, so other runs keep streaming meanwhile.
        files = await asyncio.to_thread(self._inspect_all, media)

        if not files:
            thought = "No attachment in this message: nothing to review yet."
            answer = (
                f"You asked about “{topic_of(ctx.user_text)}”, but I review documents: attach a PDF or an "
                f"image (up to {human_size(DOCUMENT_MAX_BYTES)}) and I will tell you what I see."
            )
        else:
            thought = f"{len(files)} attachment(s). Checked each type on its bytes and read each PDF's pages."
            lines = []
            for received in files:
                details = [received.mime_type]
                if received.size is not None:
                    details.append(human_size(received.size))
                if received.pages is not None:
                    details.append(f"{received.pages} page{'s' if received.pages != 1 else ''}")
                line = f"- **{received.name}**: {', '.join(details)}"
                lines.append(line + (f" ({received.note})" if received.note else ""))
            answer = f"I received {len(files)} file{'s' if len(files) != 1 else ''}:\n" + "\n".join(lines)
            if ctx.user_text.strip():
                answer += f"\n\nAbout your question, “{topic_of(ctx.user_text)}”: the files look complete."
        if others:
            answer += f"\n\nI cannot read {', '.join(sorted(set(others)))} input, so I skipped it."

        # Not streaming: the whole reasoning arrives at once, after the work.
        async for event in reasoning(thought, streaming=False):
            yield event
        async for event in text_message(answer):
            yield event
        ctx.result = {
            "files": [
                {"name": f.name, "mimeType": f.mime_type, "size": f.size, "pages": f.pages} for f in files
            ]
        }

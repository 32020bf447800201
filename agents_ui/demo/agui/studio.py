"""The Sketch Studio: answers with a picture and a short sound, the way AG-UI 1.0 carries media.

An assistant message is text only in AG-UI 1.0, so the media come as the results of its two tools:
each TOOL_CALL_RESULT's content is a list of parts, a text part beside an image part or an audio
part with inline base64 bytes (`source: {type: "data", mimeType, value}`). Both are drawn from the
request's words, the same words always making the same picture and sound, and both are tiny.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
import struct
import zlib
from collections.abc import AsyncIterator

from ag_ui.core import (
    AgentCapabilities,
    AudioPart,
    BaseEvent,
    DataSource,
    ImagePart,
    MultimodalCapabilities,
    MultimodalInputCapabilities,
    MultimodalOutputCapabilities,
    TextPart,
    Tool,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
    ToolsCapabilities,
    TransportCapabilities,
)

from agents_ui.demo.agui.base import AgUiDemoAgent, RunContext, new_id, text_message
from agents_ui.demo.replies import pause, topic_of

PICTURE_SIZE = 48  # pixels a side
SAMPLE_RATE = 8000
CLIP_SECONDS = 0.6

STUDIO_TOOLS = [
    Tool(
        name="draw_picture",
        description="Draw a small picture of a subject.",
        parameters={"type": "object", "properties": {"subject": {"type": "string"}}, "required": ["subject"]},
    ),
    Tool(
        name="play_sound",
        description="Make a short sound for a subject: two notes.",
        parameters={"type": "object", "properties": {"subject": {"type": "string"}}, "required": ["subject"]},
    ),
]


# "Draw a lighthouse" is about a lighthouse.
_ASKING = re.compile(r"^(?:please\s+)?(?:draw|paint|sketch|make|show)(?:\s+me)?\s+", re.I)


def subject_of(text: str) -> str:
    return _ASKING.sub("", topic_of(text, 60)) or "your request"


def _seed(subject: str) -> bytes:
    return hashlib.sha256(subject.strip().lower().encode()).digest()


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def picture_png(subject: str) -> bytes:
    """A PNG of a sun over hills, its colours chosen by the subject's words."""
    seed = _seed(subject)
    sky, sun, hill = seed[0:3], bytes(min(255, 160 + b // 3) for b in seed[3:6]), seed[6:9]
    size = PICTURE_SIZE
    cx, cy, radius = size * (0.25 + seed[9] / 512), size * 0.3, size * 0.14
    rows = bytearray()
    for y in range(size):
        rows.append(0)  # filter: none
        for x in range(size):
            ground = size * 0.7 + math.sin(x / size * math.pi * (1 + seed[10] % 3)) * size * 0.08
            if y > ground:
                rows += hill
            elif (x - cx) ** 2 + (y - cy) ** 2 <= radius**2:
                rows += sun
            else:
                rows += sky
    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)  # 8-bit RGB
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(bytes(rows), 9))
        + _chunk(b"IEND", b"")
    )


def sound_wav(subject: str) -> bytes:
    """A WAV of two soft notes (8-bit mono), their pitches chosen by the subject's words."""
    seed = _seed(subject)
    notes = (220 * 2 ** (seed[11] % 12 / 12), 220 * 2 ** ((seed[11] % 12 + 4 + seed[12] % 4) / 12))
    count = int(SAMPLE_RATE * CLIP_SECONDS)
    half = count // 2
    samples = bytearray()
    for n in range(count):
        note, start = (notes[0], 0) if n < half else (notes[1], half)
        fade = min(1.0, (n - start) / 200, (half - (n - start)) / 400)
        samples.append(128 + int(60 * max(fade, 0.0) * math.sin(2 * math.pi * note * n / SAMPLE_RATE)))
    fmt = struct.pack("<HHIIHH", 1, 1, SAMPLE_RATE, SAMPLE_RATE, 1, 8)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(samples))
    return b"RIFF" + struct.pack("<I", len(body) + len(samples)) + body + bytes(samples)


class Studio(AgUiDemoAgent):
    slug = "studio"
    name = "Sketch Studio"
    description = (
        "Answers with a small picture and a short sound of what you name: images and audio in answers."
    )
    version = "1.0.0"

    def capabilities(self, documentation_url: str) -> AgentCapabilities:
        return AgentCapabilities(
            identity=self.identity(documentation_url),
            transport=TransportCapabilities(streaming=True),
            tools=ToolsCapabilities(
                supported=True, items=STUDIO_TOOLS, parallel_calls=False, client_provided=False
            ),
            multimodal=MultimodalCapabilities(
                input=MultimodalInputCapabilities(
                    image=False, audio=False, video=False, pdf=False, file=False
                ),
                output=MultimodalOutputCapabilities(image=True, audio=True),
            ),
        )

    async def run(self, ctx: RunContext) -> AsyncIterator[BaseEvent]:
        subject = subject_of(ctx.user_text)
        picture = base64.b64encode(picture_png(subject)).decode("ascii")
        sound = base64.b64encode(sound_wav(subject)).decode("ascii")
        results = {
            "draw_picture": [
                TextPart(text=f"A {PICTURE_SIZE} by {PICTURE_SIZE} pixel picture of {subject}."),
                ImagePart(
                    source=DataSource(value=picture, mime_type="image/png"),
                    metadata={"alt": f"A sun over hills, in the colours of {subject}"},
                ),
            ],
            "play_sound": [
                TextPart(text=f"Two notes for {subject}, {CLIP_SECONDS:g} s."),
                AudioPart(
                    source=DataSource(value=sound, mime_type="audio/wav"),
                    metadata={"title": f"Two notes for {subject}"},
                ),
            ],
        }
        for name, content in results.items():
            call_id = new_id("call")
            yield ToolCallStartEvent(tool_call_id=call_id, tool_call_name=name)
            yield ToolCallArgsEvent(tool_call_id=call_id, delta=json.dumps({"subject": subject}))
            yield ToolCallEndEvent(tool_call_id=call_id)
            await pause()
            yield ToolCallResultEvent(
                message_id=new_id("tool"), tool_call_id=call_id, content=content, role="tool"
            )
        async for event in text_message(f"Here is a picture of {subject}, and two notes to go with it."):
            yield event

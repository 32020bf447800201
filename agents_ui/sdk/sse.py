"""The one incremental Server-Sent Events parser, for both protocols.

Bytes go in as the network delivers them, complete frames come out. A frame is dispatched on a
blank line; ``data:`` lines are joined with ``\\n``; ``:`` comments and ``retry:`` are ignored;
CRLF, CR and LF line ends are all accepted (WHATWG HTML, "event stream interpretation").
Limits protect the process from an agent that never ends a frame or never ends the stream. A frame
that is not valid UTF-8 is left out on its own (the frames around it are kept) and a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProtocolError, RunTooLargeError
from .limits import DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_TOTAL_BYTES, size_label

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "DEFAULT_MAX_TOTAL_BYTES", "INVALID_UTF8_NOTE", "SseFrame", "SseParser"]

INVALID_UTF8_NOTE = "Events from the agent that are not valid UTF-8 were left out."

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class SseFrame:
    data: str
    event: str | None = None
    id: str | None = None


class SseParser:
    """Feed bytes with :meth:`feed`, get the frames completed by them; call :meth:`close` at EOF.

    ``max_total_bytes`` bounds one stream (one run). ``notes``, when given, receives one sentence
    for a person the first time a frame is left out; ``dropped_frames`` counts them.
    """

    __slots__ = (
        "_cr",
        "_first",
        "_head",
        "_last_id",
        "_parts",
        "_size",
        "_tail_nl",
        "_total",
        "dropped_frames",
        "max_frame_bytes",
        "max_total_bytes",
        "notes",
    )

    def __init__(
        self,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        notes: list[str] | None = None,
    ) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.max_total_bytes = max_total_bytes
        self.notes = notes
        self.dropped_frames = 0
        # Bytes of the unfinished frame, kept as parts so a large frame arriving in small chunks
        # is joined once, not once per chunk.
        self._parts: list[bytes] = []
        self._size = 0
        self._tail_nl = False
        self._cr = False
        self._total = 0
        self._first = True
        self._head = b""
        self._last_id: str | None = None

    @property
    def has_partial_frame(self) -> bool:
        """True when bytes of an unfinished frame are pending (the stream was cut mid-frame)."""
        return any(part.strip() for part in self._parts)

    def feed(self, chunk: bytes) -> list[SseFrame]:
        self._total += len(chunk)
        if self._total > self.max_total_bytes:
            raise RunTooLargeError(
                f"The agent sent more than {size_label(self.max_total_bytes)} in one run; "
                "the answer was cut there."
            )
        if self._first:
            # A UTF-8 byte order mark may open the stream, possibly split across chunks.
            chunk = self._head + chunk
            if len(chunk) < 3 and _BOM.startswith(chunk):
                self._head = chunk
                return []
            self._first = False
            self._head = b""
            if chunk.startswith(_BOM):
                chunk = chunk[3:]
        if self._cr:
            # The previous chunk ended with a CR, already turned into LF: drop the LF of its CRLF.
            self._cr = False
            if chunk.startswith(b"\n"):
                chunk = chunk[1:]
        if b"\r" in chunk:
            self._cr = chunk.endswith(b"\r")
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        if not chunk:
            return []
        if b"\n\n" not in chunk and not (self._tail_nl and chunk.startswith(b"\n")):
            # No frame ends in this chunk: just keep it.
            self._parts.append(chunk)
            self._size += len(chunk)
            self._tail_nl = chunk.endswith(b"\n")
            if self._size > self.max_frame_bytes:
                raise self._frame_too_large()
            return []
        buffer = b"".join(self._parts) + chunk if self._parts else chunk
        cut = buffer.rfind(b"\n\n")
        rest = buffer[cut + 2 :]
        complete = buffer[:cut]
        self._parts = [rest] if rest else []
        self._size = len(rest)
        self._tail_nl = rest.endswith(b"\n")
        max_frame_bytes = self.max_frame_bytes
        if self._size > max_frame_bytes:
            raise self._frame_too_large()
        if len(complete) > max_frame_bytes:
            # Only a large batch can hide a large frame; small batches skip the per-frame check.
            for block in complete.split(b"\n\n"):
                if len(block) > max_frame_bytes:
                    raise self._frame_too_large()
        # Complete frames end on a line boundary, so decoding them in one go never splits a
        # character, and is much cheaper than decoding frame by frame.
        try:
            blocks = complete.decode("utf-8").split("\n\n")
        except UnicodeDecodeError:
            blocks = self._decode_each(complete)
        frames = []
        append = frames.append
        for block in blocks:
            # Fast path: the common AG-UI frame is exactly one "data: " line.
            if block.startswith("data: ") and "\n" not in block:
                append(SseFrame(block[6:], None, self._last_id))
            else:
                frame = self._parse_block(block)
                if frame is not None:
                    append(frame)
        return frames

    def close(self) -> None:
        """End of stream. A frame without its closing blank line is discarded, as the spec says;
        the caller learns about it from :attr:`has_partial_frame` before calling this."""
        self._parts = []
        self._size = 0

    def _frame_too_large(self) -> ProtocolError:
        return ProtocolError(
            f"an SSE frame from the agent exceeded {self.max_frame_bytes} bytes; "
            "raise the frame limit for this agent if such large events are expected"
        )

    def _parse_block(self, block: str) -> SseFrame | None:
        data_lines: list[str] = []
        event: str | None = None
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, sep, value = line.partition(":")
            if sep and value.startswith(" "):
                value = value[1:]
            if name == "data":
                data_lines.append(value)
            elif name == "event":
                event = value or None
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value or None
            # "retry" and unknown fields are ignored.
        if not data_lines:
            return None
        return SseFrame("\n".join(data_lines), event, self._last_id)

    def _decode_each(self, complete: bytes) -> list[str]:
        """The frames of a batch that decode, one by one; the others are counted and left out."""
        blocks = []
        for raw in complete.split(b"\n\n"):
            try:
                blocks.append(raw.decode("utf-8"))
            except UnicodeDecodeError:
                self.dropped_frames += 1
                if self.dropped_frames == 1 and self.notes is not None:
                    self.notes.append(INVALID_UTF8_NOTE)
        return blocks

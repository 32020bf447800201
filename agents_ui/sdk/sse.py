"""The one incremental Server-Sent Events parser, for both protocols.

Bytes go in as the network delivers them, complete frames come out. A frame is dispatched on a
blank line; ``data:`` lines are joined with ``\\n``; ``:`` comments and ``retry:`` are ignored;
CRLF, CR and LF line ends are all accepted (WHATWG HTML, "event stream interpretation").
Limits protect the process from an agent that never ends a frame or never ends the stream.
"""

from __future__ import annotations

from dataclasses import dataclass

from .errors import ProtocolError

__all__ = ["DEFAULT_MAX_FRAME_BYTES", "DEFAULT_MAX_TOTAL_BYTES", "SseFrame", "SseParser"]

DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_TOTAL_BYTES = 256 * 1024 * 1024

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class SseFrame:
    data: str
    event: str | None = None
    id: str | None = None


class SseParser:
    """Feed bytes with :meth:`feed`, get the frames completed by them; call :meth:`close` at EOF."""

    __slots__ = (
        "_cr",
        "_first",
        "_head",
        "_last_id",
        "_parts",
        "_size",
        "_tail_nl",
        "_total",
        "max_frame_bytes",
        "max_total_bytes",
    )

    def __init__(
        self,
        *,
        max_frame_bytes: int = DEFAULT_MAX_FRAME_BYTES,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
    ) -> None:
        self.max_frame_bytes = max_frame_bytes
        self.max_total_bytes = max_total_bytes
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
            raise ProtocolError(
                f"the agent's stream exceeded {self.max_total_bytes} bytes in total; "
                "raise the limit for this agent if its runs are legitimately that large"
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
        text = self._decode(complete)
        frames = []
        append = frames.append
        for block in text.split("\n\n"):
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

    @staticmethod
    def _decode(raw: bytes) -> str:
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ProtocolError(
                f"the agent's stream is not valid UTF-8 ({exc.reason} at byte {exc.start})"
            ) from exc

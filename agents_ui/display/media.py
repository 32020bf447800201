"""Images and audio in answers: what an agent sends, checked before the page shows any of it.

AG-UI 1.0 carries media as content parts (`image`, `audio`) with a `source`: inline base64 bytes
(`data`), a URL (`url`), or a handle only the agent's provider can read (`file`). An assistant
message's content is text only, so an answer's media come in a tool's result (TOOL_CALL_RESULT or a
tool message of MESSAGES_SNAPSHOT, whose content may be a list of parts), or as a Markdown image in
the answer's text (`![alt](data:image/png;base64,...)`). docs/PROTOCOLS.md 1.1 records the rules:

- The page never loads what an agent names from the agent's host (the CSP's img-src/media-src stay
  'self' data: blob:). An http(s) image URL is fetched by the server instead, through the image
  proxy (`ImageProxy`, endpoints/images.py), where the endpoint allows it (its "remote images"
  setting); any other http(s) URL is a link the person may open; a provider's file handle is named
  only.
- Inline bytes are decoded, bounded (`MAX_MEDIA_BYTES` each, `MAX_MEDIA_ITEMS` per result or
  answer), and shown only when their first bytes are of an allowed type that matches the label:
  PNG, JPEG, GIF, WebP images (never SVG); MP3, Ogg, WAV, WebM, MP4/M4A, AAC, FLAC audio.
- The page shows them only where the plan's media-output control is shown (declared, seen in a run,
  or allowed by the admin); elsewhere a note says media are not shown.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, replace
from typing import Any, Literal

import filetype
from django.core import signing
from django.urls import reverse

from agents_ui.sdk.limits import safe_link

MAX_MEDIA_BYTES = 1024 * 1024
MAX_MEDIA_ITEMS = 4
# The longest data: URL read: the encoded bytes at the bound, and room for the type and parameters.
_MAX_DATA_URL = 4 * (MAX_MEDIA_BYTES // 3 + 1) + 200

# Declared type -> its canonical name, for each type shown. Aliases agents use are accepted.
_IMAGE_TYPES = {t: t for t in ("image/png", "image/jpeg", "image/gif", "image/webp")} | {
    "image/jpg": "image/jpeg"
}
_AUDIO_TYPES = {
    "audio/mpeg": "audio/mpeg",
    "audio/mp3": "audio/mpeg",
    "audio/ogg": "audio/ogg",
    "audio/opus": "audio/ogg",
    "audio/wav": "audio/wav",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/webm": "audio/webm",
    "audio/mp4": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-m4a": "audio/mp4",
    "audio/aac": "audio/aac",
    "audio/flac": "audio/flac",
    "audio/x-flac": "audio/flac",
}
# What the bytes are (filetype's name) -> the canonical types they may be shown as.
_SNIFFED = {
    "image/png": {"image/png"},
    "image/jpeg": {"image/jpeg"},
    "image/gif": {"image/gif"},
    "image/webp": {"image/webp"},
    "audio/mpeg": {"audio/mpeg"},
    "audio/ogg": {"audio/ogg"},
    "audio/x-wav": {"audio/wav"},
    "video/webm": {"audio/webm"},
    "audio/mp4": {"audio/mp4"},
    "video/mp4": {"audio/mp4"},
    "audio/aac": {"audio/aac"},
    "audio/x-flac": {"audio/flac"},
}
_DATA_URL = re.compile(r"data:([\w.+-]+/[\w.+-]+)((?:;[\w.+-]+=[\w.+-]+)*);base64,(.*)", re.DOTALL | re.I)
_KIND_WORDS = {"image": "image", "audio": "audio clip"}

Kind = Literal["image", "audio"]


@dataclass(frozen=True)
class Media:
    """One image or audio clip as the page shows it: inline (`src`, a checked data: URL), as a link
    (`link`, never loaded), or as a note saying why it is not shown."""

    kind: Kind
    label: str = ""  # the alt text, or the part's name
    src: str = ""
    mime_type: str = ""
    size: int = 0
    link: str = ""
    note: str = ""
    proxied: str = ""  # the image proxy's URL for `link`, on the product's origin

    @property
    def word(self) -> str:
        return _KIND_WORDS[self.kind]


_PROXY_SALT = "agents_ui.image-proxy"


@dataclass(frozen=True)
class ImageProxy:
    """Signs the image URLs one run named, so the proxy fetches those and no others: the signature
    holds the run and the URL, and the proxy's view checks the person may see that run."""

    run_id: str

    def url(self, link: str) -> str:
        token = signing.dumps({"r": self.run_id, "u": link}, salt=_PROXY_SALT, compress=True)
        return f"{reverse('run-image', args=[self.run_id])}?u={token}"

    def proxied(self, item: Media) -> Media:
        """`item` with its proxy URL, when it is an image the agent linked to."""
        if item.kind != "image" or not item.link:
            return item
        return replace(item, proxied=self.url(item.link))


def signed_image_url(run_id: str, token: str) -> str | None:
    """The image URL a proxy token names for this run, or None when it was not signed for it."""
    try:
        found = signing.loads(token, salt=_PROXY_SALT)
    except signing.BadSignature:
        return None
    if not isinstance(found, dict) or found.get("r") != run_id or not isinstance(found.get("u"), str):
        return None
    return found["u"]


def _kind_of(mime_type: str) -> Kind | None:
    mime_type = mime_type.lower()
    if mime_type in _IMAGE_TYPES:
        return "image"
    if mime_type in _AUDIO_TYPES:
        return "audio"
    return None


def inline(kind: Kind, mime_type: str, encoded: str, label: str = "") -> Media:
    """Base64 bytes an agent sent inline, checked: decoded, bounded, and of an allowed type."""
    mime_type = (mime_type or "").strip().lower()
    canonical = (_IMAGE_TYPES if kind == "image" else _AUDIO_TYPES).get(mime_type)
    if canonical is None:
        return Media(
            kind, label, note=f"Not shown: {mime_type or 'an unnamed type'} is not a type shown here."
        )
    if len(encoded) > _MAX_DATA_URL:
        return Media(kind, label, note=f"Not shown: the {_KIND_WORDS[kind]} is larger than this page shows.")
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):
        return Media(kind, label, note=f"Not shown: the {_KIND_WORDS[kind]}'s data is not valid base64.")
    if len(data) > MAX_MEDIA_BYTES:
        return Media(kind, label, note=f"Not shown: the {_KIND_WORDS[kind]} is larger than this page shows.")
    sniffed = filetype.guess_mime(data[:262]) if data else None
    if canonical not in _SNIFFED.get(sniffed or "", set()):
        return Media(
            kind,
            label,
            note=f"Not shown: labelled {mime_type}, but its bytes are {sniffed or 'of no known type'}.",
        )
    src = f"data:{canonical};base64,{base64.b64encode(data).decode('ascii')}"
    return Media(kind, label, src=src, mime_type=canonical, size=len(data))


def from_url(kind: Kind, url: str, mime_type: str = "", label: str = "") -> Media:
    """A URL an agent named: a data: URL is inline bytes; an http(s) URL is a link, never loaded."""
    url = (url or "").strip()
    word = _KIND_WORDS[kind]
    if url[:5].lower() == "data:":
        if len(url) > _MAX_DATA_URL:
            return Media(kind, label, note=f"Not shown: the {word} is larger than this page shows.")
        found = _DATA_URL.fullmatch(url)
        if found is None:
            return Media(kind, label, note=f"Not shown: the {word} is not base64 data of a known type.")
        return inline(kind, found.group(1), found.group(3), label)
    link = safe_link(url)
    if link:
        return Media(kind, label, link=link, mime_type=mime_type or "")
    return Media(kind, label, note=f"Not shown: the {word}'s address is not an http(s) link.")


def _get(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _part_label(part: Any) -> str:
    metadata = _get(part, "metadata")
    for key in ("alt", "title", "filename", "name"):
        found = _get(metadata, key) if isinstance(metadata, dict) else None
        if isinstance(found, str) and found.strip():
            return found.strip()[:200]
    return ""


def of_part(part: Any) -> Media | None:
    """An AG-UI image or audio content part (a model or its JSON); None for any other part."""
    kind = _get(part, "type")
    if kind not in ("image", "audio"):
        return None
    source, label = _get(part, "source"), _part_label(part)
    source_type = _get(source, "type")
    value = _get(source, "value")
    mime_type = _get(source, "mime_type") or _get(source, "mimeType") or ""
    if not isinstance(value, str) or not isinstance(mime_type, str):
        return Media(kind, label, note=f"Not shown: the {_KIND_WORDS[kind]} names no source.")
    if source_type == "data":
        return inline(kind, mime_type, value, label)
    if source_type == "url":
        return from_url(kind, value, mime_type, label)
    return Media(
        kind, label, note=f"Not shown: the {_KIND_WORDS[kind]} is a file only the agent's provider can open."
    )


def of_parts(content: Any) -> tuple[list[Media], int]:
    """The images and audio of a list of content parts, at most MAX_MEDIA_ITEMS, and how many more
    there were. Anything but a list has none."""
    if not isinstance(content, list):
        return [], 0
    found = [media for part in content if (media := of_part(part)) is not None]
    return found[:MAX_MEDIA_ITEMS], max(len(found) - MAX_MEDIA_ITEMS, 0)


def text_of_parts(content: Any) -> str:
    """The text parts of a list of content parts, joined: what a result says beside its media."""
    if not isinstance(content, list):
        return ""
    texts = [_get(part, "text") for part in content if _get(part, "type") == "text"]
    return "\n".join(text for text in texts if isinstance(text, str))


def of_markdown(url: str, alt: str) -> Media:
    """A Markdown image: `![alt](url)`; an audio type in a data: URL makes it an audio clip."""
    found = _DATA_URL.match(url[:200]) if url.lower().startswith("data:") else None
    kind = _kind_of(found.group(1)) if found else None
    return from_url(kind or "image", url, label=alt[:200])

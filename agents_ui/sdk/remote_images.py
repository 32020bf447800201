"""Fetching an image an agent named by URL, so the page can show it from the product's own origin.

The person's browser never contacts the agent's host: the server fetches the image through a client
from the one client factory (every hop, redirects included, passes the address guard), with a size
cap and a time cap for the whole fetch, and keeps it only when its bytes are a raster image (PNG,
JPEG, GIF, WebP; never SVG). The type comes from the bytes, not from the agent's Content-Type.

Pure httpx: no Django here.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import filetype
import httpx

from .guard import AddressRefusedError

__all__ = ["IMAGE_TYPES", "FetchedImage", "ImageRefusedError", "fetch_image"]

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
# filetype reads at most this many leading bytes.
_SNIFF_BYTES = 262


class ImageRefusedError(Exception):
    """The image was not fetched or is not shown; the message says why, in the product's words."""


@dataclass(frozen=True)
class FetchedImage:
    content_type: str
    data: bytes


async def fetch_image(
    client: httpx.AsyncClient, url: str, *, max_bytes: int, time_limit: float
) -> FetchedImage:
    """GET `url` through `client` (a guarded one), bounded by `max_bytes` and `time_limit` seconds."""
    try:
        async with asyncio.timeout(time_limit):
            return await _fetch(client, url, max_bytes)
    except TimeoutError as exc:
        raise ImageRefusedError("the image's site took too long") from exc
    except AddressRefusedError as exc:  # the address, or a redirect's, is inside: said as such
        raise ImageRefusedError(f"the image's address is not one this server fetches from ({exc})") from exc
    except httpx.HTTPError as exc:
        raise ImageRefusedError("the image's site could not be reached") from exc


async def _fetch(client: httpx.AsyncClient, url: str, max_bytes: int) -> FetchedImage:
    async with client.stream("GET", url, headers={"Accept": ", ".join(sorted(IMAGE_TYPES))}) as response:
        if response.status_code != 200:
            raise ImageRefusedError(f"the image's site answered {response.status_code}")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > max_bytes:
            raise ImageRefusedError("the image is larger than this page shows")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                raise ImageRefusedError("the image is larger than this page shows")
    data = bytes(body)
    sniffed = filetype.guess_mime(data[:_SNIFF_BYTES]) if data else None
    if sniffed not in IMAGE_TYPES:
        raise ImageRefusedError(f"the file is {sniffed or 'of no known image type'}, not an image shown here")
    return FetchedImage(sniffed, data)

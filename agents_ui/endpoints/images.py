"""Images an agent named by URL, fetched by the server for the image proxy (views/images.py).

Each fetch is an agent call: a client from the one factory (every hop through the address guard),
bounded by MAX_MEDIA_BYTES and IMAGE_TIME_LIMIT, typed from its bytes (agents_ui.sdk.remote_images).
What came back, an image or the reason there is none, is cached under the endpoint and the URL, so a
page shown again, or shown to many, asks the agent's site once.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache

from agents_ui.display.media import MAX_MEDIA_BYTES
from agents_ui.endpoints.clients import agent_client
from agents_ui.models import AgentEndpoint
from agents_ui.sdk.remote_images import FetchedImage, ImageRefusedError, fetch_image

IMAGE_TIME_LIMIT = 10.0
IMAGE_CACHE_SECONDS = 60 * 60
# A refusal is kept for less time: the agent's site may be back soon.
REFUSAL_CACHE_SECONDS = 60


def _key(endpoint: AgentEndpoint, url: str) -> str:
    return f"agents_ui:image:{endpoint.pk}:{hashlib.sha256(url.encode()).hexdigest()}"


async def remote_image(endpoint: AgentEndpoint, url: str) -> FetchedImage:
    """The image at `url`, as `endpoint`'s agent named it; ImageRefusedError says why there is none."""
    key = _key(endpoint, url)
    cached = await cache.aget(key)
    if isinstance(cached, tuple) and len(cached) == 2:
        if cached[0] == "refused":
            raise ImageRefusedError(cached[1])
        return FetchedImage(*cached)
    try:
        async with agent_client() as client:
            image = await fetch_image(client, url, max_bytes=MAX_MEDIA_BYTES, time_limit=IMAGE_TIME_LIMIT)
    except ImageRefusedError as refused:
        await cache.aset(key, ("refused", str(refused)), REFUSAL_CACHE_SECONDS)
        raise
    await cache.aset(key, (image.content_type, image.data), IMAGE_CACHE_SECONDS)
    return image

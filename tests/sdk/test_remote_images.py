"""The remote image fetcher: bounded, guarded, and typed from the bytes."""

from __future__ import annotations

import httpx
import pytest

from agents_ui.sdk.guard import GuardedTransport
from agents_ui.sdk.remote_images import ImageRefusedError, fetch_image
from tests.support.image_site import PNG, application
from tests.support.live_server import ThreadedUvicorn


@pytest.fixture(scope="module")
def site():
    server = ThreadedUvicorn(application).start()
    yield server.url
    server.stop()


def _client(allow_private: bool = True) -> httpx.AsyncClient:
    guarded = GuardedTransport(httpx.AsyncHTTPTransport(), allow_private=allow_private)
    return httpx.AsyncClient(transport=guarded, follow_redirects=True, max_redirects=4)


async def _fetch(url: str, *, allow_private: bool = True, time_limit: float = 2.0):
    async with _client(allow_private) as client:
        return await fetch_image(client, url, max_bytes=1024 * 1024, time_limit=time_limit)


async def test_a_png_is_fetched_with_its_type_read_from_the_bytes(site):
    image = await _fetch(f"{site}/ok.png")
    assert image.content_type == "image/png"
    assert image.data == PNG


async def test_svg_labelled_png_is_refused(site):
    with pytest.raises(ImageRefusedError, match="not an image shown here"):
        await _fetch(f"{site}/svg.png")


async def test_a_redirect_to_a_private_address_is_refused_at_that_hop(site):
    # Loopback is allowed for the test site; the metadata address the redirect names never is.
    with pytest.raises(ImageRefusedError, match=r"not one this server fetches from \(refused: 169\.254"):
        await _fetch(f"{site}/to-private")


async def test_the_guard_refuses_loopback_when_private_addresses_are_not_allowed(site):
    with pytest.raises(ImageRefusedError, match=r"not one this server fetches from \(refused: 127\.0\.0\.1"):
        await _fetch(f"{site}/ok.png", allow_private=False)


async def test_an_oversized_body_is_refused(site):
    with pytest.raises(ImageRefusedError, match="larger"):
        await _fetch(f"{site}/huge.png")


async def test_a_slow_body_is_cut_off_at_the_time_limit(site):
    with pytest.raises(ImageRefusedError, match="too long"):
        await _fetch(f"{site}/slow.png", time_limit=0.5)


async def test_a_failed_answer_is_refused(site):
    with pytest.raises(ImageRefusedError, match="404"):
        await _fetch(f"{site}/missing.png")

"""Images an agent names on its own host are shown from the product's origin, in an answer's
Markdown and in an A2UI Image, live and after a reload; the person's browser never asks the agent's
host, and an image whose bytes are not a raster image falls back to its link with a note."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_runs import last_run, open_agent, send, wait_run
from tests.factories import make_endpoint
from tests.support.image_agent import ImageAgent

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def image_agent() -> Iterator[ImageAgent]:
    server = ImageAgent().start()
    yield server
    server.stop()


def _loaded(image) -> bool:
    return image.evaluate("e => e.complete && e.naturalWidth > 0")


@pytest.mark.parametrize("width", [1280, 390])
def test_remote_images_render_from_the_products_origin_live_and_after_a_reload(
    page: Page, live_url: str, signed_in, screenshot, image_agent: ImageAgent, width: int, settings
):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = True
    page.set_viewport_size({"width": width, "height": 900})
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    slug = f"pictures-{width}"
    make_endpoint(
        slug=slug, name="Pictures", base_url=f"{image_agent.url}/", overrides={"media-output": "allow"}
    )
    signed_in()
    open_agent(page, live_url, slug)
    send(page, "show me")
    wait_run(page)
    for reload in (False, True):
        if reload:
            page.reload()
        run = last_run(page)
        answer = run.get_by_role("img", name="an answer picture")
        pictured = run.locator('[data-a2ui="Image"] img').first
        for image in (answer, pictured):
            expect(image).to_be_visible()
            assert image.get_attribute("src").startswith("/runs/")
            page.wait_for_function("e => e.complete", arg=image.element_handle())
            assert _loaded(image)
        # The SVG labelled PNG is refused by the proxy: its link and a note instead.
        fallback = run.locator('[data-a2ui="Image"] [data-remote-image-failed]').last
        expect(fallback).to_be_visible()
        expect(fallback).to_contain_text("could not be loaded")
        expect(run.get_by_role("img", name="A fake picture")).to_be_hidden()
        screenshot(f"remote-images-{width}{'-reloaded' if reload else ''}")
    assert not [url for url in asked if url.startswith(image_agent.url)]

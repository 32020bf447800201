"""The image proxy: an image a run named, served from the product's origin, and nothing else."""

from __future__ import annotations

import pytest

from agents_ui.display.markdown import markdown_html
from agents_ui.display.media import ImageProxy
from agents_ui.models import AgentEndpoint, Conversation, Run
from tests.factories import make_endpoint, make_user
from tests.support.image_site import PNG, application
from tests.support.live_server import ThreadedUvicorn

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def site():
    server = ThreadedUvicorn(application).start()
    yield server.url
    server.stop()


@pytest.fixture(autouse=True)
def loopback_agents(settings):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = True


def _run(user=None, **endpoint_fields) -> Run:
    conversation = Conversation.objects.create(
        user=user or make_user(everyday=True), endpoint=make_endpoint(**endpoint_fields), title="t"
    )
    return Run.objects.create(conversation=conversation, request={}, status=Run.Status.COMPLETED)


def test_an_image_the_run_named_is_served_from_the_products_origin(client, site):
    run = _run()
    client.force_login(run.conversation.user)
    response = client.get(ImageProxy(str(run.pk)).url(f"{site}/ok.png"))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/png"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response.content == PNG


def test_a_url_no_run_named_is_refused(client, site):
    run, other = _run(), _run()
    client.force_login(run.conversation.user)
    assert client.get(f"/runs/{run.pk}/image/?u={site}/ok.png").status_code == 404
    # Signed for another run: not this one's.
    signed_elsewhere = ImageProxy(str(other.pk)).url(f"{site}/ok.png").split("?", 1)[1]
    assert client.get(f"/runs/{run.pk}/image/?{signed_elsewhere}").status_code == 404


def test_another_users_run_is_refused(client, site):
    run = _run()
    client.force_login(make_user(everyday=True))
    assert client.get(ImageProxy(str(run.pk)).url(f"{site}/ok.png")).status_code == 404


def test_an_agent_whose_images_are_links_only_gets_no_proxy(client, site):
    run = _run(remote_images=AgentEndpoint.RemoteImages.LINKS)
    client.force_login(run.conversation.user)
    assert client.get(ImageProxy(str(run.pk)).url(f"{site}/ok.png")).status_code == 404


def test_svg_labelled_png_is_not_served(client, site):
    run = _run()
    client.force_login(run.conversation.user)
    response = client.get(ImageProxy(str(run.pk)).url(f"{site}/svg.png"))
    assert response.status_code == 502
    assert b"<svg" not in response.content


def test_a_markdown_image_from_another_site_comes_through_the_proxy():
    proxy = ImageProxy("00000000-0000-0000-0000-000000000001")
    html = markdown_html("![a chart](https://images.example.test/chart.png)", media=proxy)
    assert 'src="/runs/00000000-0000-0000-0000-000000000001/image/?u=' in html
    assert 'href="https://images.example.test/chart.png"' in html  # the fallback link, hidden
    assert "https://images.example.test/chart.png" not in html.split('href="')[0]
    # Without the proxy, it stays a link.
    assert "<img" not in markdown_html("![a chart](https://images.example.test/chart.png)", media=True)

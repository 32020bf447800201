"""The address guard's redirect rule: a credential follows a redirect only within its origin."""

from __future__ import annotations

import httpx
import pytest

from agents_ui.sdk.guard import GuardedTransport

SECRET = {"X-Api-Key": "k-123", "Authorization": "Bearer t-456"}


class Network(httpx.AsyncBaseTransport):
    """Answers the first request with a redirect to ``location``, every other one with 200."""

    def __init__(self, location: str) -> None:
        self.location = location
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        if len(self.requests) == 1:
            return httpx.Response(302, headers={"Location": self.location})
        return httpx.Response(200)


async def follow(start: str, location: str) -> httpx.Headers:
    """The headers the redirected request carried."""
    network = Network(location)
    transport = GuardedTransport(network, allow_private=False)
    async with httpx.AsyncClient(transport=transport, follow_redirects=True) as client:
        response = await client.get(start, headers=SECRET)
    assert response.status_code == 200
    first, second = network.requests
    assert first.headers["x-api-key"] == "k-123"
    return second.headers


@pytest.mark.parametrize(
    ("start", "location"),
    [
        # Another port is another server, whatever the scheme does.
        ("http://93.184.216.34:8080/agent", "https://93.184.216.34/agent"),
        ("http://93.184.216.34/agent", "https://93.184.216.34:8443/agent"),
        ("http://93.184.216.34:8080/agent", "http://93.184.216.34:9090/agent"),
        ("https://93.184.216.34/agent", "http://93.184.216.34/agent"),
        ("http://93.184.216.34/agent", "https://8.8.8.8/agent"),
    ],
)
async def test_a_redirect_to_another_origin_leaves_the_credential_behind(start, location):
    headers = await follow(start, location)
    assert "x-api-key" not in headers
    assert "authorization" not in headers


@pytest.mark.parametrize(
    ("start", "location"),
    [
        ("http://93.184.216.34/agent", "https://93.184.216.34/agent"),
        ("http://93.184.216.34:80/agent", "https://93.184.216.34:443/agent"),
        ("http://93.184.216.34:8080/agent", "http://93.184.216.34:8080/moved"),
    ],
)
async def test_the_same_origin_and_the_default_https_upgrade_keep_it(start, location):
    headers = await follow(start, location)
    assert headers["x-api-key"] == "k-123"

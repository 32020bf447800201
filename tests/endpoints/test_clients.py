"""The address guard and the agent HTTP client: every refused range, redirects, and the SDK's message."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import socket
import subprocess
import sys

import httpx
import pytest
from asgiref.sync import sync_to_async

from agents_ui.endpoints.clients import (
    MAX_REDIRECTS,
    agent_client,
    allow_private_addresses,
    streaming_agent_client,
)
from agents_ui.endpoints.discovery import discover_one
from agents_ui.sdk import AgUiAgent
from agents_ui.sdk.guard import AddressRefusedError, refusal_reason
from tests.factories import make_endpoint

# (address, what it is): each one is refused in production.
REFUSED = [
    ("127.0.0.1", "loopback"),
    ("127.45.6.7", "loopback"),
    ("::1", "loopback"),
    ("169.254.10.20", "link-local"),
    ("fe80::1", "link-local"),
    ("10.0.0.5", "private"),
    ("172.16.0.1", "private"),
    ("172.31.255.254", "private"),
    ("192.168.1.10", "private"),
    ("100.64.0.1", "private"),  # carrier-grade NAT, used inside clouds
    ("fc00::1", "private"),
    ("fd12:3456::1", "private"),
    ("169.254.169.254", "cloud metadata"),
    ("169.254.170.2", "cloud metadata"),
    ("fd00:ec2::254", "cloud metadata"),
    ("100.100.100.200", "cloud metadata"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    # IPv6 forms carrying an IPv4 address are judged by that address.
    ("::ffff:127.0.0.1", "loopback"),
    ("::ffff:10.0.0.5", "private"),
    ("::ffff:169.254.169.254", "cloud metadata"),
    ("64:ff9b::a00:5", "private"),  # NAT64 of 10.0.0.5
    ("2002:a00:5::1", "private"),  # 6to4 of 10.0.0.5
    ("224.0.0.1", "reserved"),
    ("255.255.255.255", "reserved"),
]
PUBLIC = ["93.184.216.34", "8.8.8.8", "172.32.0.1", "192.169.0.1", "2606:4700:4700::1111"]
# What AGENTS_UI_ALLOW_PRIVATE_ADDRESSES lets through (development, the demo agents).
ALLOWABLE = {"loopback", "link-local", "private", "unspecified"}


def url_for(address: str, path: str = "/agent") -> str:
    host = f"[{address}]" if ":" in address else address
    return f"http://{host}{path}"


class Recorder:
    """A fake network: answers 200 (or what `routes` says) and remembers what reached it."""

    def __init__(self, routes: dict[str, httpx.Response] | None = None) -> None:
        self.requests: list[httpx.Request] = []
        self.routes = routes or {}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.routes.get(str(request.url))
        return answer if answer is not None else httpx.Response(200, json={"ok": True})

    def client(self, *, allow_private: bool = False) -> httpx.AsyncClient:
        return agent_client(allow_private=allow_private, inner=httpx.MockTransport(self))


@pytest.fixture
def fake_dns(monkeypatch):
    """Host names resolve to what the test says, without a DNS server."""
    table: dict[str, list[str]] = {}

    async def getaddrinfo(loop, host, port, *args, **kwargs):
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [
            (
                socket.AF_INET6 if ":" in a else socket.AF_INET,
                socket.SOCK_STREAM,
                6,
                "",
                (a, port, 0, 0) if ":" in a else (a, port),
            )
            for a in table[host]
        ]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    return table


@pytest.mark.parametrize(("address", "kind"), REFUSED)
def test_each_refused_range_is_classified(address, kind):
    assert refusal_reason(ipaddress.ip_address(address)) == kind


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_are_not_refused(address):
    assert refusal_reason(ipaddress.ip_address(address)) is None


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_each_refused_range_never_reaches_the_network(address, kind):
    network = Recorder()
    async with network.client(allow_private=False) as client:
        with pytest.raises(AddressRefusedError) as refused:
            await client.get(url_for(address))
    assert (
        str(refused.value)
        == f"refused: {ipaddress.ip_address(address)} is {'an' if kind[0] in 'aeiou' else 'a'} {kind} address"
    )
    assert isinstance(refused.value, httpx.ConnectError)  # so the SDK reports "unreachable"
    assert network.requests == []


@pytest.mark.parametrize(("address", "kind"), REFUSED)
async def test_the_setting_lets_private_ranges_through_but_never_metadata(address, kind):
    network = Recorder()
    async with network.client(allow_private=True) as client:
        if kind in ALLOWABLE:
            response = await client.get(url_for(address))
            assert response.status_code == 200
        else:
            with pytest.raises(AddressRefusedError):
                await client.get(url_for(address))


@pytest.mark.parametrize("address", PUBLIC)
async def test_public_addresses_go_through(address):
    network = Recorder()
    async with network.client() as client:
        assert (await client.get(url_for(address))).status_code == 200
    assert len(network.requests) == 1


async def test_a_host_name_is_judged_by_every_address_it_resolves_to(fake_dns):
    fake_dns["internal.example.test"] = ["10.0.0.5"]
    fake_dns["split.example.test"] = ["93.184.216.34", "192.168.0.7"]
    network = Recorder()
    async with network.client() as client:
        with pytest.raises(
            AddressRefusedError, match=r"internal.example.test resolves to 10.0.0.5, a private"
        ):
            await client.get("http://internal.example.test/agent")
        with pytest.raises(AddressRefusedError, match=r"resolves to 192.168.0.7, a private address"):
            await client.get("https://split.example.test/agent")
    assert network.requests == []


async def test_plain_http_connects_to_the_address_it_checked(fake_dns):
    fake_dns["agent.example.test"] = ["93.184.216.34"]
    network = Recorder()
    async with network.client() as client:
        response = await client.get("http://agent.example.test:8080/agent")
    assert response.status_code == 200
    sent = network.requests[0]
    # A second DNS answer cannot redirect the connection: it goes to the checked address ...
    assert sent.url.host == "93.184.216.34"
    assert sent.url.port == 8080
    # ... and the agent still sees its own name.
    assert sent.headers["host"] == "agent.example.test:8080"
    assert str(response.request.url) == "http://agent.example.test:8080/agent"


async def test_metadata_host_names_are_refused_without_asking_dns(fake_dns):
    network = Recorder()
    async with network.client(allow_private=True) as client:
        with pytest.raises(
            AddressRefusedError, match=r"metadata\.google\.internal is a cloud metadata address"
        ):
            await client.get("http://metadata.google.internal/computeMetadata/v1/")


async def test_a_name_that_does_not_resolve_is_unreachable_not_refused(fake_dns):
    async with Recorder().client() as client:
        with pytest.raises(httpx.ConnectError) as error:
            await client.get("http://nowhere.example.test/")
    assert not isinstance(error.value, AddressRefusedError)
    assert "does not resolve" in str(error.value)


async def test_only_http_and_https():
    async with Recorder().client(allow_private=True) as client:
        with pytest.raises((AddressRefusedError, httpx.UnsupportedProtocol)):
            await client.get("ftp://93.184.216.34/file")


# --- Redirects ------------------------------------------------------------------------------------


def redirect(to: str, status: int = 302) -> httpx.Response:
    return httpx.Response(status, headers={"Location": to})


async def test_a_redirect_to_a_refused_address_is_refused():
    network = Recorder({"http://93.184.216.34/agent": redirect("http://169.254.169.254/latest/meta-data/")})
    async with network.client(allow_private=True) as client:
        with pytest.raises(AddressRefusedError, match=r"169\.254\.169\.254 is a cloud metadata address"):
            await client.get("http://93.184.216.34/agent")
    assert [str(r.url) for r in network.requests] == ["http://93.184.216.34/agent"]


async def test_at_most_three_redirects_are_followed():
    hops = [f"http://93.184.216.34/hop{i}" for i in range(6)]
    network = Recorder({hops[i]: redirect(hops[i + 1]) for i in range(5)})
    async with network.client() as client:
        # Three redirects: fine.
        network.routes[hops[3]] = httpx.Response(200, json={"ok": True})
        response = await client.get(hops[0])
        assert response.status_code == 200
        assert len(response.history) == MAX_REDIRECTS == 3
        # Four: refused with a message, as a connection error the SDK understands.
        network.routes[hops[3]] = redirect(hops[4])
        with pytest.raises(AddressRefusedError, match="more than 3 redirects"):
            await client.get(hops[0])


async def test_credentials_stay_with_the_agent_they_were_meant_for():
    network = Recorder(
        {
            "http://93.184.216.34/agent": redirect("http://93.184.216.34/moved"),
            "http://93.184.216.34/moved": redirect("http://8.8.8.8/elsewhere"),
        }
    )
    secret = {"X-Api-Key": "k-123", "Authorization": "Bearer t-456", "X-Agent-SDK-Version": "1.0"}
    async with network.client() as client:
        await client.get("http://93.184.216.34/agent", headers=secret)
    first, same_origin, other_origin = network.requests
    assert first.headers["x-api-key"] == same_origin.headers["x-api-key"] == "k-123"
    assert "x-api-key" not in other_origin.headers
    assert "authorization" not in other_origin.headers
    assert other_origin.headers["x-agent-sdk-version"] == "1.0"


# --- Through the SDK and discovery ------------------------------------------------------------------


@pytest.mark.parametrize("factory", [agent_client, streaming_agent_client])
async def test_the_sdk_reports_a_refusal_as_unreachable_with_the_reason(factory):
    async with factory(allow_private=False) as client:
        result = await AgUiAgent("http://10.0.0.5/agent", client=client).discover()
    assert result.status == "unreachable"
    assert "refused: 10.0.0.5 is a private address" in result.error


@pytest.mark.django_db(transaction=True)
async def test_discovery_follows_the_setting(settings):
    # Port 9 (discard) on loopback: refused by the guard in production, a plain connection error in
    # development. Either way nothing listens, so the test needs no server.
    endpoint = await sync_to_async(make_endpoint)(base_url="http://127.0.0.1:9/agent")
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
    refused = await discover_one(endpoint, refresh=True)
    assert refused.status == "unreachable"
    assert "refused: 127.0.0.1 is a loopback address" in refused.error

    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = True
    allowed = await discover_one(endpoint, refresh=True)
    assert allowed.status == "unreachable"
    assert "refused" not in allowed.error


def test_the_setting_follows_debug_by_default(settings):
    assert allow_private_addresses() is settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES

    def read(env: dict[str, str]) -> str:
        code = "import project.settings as s; print(s.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES)"
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("DEBUG", "AGENTS_UI_ALLOW"))}
        done = subprocess.run(
            [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    assert read({"DEBUG": "true"}) == "True"
    assert read({"DEBUG": "false", "SECRET_KEY": "x" * 50}) == "False"
    assert (
        read({"DEBUG": "false", "SECRET_KEY": "x" * 50, "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES": "true"})
        == "True"
    )

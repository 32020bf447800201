"""The address guard's redirect rule: a credential follows a redirect only within its origin."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from agents_ui.sdk.guard import AddressRefusedError, GuardedTransport, literal_address, same_origin

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


# --- Validator bypasses: every spelling of an inside address is refused, nothing is sent ----------


class Recorder(httpx.AsyncBaseTransport):
    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        return httpx.Response(200)


@pytest.fixture
def no_dns(monkeypatch):
    """Any DNS lookup fails the test: these spellings are judged without asking."""

    async def getaddrinfo(*args, **kwargs):
        raise AssertionError(f"asked DNS for {args[1]!r}")

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)


# (URL, the refusal it gets): what a validator comparing strings or using ipaddress alone would miss.
BYPASSES = [
    ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1 is a loopback address"),
    ("http://[::ffff:7f00:1]/", "::ffff:127.0.0.1 is a loopback address"),
    ("http://[0:0:0:0:0:ffff:127.0.0.1]:8080/", "::ffff:127.0.0.1 is a loopback address"),
    ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 is a cloud metadata address"),
    ("http://[64:ff9b::7f00:1]/", "64:ff9b::7f00:1 is a loopback address"),  # NAT64
    ("http://[64:ff9b:1::a00:5]/", "64:ff9b:1::a00:5 is a private address"),  # local-use NAT64
    ("http://[2002:7f00:1::1]/", "2002:7f00:1::1 is a loopback address"),  # 6to4
    ("http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "is a loopback address"),  # Teredo, client 127.0.0.1
    ("http://[::127.0.0.1]/", "::7f00:1 is a loopback address"),  # IPv4-compatible
    ("http://[::ffff:0:a00:5]/", "::ffff:0:a00:5 is a private address"),  # IPv4-translated
    ("http://[fec0::1]/", "fec0::1 is a private address"),  # site-local
    ("http://[fe80::1%25eth0]/", "fe80::1 is a link-local address"),
    ("http://2130706433/", "127.0.0.1 is a loopback address"),  # decimal
    ("http://0x7f000001/", "127.0.0.1 is a loopback address"),  # hex
    ("http://017700000001/", "127.0.0.1 is a loopback address"),  # octal
    ("http://0x7f.1/", "127.0.0.1 is a loopback address"),
    ("http://127.1/", "127.0.0.1 is a loopback address"),
    ("http://127.0.1/", "127.0.0.1 is a loopback address"),
    ("http://0xa9.0xfe.0xa9.0xfe/", "169.254.169.254 is a cloud metadata address"),
    ("http://2852039166/", "169.254.169.254 is a cloud metadata address"),
    ("http://0/", "0.0.0.0 is an unspecified address"),
    ("http://0.0.0.0:8080/", "0.0.0.0 is an unspecified address"),
    ("http://[::]/", ":: is an unspecified address"),
    ("http://good.example@127.0.0.1/", "127.0.0.1 is a loopback address"),  # userinfo
    ("http://127.0.0.1#@good.example/", "127.0.0.1 is a loopback address"),  # a fragment, not a host
    ("http://127.0.0.1.:80/", "127.0.0.1 is a loopback address"),  # trailing dot
    ("http://169.254.169.254./latest/", "169.254.169.254 is a cloud metadata address"),
    ("http://localhost/", "localhost is a loopback address"),
    ("http://localhost./", "localhost is a loopback address"),
    ("http://LOCALHOST:443/", "localhost is a loopback address"),
    ("http://agent.localhost/", "agent.localhost is a loopback address"),
    ("http://METADATA.GOOGLE.INTERNAL./", "metadata.google.internal is a cloud metadata address"),
    ("https://127.0.0.1:8443/", "127.0.0.1 is a loopback address"),
    ("http://10.1:9000/", "10.0.0.1 is a private address"),
    ("http://192.168.257/", "192.168.1.1 is a private address"),
]


@pytest.mark.parametrize(("url", "refusal"), BYPASSES)
async def test_every_spelling_of_an_inside_address_is_refused_without_a_request(url, refusal, no_dns):
    network = Recorder()
    async with httpx.AsyncClient(transport=GuardedTransport(network, allow_private=False)) as client:
        with pytest.raises(AddressRefusedError) as refused:
            await client.get(url)
    assert refusal in str(refused.value)
    assert str(refused.value).startswith("refused: ")
    assert network.requests == []


@pytest.mark.parametrize(("url", "refusal"), [b for b in BYPASSES if "metadata" in b[1]])
async def test_metadata_spellings_are_refused_even_where_private_addresses_are_allowed(url, refusal, no_dns):
    network = Recorder()
    async with httpx.AsyncClient(transport=GuardedTransport(network, allow_private=True)) as client:
        with pytest.raises(AddressRefusedError, match="cloud metadata"):
            await client.get(url)
    assert network.requests == []


@pytest.mark.parametrize(
    "url",
    [
        "http://0177.0.0.1/",  # httpx reads a dotted quad strictly and refuses the URL itself
        "http://0251.0376.0251.0376/",
        # Fullwidth and circled letters: httpx's IDNA refuses them rather than mapping them to localhost.
        "http://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/",
        "http://\u24dbocalhost/",
    ],
)
async def test_spellings_httpx_refuses_never_become_a_request(url, no_dns):
    network = Recorder()
    async with httpx.AsyncClient(transport=GuardedTransport(network, allow_private=False)) as client:
        with pytest.raises(httpx.InvalidURL):
            await client.get(url)
    assert network.requests == []


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("1.0x7f.1", "1.127.0.1"),
        ("0", "0.0.0.0"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::ffff:7f00:1]", "::ffff:127.0.0.1"),
        ("08.1", None),  # not octal: a name, as the C resolver reads it
        ("256.1", None),
        ("1.2.3.4.5", None),
        ("agent.example.com", None),
        ("0x", "0.0.0.0"),
    ],
)
def test_numeric_hosts_are_read_as_the_resolver_reads_them(host, address):
    found = literal_address(host)
    assert (str(found) if found else None) == address


@pytest.mark.parametrize(
    ("first", "second", "same"),
    [
        ("https://agent.example/a2a", "https://agent.example:443/rpc", True),
        ("http://agent.example/", "https://agent.example/rpc", True),  # the default upgrade
        ("https://agent.example/", "http://agent.example/rpc", False),
        ("https://agent.example/", "https://agent.example:8443/rpc", False),
        ("https://agent.example/", "https://api.agent.example/rpc", False),
        ("https://agent.example/", "https://agent.example.evil.example/", False),
        ("https://agent.example/", "not a url", False),
    ],
)
def test_same_origin(first, second, same):
    assert same_origin(first, second) is same

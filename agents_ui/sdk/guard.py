"""The address guard: agent traffic never reaches loopback, private, link-local or metadata addresses.

An admin types an agent's URL, and the server then sends requests to it (discovery, runs, and any
redirect the agent answers with). Without a guard that is a server-side request forgery hole: an
endpoint at http://169.254.169.254/ would read the cloud's credentials, one at http://10.0.0.5/
would reach the internal network. `GuardedTransport` checks every request an httpx client sends,
redirects included, after resolving the host, then connects to the very address it checked, so a
DNS answer that changes between the check and the connection cannot slip through (over https the
name is still the one the TLS handshake sends and the certificate is verified against).

The check is on the address, never on the URL's text: a numeric host is read the way the C resolver
reads it (2130706433, 0x7f.1, 127.1), an IPv6 form carrying an IPv4 address is judged by that
address (mapped, translated, compatible, NAT64, 6to4, Teredo), and loopback and metadata names are
refused without asking DNS. `host_refusal` says the same for a host alone (the admin's form).

Development and the embedded demo agents need loopback, so `allow_private=True` lets loopback,
private, link-local and unspecified addresses through. Cloud metadata and addresses that are never
a unicast host (multicast, reserved, broadcast) are refused whatever the setting.

Pure httpx: no Django here, the SDK could be published on its own.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import socket
from collections.abc import Iterable

import httpx

__all__ = [
    "METADATA_HOSTNAMES",
    "AddressRefusedError",
    "GuardedTransport",
    "check_address",
    "host_refusal",
    "literal_address",
    "refusal_reason",
    "resolve_and_check",
    "same_origin",
]

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

# Cloud metadata services: AWS/GCP/Azure/OpenStack (169.254.169.254), AWS ECS task metadata
# (169.254.170.2), AWS over IPv6 (fd00:ec2::254), Alibaba Cloud (100.100.100.200).
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200")
)
METADATA_HOSTNAMES = frozenset({"metadata.google.internal", "metadata.goog", "metadata"})

# Kind -> networks, checked in this order (metadata first: it sits inside link-local and private).
_RANGES: tuple[tuple[str, tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]], ...] = tuple(
    (kind, tuple(ipaddress.ip_network(n) for n in networks))
    for kind, networks in (
        ("unspecified", ("0.0.0.0/8", "::/128")),
        ("loopback", ("127.0.0.0/8", "::1/128")),
        ("link-local", ("169.254.0.0/16", "fe80::/10")),
        # 100.64/10 is carrier-grade NAT, used inside clouds; fc00::/7 is IPv6's unique local range.
        # fec0::/10 is IPv6's deprecated site-local range, still routed inside some networks.
        (
            "private",
            ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7", "fec0::/10"),
        ),
    )
)
# What `allow_private` lets through; everything else refused here is refused always.
_ALLOWABLE = frozenset({"unspecified", "loopback", "link-local", "private"})

# IPv6 forms that carry an IPv4 address in their last 32 bits, besides the IPv4-mapped ::ffff:0:0/96
# that `ipv4_mapped` reads and 6to4 (2002::/16) and Teredo (2001::/32) that `sixtofour` and `teredo`
# read: NAT64 (64:ff9b::/96, and the local-use 64:ff9b:1::/48), IPv4-translated ::ffff:0:0:0/96 and
# the deprecated IPv4-compatible ::/96 (::127.0.0.1).
_LAST_32_BITS = tuple(
    ipaddress.ip_network(n) for n in ("64:ff9b::/96", "64:ff9b:1::/48", "::ffff:0:0:0/96", "::/96")
)
# Names that are loopback by definition (RFC 6761), refused without asking DNS.
_LOOPBACK_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")


class AddressRefusedError(httpx.ConnectError):
    """A request the guard would not send. A ConnectError, so every client reports it as
    "could not be reached", with this message saying why."""


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if any(address in network for network in _LAST_32_BITS) and int(address) > 1:  # not :: or ::1
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def refusal_reason(address: IPAddress) -> str | None:
    """The kind of address this is when agent traffic must not go there, else None.

    One of "cloud metadata", "unspecified", "loopback", "link-local", "private", "reserved".
    """
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return refusal_reason(embedded)
    if address in METADATA_ADDRESSES:
        return "cloud metadata"
    for kind, networks in _RANGES:
        if any(address in network for network in networks):
            return kind
    if address.is_multicast or address.is_reserved or address == ipaddress.IPv4Address("255.255.255.255"):
        return "reserved"
    return None


def _a(kind: str) -> str:
    """ "a private address", "an unspecified address" """
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind} address"


def check_address(address: IPAddress, *, allow_private: bool) -> None:
    """Raise AddressRefusedError when agent traffic must not go to this address."""
    kind = refusal_reason(address)
    if kind is None or (allow_private and kind in _ALLOWABLE):
        return
    raise AddressRefusedError(f"refused: {address} is {_a(kind)}")


def _literal(host: str) -> IPAddress | None:
    try:
        return ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return _inet_aton(host)


_NUMBER = re.compile(r"0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*")


def _inet_aton(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address the C resolver reads in `host`'s numeric forms, which ipaddress does not:
    one to four parts, each decimal, octal (a leading 0) or hex (0x), the last filling the bytes
    left (2130706433, 0177.0.0.1, 0x7f.1, 127.1 are all 127.0.0.1). None when it is a name."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_NUMBER.fullmatch(part) for part in parts):
        return None
    values = [
        int(p[2:] or "0", 16) if p.startswith("0x") else int(p, 8 if p[0] == "0" else 10) for p in parts
    ]
    *leading, last = values
    if any(v > 0xFF for v in leading) or last >= 1 << (8 * (4 - len(leading))):
        return None
    number = last
    for index, value in enumerate(leading):
        number |= value << (8 * (3 - index))
    return ipaddress.IPv4Address(number)


def literal_address(host: str) -> IPAddress | None:
    """The address a URL's host names by itself, in any spelling the resolver reads (IPv6 in
    brackets with a zone, IPv4 in decimal, octal, hex or short forms, a trailing dot); None for a name."""
    return _literal(host.rstrip(".").lower())


def host_refusal(host: str, *, allow_private: bool) -> str | None:
    """Why agent traffic must not go to `host`, when that is known without asking DNS: an address
    in a refused range, a metadata name, or a loopback name. None when it may (or DNS decides)."""
    name = host.rstrip(".").lower()
    if name in METADATA_HOSTNAMES:
        return f"refused: {name} is {_a('cloud metadata')}"
    if not allow_private and (name in _LOOPBACK_NAMES or name.endswith(".localhost")):
        return f"refused: {name} is {_a('loopback')}"
    literal = _literal(name)
    if literal is None:
        return None
    try:
        check_address(literal, allow_private=allow_private)
    except AddressRefusedError as refused:
        return str(refused)
    return None


async def resolve_and_check(host: str, port: int, *, allow_private: bool) -> IPAddress:
    """The address to connect to for `host`, after checking every address it resolves to.

    Every resolved address must pass: a name answering both a public and a private address would
    otherwise be a coin toss. Raises AddressRefusedError, or httpx.ConnectError when the name does
    not resolve.
    """
    name = host.rstrip(".").lower()
    refused = host_refusal(name, allow_private=allow_private)
    if refused is not None:
        raise AddressRefusedError(refused)
    literal = _literal(name)
    if literal is not None:
        return literal
    loop = asyncio.get_running_loop()
    try:
        infos = await loop.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise httpx.ConnectError(f"the host name {name} does not resolve") from exc
    addresses = _unique(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos)
    if not addresses:
        raise httpx.ConnectError(f"the host name {name} does not resolve")
    for address in addresses:
        kind = refusal_reason(address)
        if kind is not None and not (allow_private and kind in _ALLOWABLE):
            raise AddressRefusedError(f"refused: {name} resolves to {address}, {_a(kind)}")
    return addresses[0]


def _unique(addresses: Iterable[IPAddress]) -> list[IPAddress]:
    return list(dict.fromkeys(addresses))


# Headers that may follow a redirect to another origin. Everything else (a custom credential header
# such as X-Api-Key in particular: httpx only strips Authorization) stays with the first origin.
_CROSS_ORIGIN_HEADERS = frozenset(
    {
        "host",
        "accept",
        "accept-encoding",
        "accept-language",
        "content-type",
        "content-length",
        "transfer-encoding",
        "user-agent",
        "connection",
        "x-agent-sdk-version",
    }
)
_HOP = "agents_ui.redirect_hop"
_FIRST_ORIGIN = "agents_ui.first_origin"


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def same_origin(first: str, second: str) -> bool:
    """Whether a credential meant for `first` may go to `second`: the same scheme, host and port,
    or the default http -> https upgrade of the same host (what a redirect may keep, below)."""
    try:
        a, b = httpx.URL(first), httpx.URL(second)
    except (httpx.InvalidURL, TypeError):
        return False
    if not a.host or not b.host:
        return False
    return _origin(a) == _origin(b) or _is_https_upgrade(_origin(a), b)


class GuardedTransport(httpx.AsyncBaseTransport):
    """Checks each request's destination, then sends it through `inner`.

    Redirects: the client follows them (httpx `follow_redirects`), and each hop comes through here,
    so a redirect to a refused address is refused like any request. The hop count is kept in the
    request's extensions, which httpx copies onto the next hop; past `max_redirects` the request is
    refused as a ConnectError (the client's own limit is set one higher so this message wins over
    httpx.TooManyRedirects, which callers would not recognise as a transport error).
    """

    def __init__(
        self, inner: httpx.AsyncBaseTransport, *, allow_private: bool, max_redirects: int = 3
    ) -> None:
        self._inner = inner
        self.allow_private = allow_private
        self.max_redirects = max_redirects

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in {"http", "https"}:
            raise AddressRefusedError(f"refused: {url.scheme}:// is not http or https", request=request)
        hop = request.extensions.get(_HOP)
        hop = 0 if hop is None else hop + 1
        if hop > self.max_redirects:
            raise AddressRefusedError(
                f"refused: more than {self.max_redirects} redirects (the last one to {url.host})",
                request=request,
            )
        request.extensions[_HOP] = hop
        first_origin = request.extensions.setdefault(_FIRST_ORIGIN, _origin(url))

        port = url.port or (443 if url.scheme == "https" else 80)
        try:
            address = await resolve_and_check(url.host, port, allow_private=self.allow_private)
        except httpx.ConnectError as exc:
            raise type(exc)(str(exc), request=request) from exc

        headers = request.headers
        if _origin(url) != first_origin and not _is_https_upgrade(first_origin, url):
            headers = httpx.Headers(
                [(k, v) for k, v in request.headers.multi_items() if k.lower() in _CROSS_ORIGIN_HEADERS]
            )
        # The connection goes to the address just checked, so a DNS answer that changes after the
        # check (rebinding) cannot send it elsewhere: the Host header keeps the name, and over https
        # the name goes in the TLS handshake (SNI) and the certificate is verified against it.
        extensions = request.extensions
        if url.scheme == "https" and _literal(url.host) is None:
            extensions = {**extensions, "sni_hostname": url.host}
        target = url.copy_with(host=str(address))
        sent = httpx.Request(
            request.method, target, headers=headers, stream=request.stream, extensions=extensions
        )
        return await self._inner.handle_async_request(sent)

    async def aclose(self) -> None:
        await self._inner.aclose()


def _is_https_upgrade(first: tuple[str, str, int | None], url: httpx.URL) -> bool:
    """http://host -> https://host, both on their default ports (80 -> 443): the same agent, as
    httpx itself treats it. From any other port it is another server (an origin is scheme, host
    and port), and the credential stays behind."""
    scheme, host, port = first
    return (
        scheme == "http"
        and port in {None, 80}
        and url.scheme == "https"
        and url.host == host
        and url.port in {None, 443}
    )

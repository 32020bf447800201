"""Over https too, the connection goes to the address the guard checked (DNS rebinding), with the
agent's name in the TLS handshake and the certificate verified against it."""

from __future__ import annotations

import asyncio
import datetime
import socket
import ssl
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agents_ui.endpoints.clients import PoolPerName, agent_client, streaming_agent_client
from agents_ui.sdk.stream_transport import StreamingHTTPTransport

NAMES = ["agent.example.test", "other.example.test"]


def _certificate(subject: str, issuer: x509.Name, key, signer, *, ca: bool) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(signer.public_key()), critical=False
        )
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True, content_commitment=False, key_encipherment=False,
                data_encipherment=False, key_agreement=False, key_cert_sign=True, crl_sign=True,
                encipher_only=False, decipher_only=False,
            ),
            critical=True,
        )  # fmt: skip
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName(name) for name in NAMES]), critical=False
        )
    return builder.sign(signer, hashes.SHA256())


@pytest.fixture
def tls(tmp_path: Path):
    """A CA the client trusts and a server certificate for NAMES signed by it."""
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate(
        "Test CA", x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Test CA")]), ca_key, ca_key, ca=True
    )
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = _certificate(NAMES[0], ca.subject, key, ca_key, ca=False)
    (tmp_path / "server.pem").write_bytes(
        leaf.public_bytes(serialization.Encoding.PEM)
        + key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "server.pem")
    client = ssl.create_default_context(cadata=ca.public_bytes(serialization.Encoding.PEM).decode())
    return server, client


@pytest.fixture
async def agent(tls):
    """An https agent on 127.0.0.1 that records the TLS name and the Host of every request."""
    server_context, _ = tls
    seen: list[tuple[str | None, str]] = []
    names: dict[int, str | None] = {}  # TLS connection -> the name its handshake asked for
    server_context.sni_callback = lambda connection, name, ctx: names.__setitem__(id(connection), name)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            host = next(
                line.split(b":", 1)[1].strip()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"host:")
            )
            seen.append((names[id(writer.get_extra_info("ssl_object"))], host.decode()))
            writer.write(
                b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}'
            )
            await writer.drain()
            if reader.at_eof():
                break

    async def serve(reader, writer):
        try:
            await answer(reader, writer)
        except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=server_context)
    yield server.sockets[0].getsockname()[1], seen
    server.close()
    await server.wait_closed()


@pytest.fixture
def rebinding_dns(monkeypatch):
    """Each name answers 127.0.0.1 the first time it is asked, then 127.0.0.9, where nothing listens."""
    asked: list[str] = []

    async def getaddrinfo(loop, host, port, *args, **kwargs):
        if host not in NAMES:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        address = "127.0.0.1" if host not in asked else "127.0.0.9"
        asked.append(host)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)
    return asked


@pytest.fixture
def one_address(monkeypatch):
    """Every name resolves to 127.0.0.1."""

    async def getaddrinfo(loop, host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

    monkeypatch.setattr(asyncio.BaseEventLoop, "getaddrinfo", getaddrinfo)


@pytest.mark.parametrize("kind", ["pooled", "streaming"])
async def test_https_connects_to_the_address_it_checked_and_verifies_the_name(
    tls, agent, rebinding_dns, kind
):
    _, client_context = tls
    port, seen = agent
    if kind == "pooled":
        client = agent_client(
            allow_private=True, inner=PoolPerName(lambda: httpx.AsyncHTTPTransport(verify=client_context))
        )
    else:
        client = streaming_agent_client(
            allow_private=True, inner=StreamingHTTPTransport(verify=client_context)
        )
    async with client:
        response = await client.get(f"https://agent.example.test:{port}/agent")
    assert response.status_code == 200 and response.json() == {"ok": True}
    # The name was resolved once, by the guard; a second answer (127.0.0.9) never mattered.
    assert rebinding_dns == ["agent.example.test"]
    assert seen == [("agent.example.test", f"agent.example.test:{port}")]


async def test_a_certificate_for_another_name_is_still_refused(tls, agent, one_address):
    _, client_context = tls
    port, seen = agent
    inner = StreamingHTTPTransport(verify=client_context)
    async with streaming_agent_client(allow_private=True, inner=inner) as client:
        with pytest.raises(httpx.ConnectError):
            await client.get(f"https://elsewhere.example.test:{port}/agent")
    assert seen == []


async def test_two_agents_behind_one_address_never_share_a_tls_connection(tls, agent, one_address):
    _, client_context = tls
    port, seen = agent
    inner = PoolPerName(lambda: httpx.AsyncHTTPTransport(verify=client_context))
    async with agent_client(allow_private=True, inner=inner) as client:
        for name in [*NAMES, *NAMES]:
            assert (await client.get(f"https://{name}:{port}/agent")).status_code == 200
    # Each request went over a connection whose TLS name is its own host's.
    assert [(sni, host.split(":")[0]) for sni, host in seen] == [(n, n) for n in [*NAMES, *NAMES]]

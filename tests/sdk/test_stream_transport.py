"""StreamingHTTPTransport against raw sockets: every way a response can be framed, cut or stall."""

from __future__ import annotations

import asyncio
import gzip
import json
import shutil
import ssl
import subprocess

import httpx
import pytest

from agents_ui.sdk import AgUiAgent
from agents_ui.sdk.errors import AgentTimeoutError, AgentUnreachableError, ProtocolError
from agents_ui.sdk.stream_transport import StreamingHTTPTransport


class RawServer:
    """Answers each connection with `respond(request_bytes, writer)`; keeps what it was sent."""

    def __init__(self, respond):
        self.respond = respond
        self.requests: list[bytes] = []
        self.closed = asyncio.Event()

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _handle(self, reader, writer):
        head = await reader.readuntil(b"\r\n\r\n")
        body = b""
        if b"transfer-encoding: chunked" in head.lower():
            while True:
                size = int((await reader.readuntil(b"\r\n")).strip(), 16)
                body += (await reader.readexactly(size + 2))[:size]
                if size == 0:
                    break
        else:
            for line in head.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    body = await reader.readexactly(int(line.split(b":")[1]))
        self.requests.append(head + body)
        try:
            await self.respond(writer)
            await reader.read()  # until the client closes
        except ConnectionError:
            pass
        finally:
            self.closed.set()
            writer.close()


def client(**kwargs) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=StreamingHTTPTransport(), **kwargs)


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


async def test_chunked_body_arrives_chunk_by_chunk_and_the_request_is_sent_whole():
    async def respond(writer):
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ntransfer-encoding: chunked\r\n\r\n")
        for part in (b"one ", b"two ", b"three"):
            writer.write(chunk(part))
            await writer.drain()
            await asyncio.sleep(0.01)
        writer.write(b"0\r\n\r\n")

    async with RawServer(respond) as server, client() as http:
        async with http.stream("POST", f"{server.url}/run?x=1", content=b'{"a":1}') as response:
            assert response.status_code == 200 and response.headers["content-type"] == "text/plain"
            parts = [part async for part in response.aiter_raw()]
    assert parts == [b"one ", b"two ", b"three"]
    assert server.requests[0].startswith(b"POST /run?x=1 HTTP/1.1\r\n")
    assert server.requests[0].endswith(b'\r\n\r\n{"a":1}')


async def test_content_length_and_close_delimited_bodies():
    async def sized(writer):
        writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\n\r\nnope!")

    async def until_close(writer):
        writer.write(b"HTTP/1.1 200 OK\r\n\r\nall of it")
        await writer.drain()
        writer.close()

    async with RawServer(sized) as server, client() as http:
        response = await http.get(server.url)
        assert (response.status_code, response.text) == (404, "nope!")
    async with RawServer(until_close) as server, client() as http:
        assert (await http.get(server.url)).text == "all of it"


async def test_a_body_cut_short_is_a_protocol_error_after_what_arrived():
    async def cut(writer):
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunk(b"partial"))
        await writer.drain()
        writer.transport.abort()

    async with RawServer(cut) as server, client() as http:
        async with http.stream("GET", server.url) as response:
            got = []
            with pytest.raises(httpx.RemoteProtocolError):
                async for part in response.aiter_raw():
                    got.append(part)
    assert got == [b"partial"]


async def test_not_http_and_no_response_are_protocol_errors():
    async def garbage(writer):
        writer.write(b"SSH-2.0-OpenSSH\r\n\r\n")

    async def nothing(writer):
        writer.transport.abort()

    for respond in (garbage, nothing):
        async with RawServer(respond) as server, client() as http:
            with pytest.raises(httpx.RemoteProtocolError):
                await http.get(server.url)


async def test_silence_past_the_read_timeout_is_a_read_timeout_and_closes_the_connection():
    async def stall(writer):
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n" + chunk(b"hello"))
        await writer.drain()
        await asyncio.sleep(0.15)
        writer.write(chunk(b"still here"))  # under the timeout: no error
        # Then nothing: the server waits for the client to close.

    async with RawServer(stall) as server, client(timeout=httpx.Timeout(5, read=0.3)) as http:
        got = []
        with pytest.raises(httpx.ReadTimeout):
            async with http.stream("GET", server.url) as response:
                async for part in response.aiter_raw():
                    got.append(part)
        await asyncio.wait_for(server.closed.wait(), 5)
    assert got == [b"hello", b"still here"]


async def test_closing_the_response_early_closes_the_connection():
    async def endless(writer):
        writer.write(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        while True:
            writer.write(chunk(b"more"))
            await writer.drain()
            await asyncio.sleep(0.01)

    async with RawServer(endless) as server, client() as http:
        async with http.stream("GET", server.url) as response:
            async for _ in response.aiter_raw():
                break
        await asyncio.wait_for(server.closed.wait(), 5)


async def test_refused_connection_is_a_connect_error():
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with client() as http:
        with pytest.raises(httpx.ConnectError):
            await http.get(f"http://127.0.0.1:{port}/")


async def test_interim_responses_are_skipped_and_gzip_is_decoded_by_httpx():
    payload = gzip.compress(b"squeezed")

    async def respond(writer):
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(payload)
        )
        writer.write(payload)

    async with RawServer(respond) as server, client() as http:
        response = await http.get(server.url)
    assert (response.status_code, response.text) == (200, "squeezed")


async def test_a_streamed_request_body_is_sent_chunked():
    async def parts():
        yield b"first,"
        yield b"second"

    async def respond(writer):
        writer.write(b"HTTP/1.1 204 No Content\r\n\r\n")

    async with RawServer(respond) as server, client() as http:
        assert (await http.post(server.url, content=parts())).status_code == 204
    assert server.requests[0].endswith(b"first,second")


async def test_an_agui_run_through_the_sdk_with_its_errors_translated():
    events = [
        {"type": "RUN_STARTED", "threadId": "t", "runId": "r"},
        {"type": "TEXT_MESSAGE_START", "messageId": "m", "role": "assistant"},
        {"type": "TEXT_MESSAGE_CONTENT", "messageId": "m", "delta": "hi"},
        {"type": "TEXT_MESSAGE_END", "messageId": "m"},
        {"type": "RUN_FINISHED", "threadId": "t", "runId": "r"},
    ]

    async def agent(writer):
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        for event in events:
            writer.write(chunk(f"data: {json.dumps(event)}\n\n".encode()))
            await writer.drain()
        writer.write(b"0\r\n\r\n")

    async def silent(writer):
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        await asyncio.sleep(10)

    from ag_ui.core import RunAgentInput

    run_input = RunAgentInput(
        thread_id="t", run_id="r", state=None, messages=[], tools=[], context=[], forwarded_props=None
    )
    async with RawServer(agent) as server, client() as http:
        got = [event.type.value async for event in AgUiAgent(server.url, client=http).run(run_input)]
    assert got == [event["type"] for event in events]
    async with RawServer(silent) as server, client() as http:
        with pytest.raises(AgentTimeoutError):
            async for _ in AgUiAgent(server.url, client=http, timeout=httpx.Timeout(5, read=0.2)).run(
                run_input
            ):
                pass
    async with client() as http:
        with pytest.raises(AgentUnreachableError):
            async for _ in AgUiAgent("http://127.0.0.1:9/", client=http).run(run_input):
                pass

    async def cut(writer):
        writer.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
        )
        writer.write(chunk(f"data: {json.dumps(events[0])}\n\n".encode()))
        await writer.drain()
        writer.transport.abort()

    async with RawServer(cut) as server, client() as http:
        got = []
        with pytest.raises(ProtocolError):
            async for event in AgUiAgent(server.url, client=http).run(run_input):
                got.append(event.type.value)
    assert got == ["RUN_STARTED"]


@pytest.fixture
def certificate(tmp_path):
    """A self-signed certificate for localhost: (certificate, key) files."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a certificate")
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    command = ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert]
    command += ["-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"]
    subprocess.run(command, check=True, capture_output=True)
    return cert, key


async def test_https_verifies_the_certificate(certificate):
    cert, key = certificate
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)

    async def handle(reader, writer):
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecret")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=served)
    url = f"https://localhost:{server.sockets[0].getsockname()[1]}/"
    try:
        trusting = ssl.create_default_context(cafile=cert)
        async with httpx.AsyncClient(transport=StreamingHTTPTransport(verify=trusting)) as http:
            assert (await http.get(url)).text == "secret"
        async with httpx.AsyncClient(
            transport=StreamingHTTPTransport(verify=ssl.create_default_context())
        ) as http:
            with pytest.raises(httpx.ConnectError, match="certificate verify failed"):
                await http.get(url)
    finally:
        server.close()

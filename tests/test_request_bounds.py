"""A request body is bounded before Django reads any of it."""

from __future__ import annotations

import pytest

from project.asgi import BoundedBody

LIMIT = 1000


class Recorder:
    """An application that reads the whole body, as Django's handler does."""

    def __init__(self) -> None:
        self.read = b""
        self.called = False

    async def __call__(self, scope, receive, send):
        self.called = True
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            self.read += message.get("body", b"")
            if not message.get("more_body"):
                break
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


async def call(headers, chunks):
    app, sent = Recorder(), []
    messages = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1} for i, c in enumerate(chunks)
    ]
    pulled = 0

    async def receive():
        nonlocal pulled
        pulled += 1
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    await BoundedBody(app)(scope, receive, send)
    return app, sent, pulled


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.AGENTS_UI_MAX_REQUEST_BYTES = LIMIT


async def test_a_declared_length_over_the_bound_is_refused_unread():
    app, sent, pulled = await call([(b"content-length", b"16000000")], [b"x" * 100])
    assert not app.called and pulled == 0
    assert sent[0]["status"] == 413 and b"too large" in sent[1]["body"]


async def test_a_body_without_a_length_is_cut_when_it_passes_the_bound():
    app, sent, pulled = await call([], [b"x" * 600] * 10)
    assert sent[0]["status"] == 413 and len(sent) == 2  # the application answered nothing more
    assert pulled == 2 and len(app.read) == 600


async def test_a_body_within_the_bound_reaches_the_application():
    app, sent, _ = await call([(b"content-length", b"900")], [b"x" * 450, b"y" * 450])
    assert app.read == b"x" * 450 + b"y" * 450 and sent[0]["status"] == 200


async def test_a_nonsense_length_is_refused():
    app, sent, _ = await call([(b"content-length", b"lots")], [b""])
    assert not app.called and sent[0]["status"] == 413

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


# --- Every reader of a body has a bound, and docs/security.md lists it --------------------------------

# Each function that reads a body (an incoming request's, or an answer's bytes it parses as JSON)
# -> the row of docs/security.md's "Every bound and where it is set" that bounds it. A new reader
# without a row here fails `test_every_reader_of_a_body_has_a_listed_bound`.
BODY_READERS = {
    "agents_ui.demo.gate.read_body": "the demo agents",
    "agents_ui.demo.views.agui_run": "the demo agents",
    "agents_ui.demo.views._parse": "the demo agents",
    "agents_ui.demo.views.files": "a request body",
    "agents_ui.demo.views.handle": "a request body",
    "agents_ui.runs.protocols.agui.decide": "edited arguments of an approval",
    "agents_ui.runs.protocols.external._decide_one": "edited arguments of an approval",
    "agents_ui.views.composer._read_composer": "a user's message / an upload",
    "agents_ui.views.compare.start": "a user's message / an upload",
    "agents_ui.sdk.agui.client._json_events": "one SSE frame",
    "agents_ui.sdk.errors.error_from_response": "error body read",
    "agents_ui.sdk.transport.read_json": "JSON answer (declaration, policy, others)",
    # The product's own outgoing request bodies (httpx's request.stream), not a body it reads.
    "agents_ui.sdk.guard.handle_async_request": "",
    "agents_ui.sdk.stream_transport._send": "",
}
_READS = {"body", "read", "stream", "FILES", "readline", "readlines"}
_BODY_NAMES = {"request", "posted", "raw", "body", "response"}


def body_readers() -> set[str]:
    """Functions of agents_ui that read `request.body` (or read, stream, FILES), or parse JSON out
    of a request, a posted form, a raw body or a response."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    found = set()
    for path in sorted((root / "agents_ui").rglob("*.py")):
        if "migrations" in path.parts:
            continue
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        for function in ast.walk(ast.parse(path.read_text())):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names = {a.arg for a in function.args.args + function.args.kwonlyargs}
            for node in ast.walk(function):
                reads = (
                    isinstance(node, ast.Attribute)
                    and isinstance(node.value, ast.Name)
                    and node.value.id == "request"
                    and node.attr in _READS
                )
                parses = (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "loads"
                    and getattr(node.func.value, "id", "") == "json"
                    and bool(names & _BODY_NAMES)
                )
                if reads or parses:
                    found.add(f"{module}.{function.name}")
                    break
    return found


def bounds_section() -> str:
    from pathlib import Path

    text = (Path(__file__).resolve().parent.parent / "docs" / "security.md").read_text()
    return text.split("## Every bound and where it is set", 1)[1].split("\n## Shared links", 1)[0]


def test_every_reader_of_a_body_has_a_listed_bound():
    found = body_readers()
    assert found == set(BODY_READERS), (
        f"not listed: {sorted(found - set(BODY_READERS))}; gone: {sorted(set(BODY_READERS) - found)}"
    )
    rows = [line.split("|")[1].strip() for line in bounds_section().splitlines() if line.startswith("| ")]
    for reader, bound in BODY_READERS.items():
        if bound:
            assert any(row.startswith(bound) for row in rows), (
                f"{reader}: no row {bound!r} in docs/security.md"
            )


def test_every_form_a_view_reads_is_bounded_before_it_is_read(settings):
    """request.POST and request.FILES, read by every view that takes a form: Django's bounds are set,
    and the whole body is bounded before Django reads any of it."""
    from project import asgi

    for name in (
        "DATA_UPLOAD_MAX_MEMORY_SIZE",
        "FILE_UPLOAD_MAX_MEMORY_SIZE",
        "DATA_UPLOAD_MAX_NUMBER_FIELDS",
        "DATA_UPLOAD_MAX_NUMBER_FILES",
        "AGENTS_UI_MAX_REQUEST_BYTES",
        "AGENTS_UI_MAX_MESSAGE_CHARS",
        "AGENTS_UI_MAX_UPLOAD_BYTES",
    ):
        value = getattr(settings, name)
        assert isinstance(value, int) and value > 0, name
        assert name in bounds_section(), f"{name} is not listed in docs/security.md"
    layer, seen = asgi.application, set()
    while not isinstance(layer, BoundedBody) and id(layer) not in seen:
        seen.add(id(layer))
        layer = getattr(layer, "app", None) or getattr(layer, "application", None)
    assert isinstance(layer, BoundedBody), "the served application bounds request bodies"

"""Every file the product serves: `nosniff`, an attachment unless it is a raster image checked from its
bytes (the image proxy), and a type read from the content, never from the agent's label or the name.

The walk finds every route whose view hands over bytes rather than a page, so a new download or
preview route that is not checked here fails (`FILE_ROUTES`)."""

from __future__ import annotations

import ast
import inspect
import re
import textwrap

import pytest

from agents_ui.runs.protocols.base import ArtifactFile
from agents_ui.views.artifacts import file_download, served_type
from tests.support.routes import product_routes

# route -> how its file goes out, and the test that checks it on a real response.
FILE_ROUTES = {
    "run-artifact": "file_download: attachment, nosniff, sandbox; tests/views/test_hostile_surfaces.py",
    "shared-artifact": "file_download, as run-artifact; tests/views/test_hostile_surfaces.py",
    "conversation-export": "attachment, nosniff, sandbox; tests/views/test_hostile_surfaces.py",
    "run-image": "inline: PNG/JPEG/GIF/WebP read from the bytes, nosniff, sandbox; test_image_proxy.py",
}
RESPONSES = {"HttpResponse", "FileResponse", "StreamingHttpResponse"}


def _hands_over_bytes(function) -> bool:
    """The view builds a response from data (not a literal sentence or a template), or calls a helper
    that does."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        if name == "file_download":
            return True
        if name in RESPONSES and node.args:
            first = node.args[0]
            sentence = isinstance(first, ast.Constant | ast.JoinedStr) or (
                isinstance(first, ast.Call) and getattr(first.func, "id", None) == "str"
            )
            if not sentence:
                return True
    return False


def test_every_route_that_hands_over_a_file_is_checked():
    found = set()
    for name, pattern in product_routes().items():
        view = inspect.unwrap(pattern.callback)
        if _hands_over_bytes(view):
            found.add(name)
    assert found == set(FILE_ROUTES), f"routes handing over files: {sorted(found)}"


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489")


@pytest.mark.parametrize(
    ("name", "label", "data", "served"),
    [
        ("evil.html", "text/html", b"<script>window.__pwned='file'</script>", "application/octet-stream"),
        ("evil.svg", "image/svg+xml", b"<svg onload='window.__pwned=1'/>", "application/octet-stream"),
        (
            "evil.xhtml",
            "application/xhtml+xml",
            b"<html xmlns='http://www.w3.org/1999/xhtml'/>",
            "application/octet-stream",
        ),
        ("evil.xml", "text/xml", b"<?xml version='1.0'?><x/>", "application/octet-stream"),
        ("evil.js", "text/javascript", b"window.__pwned='js'", "application/octet-stream"),
        ("evil.txt", "TEXT/HTML; charset=utf-8", b"<script>1</script>", "application/octet-stream"),
        ("evil.txt", "text/plain", "<script>1</script>".encode("utf-16"), "application/octet-stream"),
        ("image.png", "text/plain", PNG + b"\xff\xfe", "application/octet-stream"),
        ("image.png", "image/png", PNG, "application/octet-stream"),
        ("page.html", "text/plain", b"<script>window.__pwned='named'</script>", "text/plain; charset=utf-8"),
        ("table.csv", "text/csv", b"a,b\n1,2\n", "text/csv; charset=utf-8"),
        ("bad type", "text/plain\r\nX-Evil: 1", b"hello", "application/octet-stream"),
    ],
)
def test_a_file_goes_out_to_be_saved_with_a_type_its_bytes_bear_out(name, label, data, served):
    file = ArtifactFile(data=data, name=name, content_type=label)
    assert served_type(file) == served
    response = file_download(file)
    assert response["Content-Type"] == served
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Content-Disposition"].startswith("attachment;")
    assert response["Content-Security-Policy"] == "sandbox; default-src 'none'"
    assert response.content == data


@pytest.mark.parametrize("name", ["a\r\nSet-Cookie: x=1", 'x"; filename=evil.html', "../../etc/passwd"])
def test_a_file_name_cannot_add_a_header_or_a_second_name(name):
    response = file_download(ArtifactFile(data=b"x", name=name, content_type="text/plain"))
    disposition = response["Content-Disposition"]
    # One name, quoted without an escape a parser could misread, or percent-encoded; no path.
    assert re.fullmatch(r'attachment; (filename="[^"\\/\r\n]*"|filename\*=utf-8\'\'[^"\s;/]*)', disposition)
    assert "Set-Cookie" not in response

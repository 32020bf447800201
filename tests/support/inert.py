"""What a browser would execute in a page: the check every hostile-input test makes of what it got."""

from __future__ import annotations

from html.parser import HTMLParser


class ActiveMarkup(HTMLParser):
    """Collects what a browser would execute: scripts that are not the product's own, inline event
    handlers, javascript: URLs, and frames or plug-ins."""

    URL_ATTRIBUTES = frozenset({"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("iframe", "frame", "object", "embed"):
            self.found.append(f"<{tag}>")
        if tag == "script":
            self._in_script = True
            if "nonce" not in values and not (values.get("src") or "").startswith("/static/"):
                self.found.append(f"<script {values}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name in self.URL_ATTRIBUTES and _active_address(value or ""):
                self.found.append(f"<{tag} {name}={value!r}>")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script and "__pwned" in data:
            self.found.append(f"script text {data[:60]!r}")


# Raster images are the only data: addresses a page may hold (an <img> of them runs nothing).
_RASTER_DATA = ("data:image/png", "data:image/jpeg", "data:image/gif", "data:image/webp")


def _active_address(value: str) -> bool:
    """An address a browser would run or open as the agent's markup: javascript:, vbscript:, or a
    data: address that is not a raster image, however it is spelled (browsers drop ASCII
    whitespace and control characters inside a scheme and ignore its case)."""
    scheme = "".join(c for c in value if c > " " and c != "\x7f").lower()
    if scheme.startswith(("javascript:", "vbscript:")):
        return True
    return scheme.startswith("data:") and not scheme.startswith(_RASTER_DATA)


def assert_inert(html: str) -> None:
    """Nothing in the page (or in an SSE stream of fragments) would run."""
    if html.startswith("event: "):
        html = "\n".join(line.removeprefix("data: ") for line in html.splitlines())
    parser = ActiveMarkup()
    parser.feed(html)
    parser.close()
    assert not parser.found, parser.found


def assert_pages_inert(pages: dict[str, str]) -> None:
    """Each named page (or stream) is inert; a failure names the page."""
    for name, html in pages.items():
        try:
            assert_inert(html)
        except AssertionError as problem:
            raise AssertionError(f"{name}: {problem}") from None

"""What a browser would execute in a page: the check every hostile-input test makes of what it got."""

from __future__ import annotations

from html.parser import HTMLParser


class ActiveMarkup(HTMLParser):
    """Collects what a browser would execute or load for the agent: scripts that are not the product's
    own, inline event handlers, javascript: URLs, frames or plug-ins, styles that are not the
    product's (CSS injection), a <base> or a refresh, and anything loaded from another origin."""

    URL_ATTRIBUTES = frozenset(
        {"href", "src", "action", "formaction", "xlink:href", "data", "srcdoc", "poster", "background"}
        | {"ping"}
    )
    # Attributes whose address the browser loads by itself, without a click.
    LOADED = frozenset({"src", "poster", "background", "srcset", "data"})

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
        if tag == "style" and "nonce" not in values:
            self.found.append("<style> without the page's nonce")
        if tag == "base" or (tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh"):
            self.found.append(f"<{tag} {values}>")
        if tag == "link" and _elsewhere(values.get("href") or ""):
            self.found.append(f"<link {values}>")
        for name, value in attrs:
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}={value!r}>")
            if name == "style":
                self.found.append(f"<{tag} style={value!r}>")
            if name in self.URL_ATTRIBUTES and _active_address(value or ""):
                self.found.append(f"<{tag} {name}={value!r}>")
            addresses = [v.split()[0] for v in (value or "").split(",") if v.strip()]
            if name in self.LOADED and any(_elsewhere(a) for a in addresses):
                self.found.append(f"<{tag} {name}={value!r}> loads from another origin")

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


def _elsewhere(value: str) -> bool:
    """An address on another origin (absolute, or protocol-relative): the page must load none."""
    address = "".join(c for c in value if c > " " and c != "\x7f").lower().replace("\\", "/")
    return address.startswith(("http:", "https:", "//", "ftp:"))


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

"""No icon character that the page's fonts may lack: they would show as an empty box ("▯ Sunrise over
the bay"). Templates, stylesheets, scripts and the Python that writes display text hold ASCII and a
small set of typographic characters every common font has; icons are inline SVG, or words.

The demo agents are left out: what they say is an agent's own text, as any agent's would be.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
# Punctuation and currency signs present in every font a browser falls back to (WGL4).
ALLOWED = frozenset(
    "\u2026\u00b7"  # ellipsis, middle dot
    "\u201c\u201d\u2018\u2019"  # curly quotes
    "\u2014\u2013"  # em and en dashes
    "\u20ac\u00a3\u00a5\u00d7"  # euro, pound, yen, multiplication sign
    "\u00a0"  # no-break space
)
SOURCES = {
    "templates": ("templates", ("*.html", "*.txt")),
    "stylesheets and scripts": ("static/agents_ui", ("*.css", "*.js")),
    "Python": ("agents_ui", ("*.py",)),
}


def strays(folder: str, patterns: tuple[str, ...], root: Path = ROOT) -> list[str]:
    found = []
    for pattern in patterns:
        for path in sorted((root / folder).rglob(pattern)):
            if "demo" in path.relative_to(root).parts:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                for char in dict.fromkeys(line):
                    if ord(char) > 127 and char not in ALLOWED:
                        name = unicodedata.name(char, hex(ord(char)))
                        found.append(f"{path.relative_to(root)}:{number}: {char!r} ({name})")
    return found


@pytest.mark.parametrize("kind", list(SOURCES))
def test_no_character_outside_the_allowed_set(kind):
    folder, patterns = SOURCES[kind]
    assert strays(folder, patterns) == []


def test_the_check_sees_a_stray_glyph(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "page.html").write_text("<p>\u25af Sunrise · “fine”</p>\n", encoding="utf-8")
    assert strays("t", ("*.html",), tmp_path) == ["t/page.html:1: '\u25af' (WHITE VERTICAL RECTANGLE)"]

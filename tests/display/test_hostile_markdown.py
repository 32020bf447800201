"""The one Markdown pipeline against every payload of the catalogue, in every form Markdown writes a
link or an image: nothing a browser would run, open or load is left; math is not rendered at all
(no KaTeX, so no KaTeX error fallback to inject through): `$$...$$` stays text."""

from __future__ import annotations

import pytest

from agents_ui.display.markdown import markdown_html, simple_markdown_html, streaming_markdown
from tests.support.fault_agent import MARKDOWN_FORMS, PAYLOADS, URL_MARKDOWN, URL_PAYLOADS
from tests.support.inert import assert_inert


@pytest.mark.parametrize("payload", [*PAYLOADS, *URL_PAYLOADS, URL_MARKDOWN, MARKDOWN_FORMS])
@pytest.mark.parametrize("media", [False, True])
def test_no_payload_survives_the_markdown_pipeline(payload, media):
    assert_inert(markdown_html(payload, media=media))
    live = streaming_markdown(payload, media=media)  # as it streams: what settled, and the tail
    assert_inert(live.settled_html + live.tail_html)
    assert_inert(str(simple_markdown_html(payload)))


@pytest.mark.parametrize("url", URL_PAYLOADS)
def test_a_script_address_in_any_link_form_is_text(url):
    for text in (f"[a]({url})", f"![a]({url})", f"<{url}>", f"[a][r]\n\n[r]: {url}"):
        html = markdown_html(text, media=True)
        assert_inert(html)
        assert "href=" not in html or 'href="http' in html or 'href="#' in html, (text, html)


def test_math_is_not_rendered_it_stays_text():
    html = markdown_html("Euler: $$e^{i\\pi} + 1 = 0$$ and $\\href{javascript:alert(1)}{x}$")
    assert "$$e^{i\\pi} + 1 = 0$$" in html and "katex" not in html.lower()
    assert "<math" not in html and "href=" not in html and "$\\href{javascript:alert(1)}{x}$" in html

"""The per-delta fragments filled in from a stamp are what their template renders, escaped alike."""

import pytest
from django.template.loader import render_to_string
from django.utils.safestring import mark_safe

from agents_ui.display import stream_diff

TEXTS = [
    "word",
    " two words",
    "",
    "<script>alert(1)</script>",
    "a & b \"quoted\" 'single'",
    "\x00text\x00",
    "ünï 😀",
]


@pytest.mark.parametrize("partial", sorted(stream_diff.STAMPED))
@pytest.mark.parametrize("text", TEXTS)
def test_a_stamped_fragment_is_its_template_rendered(partial: str, text: str) -> None:
    context = {"dom": "msg-0a1b", "text": text}
    assert stream_diff._stamped(partial, context) == render_to_string(
        f"agents_ui/run.html#{partial}", context
    )


def test_a_dom_id_and_safe_text_are_filled_in_as_the_template_does() -> None:
    context = {"dom": 'x"><b>', "text": mark_safe("<em>kept</em>")}
    for partial in stream_diff.STAMPED:
        assert stream_diff._stamped(partial, context) == render_to_string(
            f"agents_ui/run.html#{partial}", context
        )


def test_with_debug_on_the_template_is_rendered_each_time(settings) -> None:
    settings.DEBUG = True
    stream_diff._stamps.clear()
    html = stream_diff._fragment("text-growth", dom="why-1", text="<i>")
    assert html == render_to_string("agents_ui/run.html#text-growth", {"dom": "why-1", "text": "<i>"})
    assert "text-growth" not in stream_diff._stamps

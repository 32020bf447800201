"""A run's approval requests are one list of typed cards, decided with one form contract, whatever
protocol asked them; and the display layer stands on its own."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from django.template.loader import render_to_string
from django.utils import timezone

from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.cards import ApprovalCard
from agents_ui.display.markdown import markdown_html, simple_markdown_html
from agents_ui.display.run_view import RunView
from agents_ui.display.values import dom_id
from agents_ui.models import Conversation, Run
from agents_ui.sdk import TranscriptBuilder
from agents_ui.sdk.external import policy as ext
from tests.factories import make_endpoint, make_user
from tests.test_layers import PACKAGE, imported_names, modules

REFUND = {"amount": 35, "currency": "EUR"}


def external_view(*, can_approve: bool = True) -> RunView:
    user = make_user("ada")
    endpoint = make_endpoint(protocol="external")
    conversation = Conversation.objects.create(user=user, endpoint=endpoint, title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.RUNNING)
    run.conversation = conversation
    builder = TranscriptBuilder()
    builder.apply(
        ext.ApprovalRequested(
            approval_id="apr1", tool_call_id="c1", public_name="issue_refund", input=REFUND,
            side_effect_class="financial", expires_at=(timezone.now() + timedelta(minutes=5)).isoformat(),
        )
    )  # fmt: skip
    plan = decide(user=UserAbilities(can_approve=True, can_upload=True, can_view_reasoning=True))
    return RunView(run, builder.transcript, plan, can_approve=can_approve)


@pytest.mark.django_db
def test_an_external_request_is_a_typed_approval_card_decided_in_place():
    view = external_view()
    [card] = view.approvals()
    assert isinstance(card, ApprovalCard)
    assert (card.id, card.tool, card.side_effect_class, card.in_place, card.open) == (
        "apr1", "issue_refund", "financial", True, True,
    )  # fmt: skip
    [form] = view.approval_forms()
    assert form.in_place and form.requests == [card] and form.errors_id == f"{dom_id('apr', 'apr1')}-errors"


@pytest.mark.django_db
def test_the_approval_card_posts_the_decision_and_the_edited_arguments_of_each_request():
    view = external_view()
    html = render_to_string("agents_ui/run.html#approvals", view.context())
    assert html.count("<form") == 1 and 'data-approval="apr1"' in html
    assert 'name="decision-apr1" value="approve"' in html and 'name="decision-apr1" value="reject"' in html
    assert f'id="{dom_id("apr", "apr1")}-errors"' in html and 'name="edited-apr1"' not in html  # not editable
    assert "<fieldset" in html and "<legend>" in html  # each request labelled, as the AG-UI form does
    assert 'name="approval"' not in html and 'value="deny"' not in html
    # Where the agent takes edits, the card sends them beside the decision.
    [form] = view.approval_forms()
    editable = replace(form, requests=[replace(form.request, editable=True)])
    html = render_to_string("agents_ui/approval_card.html", view.context(form=editable))
    assert 'name="edited-apr1"' in html and "Edit the input before approving" in html


@pytest.mark.django_db
def test_without_the_right_to_approve_the_card_shows_the_request_and_no_button():
    html = render_to_string("agents_ui/run.html#approvals", external_view(can_approve=False).context())
    assert "issue_refund" in html and "data-cannot-approve" in html
    assert "<button" not in html and 'name="edited-apr1"' not in html


def test_a2ui_text_goes_through_the_one_pipeline_and_keeps_only_simple_markdown():
    html = simple_markdown_html("**Hi** ![a cat](https://x.test/cat.png) [docs](https://x.test) <b>raw</b>")
    assert "<strong>Hi</strong>" in html and "a cat" in html and "docs" in html
    assert "<img" not in html and "<a" not in html and "<b>" not in html and "&lt;b&gt;" in html
    assert simple_markdown_html("# Title *now*", inline=True) == "Title <em>now</em>"
    # Answers keep their links, through the same parser and sanitiser.
    assert 'href="https://x.test"' in markdown_html("[docs](https://x.test)")


def test_no_display_module_or_template_tag_imports_a_view_and_none_is_too_long():
    for name, path in modules().items():
        if name.startswith(("agents_ui.display", "agents_ui.templatetags")):
            views = [found for found in imported_names(path, name) if found.startswith("agents_ui.views")]
            assert not views, f"{name} imports {views}"
    for path in (PACKAGE / "display").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 600, path

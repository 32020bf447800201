"""A run whose answer broke its protocol says so in one sentence; the technical list is for staff,
folded under "Technical detail"."""

from __future__ import annotations

import pytest
from django.template.loader import render_to_string

from agents_ui.decisions import UserAbilities, decide
from agents_ui.display.run_view import RunView
from agents_ui.models import Conversation, Run
from agents_ui.sdk import TranscriptBuilder
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db

PROBLEM = "a TEXT_MESSAGE_CHUNK without messageId and no open message"


@pytest.mark.parametrize("staff", [False, True], ids=["person", "staff"])
def test_protocol_problems_are_one_sentence_with_the_detail_for_staff(staff):
    user = make_user(staff=staff)
    conversation = Conversation.objects.create(user=user, endpoint=make_endpoint(), title="t")
    run = Run.objects.create(conversation=conversation, request={}, status=Run.Status.COMPLETED)
    builder = TranscriptBuilder()
    builder.transcript.errors.append(PROBLEM)
    view = RunView(run, builder.transcript, decide(user=UserAbilities()))
    html = render_to_string("agents_ui/run.html#run", view.context(user=user))
    assert "did not follow its protocol, so it is left out." in html
    before_detail = html.split("data-technical")[0]
    assert PROBLEM not in before_detail
    assert (PROBLEM in html) is staff
    assert ("data-technical" in html) is staff

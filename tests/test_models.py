import pytest
from django.core.exceptions import ValidationError

from agents_ui.models import AgentEndpoint, validate_agent_url
from tests.factories import make_endpoint


@pytest.mark.parametrize(
    ("url", "code"),
    [
        ("ftp://agent.example.test/", "scheme"),
        ("agent.example.test/run", "scheme"),
        ("file:///etc/passwd", "scheme"),
        ("https://user:secret@agent.example.test/", "credentials_in_url"),
        ("https://token@agent.example.test/", "credentials_in_url"),
    ],
)
def test_refused_agent_urls_say_why(url, code):
    with pytest.raises(ValidationError) as info:
        validate_agent_url(url)
    assert info.value.code == code


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/demo-agents/x/", "https://agent.example.test/run"])
def test_accepted_agent_urls(url):
    validate_agent_url(url)


@pytest.mark.django_db
def test_credentials_in_url_are_refused_by_full_clean():
    endpoint = AgentEndpoint(name="A", slug="a", base_url="https://u:p@agent.example.test/")
    with pytest.raises(ValidationError) as info:
        endpoint.full_clean()
    assert "credential field" in str(info.value.message_dict["base_url"])


@pytest.mark.django_db
def test_custom_header_needs_a_name():
    endpoint = AgentEndpoint(
        name="A", slug="a", base_url="https://agent.example.test/", auth_kind="header", credential="x"
    )
    with pytest.raises(ValidationError) as info:
        endpoint.full_clean()
    assert "auth_header_name" in info.value.message_dict


@pytest.mark.django_db
def test_auth_headers_carry_the_credential():
    bearer = make_endpoint(auth_kind="bearer", credential="tok")
    header = make_endpoint(auth_kind="header", auth_header_name="X-Api-Key", credential="k")
    none = make_endpoint(credential="")
    assert bearer.auth_headers() == {"Authorization": "Bearer tok"}
    assert header.auth_headers() == {"X-Api-Key": "k"}
    assert none.auth_headers() == {}
    assert bearer.host == "agent" + bearer.slug.split("-")[1] + ".example.test"


@pytest.mark.django_db
def test_an_endpoint_is_open_to_exactly_the_people_its_list_rule_lets_use_it():
    from django.contrib.auth.models import AnonymousUser, Group

    from agents_ui.views.access import open_to
    from tests.factories import make_user

    finance, legal = Group.objects.create(name="finance"), Group.objects.create(name="legal")
    everyone, for_finance, for_both = make_endpoint(), make_endpoint(), make_endpoint()
    off = make_endpoint(enabled=False)
    for_finance.allowed_groups.add(finance)
    for_both.allowed_groups.add(finance, legal)
    outsider, accountant, lawyer = make_user(), make_user(), make_user()
    accountant.groups.add(finance)
    lawyer.groups.add(legal, Group.objects.create(name="other"))
    root = make_user(superuser=True)
    people = [outsider, accountant, lawyer, root, AnonymousUser()]
    for person in people:
        listed = set(AgentEndpoint.objects.usable_by(person).values_list("pk", flat=True))
        for endpoint in (everyone, for_finance, for_both, off):
            assert open_to(endpoint, person) == (endpoint.pk in listed), (person, endpoint)
    assert open_to(for_finance, accountant) and not open_to(for_finance, lawyer)
    assert open_to(for_both, lawyer) and not open_to(for_both, outsider) and not open_to(off, root)


@pytest.mark.django_db
def test_the_side_lists_latest_conversations_are_the_ones_the_conversations_rule_lists():
    from datetime import timedelta

    from django.utils import timezone

    from agents_ui.comparisons import ComparePane, CompareSession
    from agents_ui.models import Conversation
    from agents_ui.views.conversations import RECENT_LIMIT, Recent, listed
    from tests.factories import make_user

    person, someone_else = make_user(), make_user()
    agent, other_agent = make_endpoint(), make_endpoint()
    session = CompareSession.objects.create(user=person, content="Which is better?")
    now = timezone.now()
    for i in range(RECENT_LIMIT + 4):
        for owner, endpoint in ((person, agent), (person, other_agent), (someone_else, agent)):
            conversation = Conversation.objects.create(user=owner, endpoint=endpoint, title=f"#{i}")
            Conversation.objects.filter(pk=conversation.pk).update(updated_at=now - timedelta(minutes=i))
            if i % 3 and owner is person:  # a side of a comparison: shown once continued
                ComparePane.objects.create(
                    session=session,
                    position=ComparePane.objects.count(),
                    conversation=conversation,
                    continued_at=now if i % 3 == 2 else None,
                )
    for owner, endpoint in ((person, agent), (person, other_agent), (someone_else, agent)):
        expected = listed(Conversation.objects.filter(user=owner, endpoint=endpoint)).order_by("-updated_at")
        shown = list(Recent(owner, endpoint))
        assert [c.pk for c in shown] == [c.pk for c in expected[:RECENT_LIMIT]]
        assert [(c.title, c.updated_at, c.endpoint) for c in shown] == [
            (c.title, c.updated_at, endpoint) for c in expected[:RECENT_LIMIT]
        ]
    assert len(Recent(person, agent)) == RECENT_LIMIT  # the ones left out leave room for older ones

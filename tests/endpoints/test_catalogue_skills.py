"""An A2A agent's catalogue card names its skills (as the workspace's chooser does): a few names, each
cut to a readable length, then how many more; the names are the agent's, so the page escapes them."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async
from django.test import AsyncClient

from agents_ui.capabilities.values import SkillInfo
from agents_ui.endpoints.catalogue import SKILL_NAME_CHARS, skills_label
from agents_ui.models import AgentEndpoint
from tests.a2a.test_a2a_runs import card_json
from tests.factories import make_endpoint, make_user

pytestmark = pytest.mark.django_db(transaction=True)


def skill(name: str, id: str = "s") -> SkillInfo:
    return SkillInfo(id=id, name=name)


def test_a_card_names_its_skills():
    assert skills_label((skill("Echo"),)) == "1 skill: Echo"
    two = (skill("Plan a trip"), skill("Book a hotel"))
    assert skills_label(two) == "2 skills: Plan a trip, Book a hotel"


def test_the_names_are_bounded_in_number_and_length():
    many = tuple(skill(f"Skill {n}") for n in range(12))
    assert skills_label(many) == "12 skills: Skill 0, Skill 1, Skill 2 and 9 more"
    long = skills_label((skill("Summarise " * 30),))
    name = long.removeprefix("1 skill: ")
    assert len(name) <= SKILL_NAME_CHARS and name.endswith("…")
    assert skills_label((skill("  two\n\nlines  "),)) == "1 skill: two lines"
    assert skills_label((skill("", id="no-name"),)) == "1 skill: no-name"


async def test_the_catalogue_escapes_the_names_the_agent_gave(fake_server):
    hostile = '<img src=x onerror="alert(1)">Intake'
    declaration = card_json(
        skills=[{"id": "intake", "name": hostile, "description": "d", "tags": []}],
    )

    async def handler(exchange):
        exchange.respond(200, declaration)

    agent = await fake_server(handler)
    await sync_to_async(make_endpoint)(
        slug="intake", name="Intake", protocol=AgentEndpoint.Protocol.A2A, base_url=agent.url
    )
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(make_user)())
    page = (await client.get("/")).content.decode()
    assert "1 skill: &lt;img src=x onerror=&quot;alert(1)&quot;&gt;Intake" in page
    assert "<img src=x" not in page

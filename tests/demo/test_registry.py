"""Registration of the demo agents: first start, idempotence, URL refresh, deletions that stick."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from agents_ui.demo.gate import KEY_HEADER, demo_key
from agents_ui.demo.registry import DEMO_AGENTS, register_demo_agents
from agents_ui.models import AgentEndpoint

pytestmark = pytest.mark.django_db


def setup(**kwargs) -> str:
    out = StringIO()
    call_command("setup_demo_agents", stdout=out, **kwargs)
    return out.getvalue()


def test_every_capability_row_has_a_demo_agent_of_each_protocol():
    protocols = {agent.protocol for agent in DEMO_AGENTS}
    assert protocols == {"agui", "external", "a2a"} and len(DEMO_AGENTS) == 14
    assert len({agent.slug for agent in DEMO_AGENTS}) == len(DEMO_AGENTS)


def test_register_creates_every_demo_agent_once_with_urls_on_this_server():
    endpoints = register_demo_agents("http://127.0.0.1:8000/")
    again = register_demo_agents("http://127.0.0.1:8000")

    assert [e.pk for e in endpoints] == [e.pk for e in again]
    assert AgentEndpoint.objects.filter(is_demo=True).count() == len(DEMO_AGENTS)
    planner = AgentEndpoint.objects.get(slug="planner")
    assert planner.base_url == "http://127.0.0.1:8000/demo-agents/planner/" and planner.protocol == "agui"
    desk = AgentEndpoint.objects.get(slug="support-desk")
    assert desk.base_url == "http://127.0.0.1:8000/demo-agents/support-desk" and desk.protocol == "external"
    assert desk.name == "Support Desk" and desk.enabled and desk.description


def test_a_new_port_moves_existing_demo_agents_and_keeps_admin_changes():
    register_demo_agents("http://127.0.0.1:8000")
    AgentEndpoint.objects.filter(slug="cipher").update(enabled=False, name="Cipher (hidden)")

    register_demo_agents("http://localhost:9000")

    cipher = AgentEndpoint.objects.get(slug="cipher")
    assert cipher.base_url == "http://localhost:9000/demo-agents/cipher/"
    assert cipher.enabled is False and cipher.name == "Cipher (hidden)"


def test_an_admins_own_endpoint_with_a_demo_slug_is_left_alone():
    AgentEndpoint.objects.create(slug="legacy", name="Our legacy bot", base_url="https://bot.example.com/")
    endpoints = register_demo_agents("http://127.0.0.1:8000")
    assert "legacy" not in {e.slug for e in endpoints}
    assert AgentEndpoint.objects.get(slug="legacy").base_url == "https://bot.example.com/"


def test_command_registers_on_first_start_only_and_deletions_stick(settings):
    settings.AGENTS_UI_DEMO_AUTOREGISTER = True
    settings.AGENTS_UI_PUBLIC_URL = "http://127.0.0.1:8000"

    assert "Demo agents registered at http://127.0.0.1:8000" in setup()
    AgentEndpoint.objects.filter(slug="toolsmith").delete()
    assert "nothing to change" in setup()
    assert not AgentEndpoint.objects.filter(slug="toolsmith").exists()

    assert "now pointing at http://127.0.0.1:8123: " in setup(base_url="http://127.0.0.1:8123")
    assert "registered at http://127.0.0.1:8123: toolsmith." in setup(
        base_url="http://127.0.0.1:8123", force=True
    )


def test_command_does_nothing_when_autoregistration_is_off(settings):
    settings.AGENTS_UI_DEMO_AUTOREGISTER = False
    assert "automatic registration is off" in setup()
    assert not AgentEndpoint.objects.exists()
    setup(force=True)
    assert AgentEndpoint.objects.filter(is_demo=True).count() == len(DEMO_AGENTS)


async def test_registered_demo_agents_are_reachable_at_their_urls(live_url):
    import httpx
    from asgiref.sync import sync_to_async

    endpoints = await sync_to_async(register_demo_agents)(live_url)
    async with httpx.AsyncClient(timeout=10) as client:
        for endpoint in endpoints:
            if endpoint.protocol == "agui":
                response = await client.get(f"{endpoint.base_url.rstrip('/')}/capabilities")
                assert response.status_code == (404 if endpoint.slug == "legacy" else 200), endpoint.slug
            elif endpoint.protocol == "a2a":
                response = await client.get(f"{endpoint.base_url}/.well-known/agent-card.json")
                assert response.status_code == 200 and response.json()["name"] == endpoint.name
                rpc = response.json()["supportedInterfaces"][0]["url"]
                assert rpc == f"{endpoint.base_url}/rpc"
                # Only this installation's key gets past the card.
                assert (await client.post(rpc, json={})).status_code == 403
            else:
                response = await client.get(f"{endpoint.base_url}/policy")
                assert response.status_code == 200 and response.json()["identity"]["name"] == endpoint.name


def test_demo_endpoints_carry_this_installations_key_and_follow_a_new_secret_key(settings):
    register_demo_agents("http://127.0.0.1:8000")
    endpoint = AgentEndpoint.objects.get(slug="planner")
    assert endpoint.auth_headers() == {KEY_HEADER: demo_key()}

    settings.SECRET_KEY = "another-installation-" + "k" * 50
    register_demo_agents("http://127.0.0.1:8000")

    endpoint.refresh_from_db()
    assert endpoint.auth_headers() == {KEY_HEADER: demo_key()} and endpoint.credential == demo_key()


def test_an_endpoint_registered_before_the_key_existed_gets_it(settings):
    register_demo_agents("http://127.0.0.1:8000")
    AgentEndpoint.objects.filter(is_demo=True).update(auth_kind="none", auth_header_name="", credential="")

    register_demo_agents("http://127.0.0.1:8000")

    assert set(AgentEndpoint.objects.values_list("auth_kind", "credential")) == {("header", demo_key())}


def test_command_registers_nothing_while_the_demo_agents_are_not_served(settings):
    settings.AGENTS_UI_DEMO_AGENTS = False
    assert "not served here (AGENTS_UI_DEMO_AGENTS is off)" in setup(force=True)
    assert not AgentEndpoint.objects.exists()


async def test_the_products_own_calls_carry_the_key_and_are_answered(live_url):
    from ag_ui.core import RunAgentInput
    from asgiref.sync import sync_to_async

    from agents_ui.sdk import AgUiAgent, ExternalAgentClient

    from .conftest import run_input

    endpoints = {e.slug: e for e in await sync_to_async(register_demo_agents)(live_url)}
    planner, desk = endpoints["planner"], endpoints["support-desk"]

    run = AgUiAgent(planner.base_url, headers=planner.auth_headers(), timeout=10)
    events = [event async for event in run.run(RunAgentInput.model_validate(run_input("Plan a party.")))]
    conversation = await ExternalAgentClient(desk.base_url, headers=desk.auth_headers()).create_conversation()

    assert events[-1].type == "RUN_FINISHED" and conversation.id
    with pytest.raises(Exception, match="HTTP 403"):
        await ExternalAgentClient(desk.base_url).create_conversation()

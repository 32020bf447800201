"""SSRF past the guard, tried on every surface that fetches: nothing internal is ever reached.

A hostile agent (tests/support/ssrf_site.py) is reached as a public address (198.51.100.7, through
tests/support/public_hops.py) with private addresses refused, as in production. It points the
product inside in every way it can: redirects to each spelling of loopback and to the metadata
service, card interfaces, an extended card, a key set, images, a name that rebinds. The internal
listener (tests/support/internal_listener.py) sits on 127.0.0.1, 127.0.0.2 and [::1] and records
every connection as it is accepted: after each attack it must have recorded none.
"""

from __future__ import annotations

import os
from urllib.parse import unquote

import pytest
from a2a.types import a2a_pb2 as pb
from ag_ui.core import RunAgentInput, UserMessage
from asgiref.sync import sync_to_async
from django.core.cache import cache

from agents_ui.endpoints import discovery
from agents_ui.endpoints.card_trust import url_keys
from agents_ui.endpoints.clients import agent_client, sdk_client, streaming_agent_client
from agents_ui.endpoints.discovery import discover_one
from agents_ui.endpoints.images import remote_image
from agents_ui.models import AgentEndpoint
from agents_ui.sdk import AgentError
from agents_ui.sdk.remote_images import ImageRefusedError
from tests.factories import make_endpoint
from tests.support.card_signing import SigningKey
from tests.support.internal_listener import InternalListener
from tests.support.live_server import ThreadedUvicorn
from tests.support.public_hops import OTHER_PUBLIC, PUBLIC, installed
from tests.support.ssrf_site import SsrfSite, redirect_to, targets

pytestmark = pytest.mark.django_db(transaction=True)

Protocol = AgentEndpoint.Protocol
# Every internal spelling a redirect may name (tests/support/ssrf_site.py).
INSIDE = sorted(targets(1))
# A few for the surfaces tried once per spelling class: loopback, a mapped IPv6 form, a numeric
# spelling, the metadata service.
SOME = ["loopback", "ipv4-mapped", "decimal", "metadata"]


@pytest.fixture(scope="module")
def listener():
    with InternalListener() as it:
        yield it


@pytest.fixture(scope="module")
def served(listener):
    site = SsrfSite(port=listener.port)
    server = ThreadedUvicorn(site).start()
    site.public, site.other = f"http://{PUBLIC}:{server.port}", f"http://{OTHER_PUBLIC}:{server.port}"
    yield site, server
    server.stop()


@pytest.fixture
def site(served, listener, monkeypatch, settings):
    """The hostile site as a public host, private addresses refused; the listener checked after."""
    site, server = served
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
    cache.clear()
    discovery._RECENT.clear()
    listener.clear()
    site.requests.clear()
    # The site's port on both public addresses; and the listener's port on the public address
    # (the first answer of the rebinding name) goes to the site too.
    table = {(PUBLIC, server.port): server.port, (OTHER_PUBLIC, server.port): server.port}
    table[(PUBLIC, listener.port)] = server.port
    with installed(monkeypatch, table) as names:
        site.names = names
        yield site
    assert listener.recorded() == [], "an internal address was reached"


async def endpoint(**fields) -> AgentEndpoint:
    return await sync_to_async(make_endpoint)(**fields)


def refused(text: str) -> bool:
    return "refused: " in text


# --- The proof can fail: with private addresses allowed the same attack reaches the listener ------


async def test_the_listener_records_what_the_guard_lets_through(served, listener, monkeypatch, settings):
    site, server = served
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = True
    listener.clear()
    with installed(monkeypatch, {(PUBLIC, server.port): server.port}):
        for name in ("loopback", "loopback-2", "ipv6-loopback", "decimal"):
            if name == "loopback-2" and "127.0.0.2" not in listener.addresses:
                continue
            if name == "ipv6-loopback" and "::1" not in listener.addresses:
                continue
            ag = await endpoint(base_url=redirect_to(site, name))
            await discover_one(ag, refresh=True)
    reached = {c.local for c in listener.recorded()}
    assert "127.0.0.1" in reached
    assert reached <= set(listener.addresses)
    listener.clear()


# --- The agent's URL: discovery and runs, each protocol -------------------------------------------


@pytest.mark.parametrize("target", INSIDE)
async def test_a_discovery_redirect_inside_is_refused_in_every_spelling(site, target):
    ag = await endpoint(base_url=redirect_to(site, target))
    found = await discover_one(ag, refresh=True)
    assert found.status == "unreachable"
    assert refused(found.error), found.error
    assert len(site.requests) == 0


@pytest.mark.parametrize("target", SOME)
@pytest.mark.parametrize("protocol", [Protocol.AGUI, Protocol.EXTERNAL, Protocol.A2A])
async def test_each_protocols_discovery_refuses_a_redirect_inside(site, protocol, target):
    ag = await endpoint(protocol=protocol, base_url=redirect_to(site, target))
    found = await discover_one(ag, refresh=True)
    assert found.status == "unreachable" and refused(found.error), found.error


@pytest.mark.parametrize("target", SOME)
async def test_a_discovery_url_override_redirecting_inside_is_refused(site, target):
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/card/same-origin",
        discovery_url=redirect_to(site, target, "agent-card.json"),
    )
    found = await discover_one(ag, refresh=True)
    assert found.status == "unreachable" and refused(found.error), found.error


@pytest.mark.parametrize("target", SOME)
async def test_an_ag_ui_run_redirected_inside_is_refused(site, target):
    ag = await endpoint(base_url=redirect_to(site, target))
    run = RunAgentInput(thread_id="t", run_id="r", messages=[UserMessage(id="u", content="hi")])
    async with streaming_agent_client() as client:
        with pytest.raises(AgentError) as error:
            async for _ in sdk_client(ag, client).run(run):
                pass
    assert refused(str(error.value)), error.value


@pytest.mark.parametrize("target", SOME)
async def test_an_external_agents_requests_redirected_inside_are_refused(site, target):
    ag = await endpoint(protocol=Protocol.EXTERNAL, base_url=redirect_to(site, target))
    async with agent_client() as client:
        agent = sdk_client(ag, client)
        for call in (agent.prepare, agent.create_conversation):
            with pytest.raises(AgentError) as error:
                await call()
            assert refused(str(error.value)), error.value


@pytest.mark.parametrize("target", SOME)
async def test_a_chain_of_public_redirects_ending_inside_is_refused_at_its_last_hop(site, target):
    ag = await endpoint(base_url=f"{site.public}/chain/2/{target}/agent")
    found = await discover_one(ag, refresh=True)
    assert found.status == "unreachable" and refused(found.error), found.error


async def test_a_chain_longer_than_three_redirects_is_refused_before_its_end(site):
    ag = await endpoint(base_url=f"{site.public}/chain/5/loopback/agent")
    found = await discover_one(ag, refresh=True)
    assert "refused: more than 3 redirects" in found.error


async def test_an_oversized_card_and_image_are_cut_at_their_bound(site):
    ag = await endpoint(protocol=Protocol.A2A, base_url=f"{site.public}/card/huge")
    found = await discover_one(ag, refresh=True)
    assert found.status == "invalid" and "larger than" in found.error, found.error
    with pytest.raises(ImageRefusedError, match="larger than this page shows"):
        await remote_image(ag, f"{site.public}/huge/picture.png")


# --- What an A2A card names: its interfaces, its extended card ------------------------------------


CARDS_POINTING_INSIDE = [
    "interface-inside",
    "interface-redirect",
    "interface-metadata",
    "legacy-url",
    "legacy-additional",
]


@pytest.mark.parametrize("variant", CARDS_POINTING_INSIDE)
async def test_a_card_interface_inside_is_refused_when_a_message_is_sent(site, variant):
    ag = await endpoint(protocol=Protocol.A2A, base_url=f"{site.public}/card/{variant}")
    async with streaming_agent_client() as client:
        agent = sdk_client(ag, client)
        found = await agent.discover()
        assert found.status == "declared", found.error
        message = pb.Message(message_id="m1", role=pb.ROLE_USER, parts=[pb.Part(text="hi")])
        with pytest.raises(AgentError) as error:
            async for _ in agent.send(found.declaration, message, stream=False):
                pass
    assert refused(str(error.value)), error.value


@pytest.mark.parametrize(
    ("variant", "said"),
    [
        ("interface-inside", "127.0.0.1 is a loopback address"),
        ("legacy-url", "127.0.0.1 is a loopback address"),
        ("interface-metadata", "169.254.169.254 is a cloud metadata address"),
    ],
)
async def test_discovery_says_a_card_interface_is_inside_without_asking_it(site, variant, said):
    ag = await endpoint(protocol=Protocol.A2A, base_url=f"{site.public}/card/{variant}")
    found = await discover_one(ag, refresh=True)
    assert found.status == "unsupported"
    assert found.error.startswith("Its Agent Card names its interface at http://")
    assert f"and {said}: this server never sends requests there." in found.error


def test_the_admins_connection_test_says_the_card_interface_is_inside(site, client):
    from tests.factories import make_user

    client.force_login(make_user(superuser=True))
    ag = make_endpoint(name="Inward", protocol=Protocol.A2A, base_url=f"{site.public}/card/interface-inside")
    response = client.post(f"/admin/agents_ui/agentendpoint/{ag.pk}/test-connection/", follow=True)
    texts = [str(m) for m in response.context["messages"]]
    assert any(
        "Inward: reachable in" in t and "no interface this product can use: Its Agent Card names" in t
        for t in texts
    ), texts


async def test_an_extended_card_read_through_an_interface_redirecting_inside_is_refused(site):
    ag = await endpoint(protocol=Protocol.A2A, base_url=f"{site.public}/card/extended-redirect")
    found = await discover_one(ag, refresh=True)
    assert found.status == "declared"  # the public card stays ...
    assert "The extended card was not read" in found.extended["error"]  # ... the extended one is refused
    assert "refused: 127.0.0.1 is a loopback address" in found.extended["error"]


# --- The signing keys: the admin's key set URL, and a signature's jku ----------------------------


@pytest.mark.parametrize("target", SOME)
async def test_a_key_set_url_redirecting_inside_is_refused(site, target):
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/card/same-origin",
        signing_keys_url=redirect_to(site, target, "jwks.json"),
    )
    async with agent_client() as client:
        keys, problem = await url_keys(ag, client, refresh=True)
    assert keys is None and "could not be used" in problem and refused(problem), problem
    found = await discover_one(ag, refresh=True)
    assert found.signature["state"] == "unsigned"  # the card is not signed; the key set was refused


async def test_a_signatures_jku_is_never_fetched(site, listener, monkeypatch):
    """A card signed with a key whose jku names the inside: only the admin's URL is ever fetched."""
    from tests.support.a2a_agent import A2ATestAgent

    key = SigningKey("hostile", jku=listener.url(path="/jwks.json"))
    agent = A2ATestAgent(card_edit=key.sign).start()
    try:
        with installed(monkeypatch, {(PUBLIC, agent.port): agent.port}):
            ag = await endpoint(protocol=Protocol.A2A, base_url=f"http://{PUBLIC}:{agent.port}")
            found = await discover_one(ag, refresh=True)
    finally:
        agent.stop()
    assert found.signature["state"] == "invalid"  # a key nobody trusts; its jku not followed
    assert found.status == "unsupported"  # and its interface, on loopback, is said to be inside
    assert "127.0.0.1 is a loopback address" in found.error


# --- Media an agent points to -----------------------------------------------------------------------


@pytest.mark.parametrize("target", INSIDE)
async def test_an_image_redirecting_inside_is_refused_with_the_reason(site, target):
    ag = await endpoint()
    with pytest.raises(ImageRefusedError) as error:
        await remote_image(ag, redirect_to(site, target, "picture.png"))
    assert "not one this server fetches from (refused: " in str(error.value), error.value


@pytest.mark.parametrize("url", [t for t in targets(1).values()])
async def test_an_image_naming_the_inside_directly_is_refused(site, listener, url):
    ag = await endpoint()
    with pytest.raises(ImageRefusedError, match="not one this server fetches from"):
        await remote_image(ag, url.replace(":1/", f":{listener.port}/") + "picture.png")


# --- DNS rebinding: the connection goes to the address that was checked ----------------------------


async def test_a_name_answering_public_then_loopback_is_connected_to_where_it_was_checked(site, listener):
    # The listener's port: a connection made after a second lookup would land on the listener.
    site.names.answers["rebind.test"] = [PUBLIC, "127.0.0.1"]
    ag = await endpoint(base_url=f"http://rebind.test:{listener.port}/record/agent")
    found = await discover_one(ag, refresh=True)
    assert site.names.lookups["rebind.test"] == 1  # resolved once, for the check ...
    assert [r["path"] for r in site.requests] == ["/record/agent/capabilities"]  # ... connected there
    assert site.requests[0]["headers"]["host"] == f"rebind.test:{listener.port}"
    assert found.status != "unreachable", found.error


async def test_a_redirect_to_the_same_name_is_checked_again_and_refused_once_it_rebinds(site, listener):
    site.names.answers["rebind.test"] = [PUBLIC, "127.0.0.1"]
    ag = await endpoint(base_url=f"http://rebind.test:{listener.port}/to/rebind/agent")
    found = await discover_one(ag, refresh=True)
    assert site.names.lookups["rebind.test"] == 2
    assert "refused: rebind.test resolves to 127.0.0.1, a loopback address" in found.error


# --- The credential goes only to the endpoint's own origin ----------------------------------------


SECRET = "the-endpoint-credential"


def credential_seen(site: SsrfSite) -> list[str]:
    return [r["path"] for r in site.requests if SECRET in " ".join(r["headers"].values())]


async def test_a_redirect_to_another_origin_is_sent_without_the_credential(site):
    ag = await endpoint(base_url=redirect_to(site, "other-origin"), auth_kind="bearer", credential=SECRET)
    await discover_one(ag, refresh=True)
    [arrived] = site.requests
    assert arrived["path"] == "/record/redirected"
    assert arrived["headers"]["host"].startswith(OTHER_PUBLIC)
    assert credential_seen(site) == []


@pytest.mark.parametrize(("variant", "sent"), [("other-origin", False), ("same-origin", True)])
async def test_a_card_interface_gets_the_credential_only_on_the_agents_own_origin(site, variant, sent):
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/card/{variant}",
        auth_kind="header",
        auth_header_name="X-Api-Key",
        credential=SECRET,
    )
    found = await discover_one(ag, refresh=True)
    asked = [r for r in site.requests if r["path"] == "/record/rpc"]
    assert asked, "the extended card was asked at the interface"
    assert bool(credential_seen(site)) is sent
    assert found.status == "declared"


async def test_a_withheld_credential_is_named_when_the_interface_refuses_without_it(site):
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/card/other-origin",
        auth_kind="header",
        auth_header_name="X-Api-Key",
        credential=SECRET,
    )
    found = await discover_one(ag, refresh=True)
    assert found.extended["error"].startswith(
        f"The extended card was not read: the Agent Card names an interface at {site.other}/record/rpc, "
        "not on the agent's own address, so its credential was not sent there"
    )


@pytest.mark.parametrize("where", ["other", "public"])
async def test_the_key_set_is_fetched_without_the_credential(site, where):
    base = site.other if where == "other" else site.public
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/card/same-origin",
        auth_kind="bearer",
        credential=SECRET,
        signing_keys_url=f"{base}/record/jwks.json",
    )
    async with agent_client() as client:
        await url_keys(ag, client, refresh=True)
    assert [r["path"] for r in site.requests] == ["/record/jwks.json"]
    assert credential_seen(site) == []


async def test_an_image_is_fetched_without_the_credential(site):
    ag = await endpoint(base_url=f"{site.public}/record/agent", auth_kind="bearer", credential=SECRET)
    with pytest.raises(ImageRefusedError):  # {} is no image
        await remote_image(ag, f"{site.public}/record/picture.png")
    assert [r["path"] for r in site.requests] == ["/record/picture.png"]
    assert credential_seen(site) == []


# --- No secret is ever interpolated into an address ------------------------------------------------


TEMPLATES = "${SECRET_KEY}/{settings.SECRET_KEY}/%(SECRET_KEY)s/$AGENTS_UI_TEST_SECRET/{SECRET_KEY}"


async def test_an_address_is_sent_as_typed_never_expanded(site, settings, monkeypatch):
    monkeypatch.setenv("AGENTS_UI_TEST_SECRET", "expanded-from-the-environment")
    ag = await endpoint(
        protocol=Protocol.A2A,
        base_url=f"{site.public}/record/{TEMPLATES}",
        signing_keys_url=f"{site.public}/record/keys/{TEMPLATES}",
        auth_kind="bearer",
        credential="${SECRET_KEY}",
    )
    await discover_one(ag, refresh=True)
    with pytest.raises(ImageRefusedError):
        await remote_image(ag, f"{site.public}/record/image/{TEMPLATES}")
    paths = [unquote(r["path"]) for r in site.requests]
    assert f"/record/{TEMPLATES}/.well-known/agent-card.json" in paths
    assert f"/record/keys/{TEMPLATES}" in paths
    assert f"/record/image/{TEMPLATES}" in paths
    everything = " ".join(paths + [v for r in site.requests for v in r["headers"].values()])
    assert settings.SECRET_KEY not in everything
    assert os.environ["AGENTS_UI_TEST_SECRET"] not in everything
    card_request = next(r for r in site.requests if r["path"].endswith("agent-card.json"))
    assert card_request["headers"]["authorization"] == "Bearer ${SECRET_KEY}"


def test_no_address_is_ever_formatted_from_settings_or_the_environment():
    """The code that builds agent addresses uses no templating that could reach a secret."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "agents_ui"
    for path in root.rglob("*.py"):
        text = path.read_text()
        for needle in ("expandvars", "string.Template", "format_map(", "Template(settings"):
            assert needle not in text, f"{path}: {needle}"


# --- The admin's connection test and re-discovery -------------------------------------------------


@pytest.mark.parametrize("action", ["test_connection", "rediscover_now"])
@pytest.mark.parametrize("target", SOME)
def test_the_admins_checks_refuse_a_redirect_inside_and_say_why(site, client, action, target):
    from tests.factories import make_user

    client.force_login(make_user(superuser=True))
    ag = make_endpoint(name="Hostile", base_url=redirect_to(site, target))
    response = client.post(
        "/admin/agents_ui/agentendpoint/",
        {"action": action, "_selected_action": [ag.pk]},
        follow=True,
    )
    texts = [str(m) for m in response.context["messages"]]
    assert any("Hostile" in t and "refused: " in t for t in texts), texts


@pytest.mark.parametrize("tool", ["test-connection", "rediscover"])
def test_the_change_pages_buttons_refuse_a_redirect_inside(site, client, tool):
    from tests.factories import make_user

    client.force_login(make_user(superuser=True))
    ag = make_endpoint(name="Hostile", base_url=redirect_to(site, "ipv4-mapped"))
    response = client.post(f"/admin/agents_ui/agentendpoint/{ag.pk}/{tool}/", follow=True)
    texts = [str(m) for m in response.context["messages"]]
    assert any("refused: ::ffff:127.0.0.1 is a loopback address" in t for t in texts), texts


# --- The flood: many images pointing inside, all refused, nothing reached -------------------------


async def test_a_flood_of_images_pointing_inside_reaches_nothing(site, listener):
    import asyncio

    ag = await endpoint()
    urls = site.image_urls(120) + [listener.url(path=f"/direct-{i}.png") for i in range(20)]
    results = await asyncio.gather(*(remote_image(ag, url) for url in urls), return_exceptions=True)
    assert all(isinstance(r, ImageRefusedError) for r in results)
    assert all("not one this server fetches from" in str(r) for r in results)


def test_the_public_hop_seam_cannot_be_turned_on_in_production():
    """The seam lives in tests/support, which the image does not ship, and no product code names it."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    copied = [
        line.split()[1]
        for line in (root / "deploy/Dockerfile").read_text().splitlines()
        if line.startswith("COPY")
    ]
    assert not any(path.startswith(("tests", ".")) for path in copied), copied
    for folder in ("agents_ui", "project"):
        for path in (root / folder).rglob("*.py"):
            text = path.read_text()
            for needle in ("public_hops", "ssrf_settings", "AGENTS_UI_PUBLIC_HOPS", "AGENTS_UI_FAKE_NAMES"):
                assert needle not in text, f"{path}: {needle}"

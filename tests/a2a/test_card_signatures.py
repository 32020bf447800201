"""Signed Agent Cards: a card signed with a2a-sdk's signer by a key the admin gave verifies; one field
changed after signing does not; under "require" such an agent cannot be used. The extended card is
asked with the endpoint's credential and brings its extra skill."""

from __future__ import annotations

import base64
import json

import pytest
from asgiref.sync import sync_to_async
from django.core.cache import cache
from django.test import AsyncClient
from django.urls import reverse

from agents_ui.endpoints import discovery
from agents_ui.endpoints.discovery import discover_one
from agents_ui.models import AgentEndpoint, CapabilitySnapshot, Conversation, Run
from agents_ui.runs.a2a import stored_card
from agents_ui.sdk.a2a.client import parse_card
from agents_ui.sdk.a2a.signing import KeySet, KeySetError, check_card, parse_key_set
from agents_ui.sdk.errors import UnsupportedCapabilityError
from tests.a2a.test_a2a_runs import a2a_endpoint, card_json
from tests.factories import make_user
from tests.support.a2a_agent import A2ATestAgent
from tests.support.card_signing import SigningKey, retitled, with_extra_skill

pytestmark = pytest.mark.django_db(transaction=True)

Policy = AgentEndpoint.SignaturePolicy
Status = CapabilitySnapshot.Status


@pytest.fixture
def key():
    return SigningKey("k1")


@pytest.fixture
def serve():
    started = []

    def start(**options) -> A2ATestAgent:
        server = A2ATestAgent(**options).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def signed_card(key: SigningKey, **fields):
    card = parse_card(card_json(**fields))
    key.sign(card)
    return card


async def endpoint_for(agent: A2ATestAgent, **fields) -> AgentEndpoint:
    endpoint = await sync_to_async(a2a_endpoint)(agent.url)
    for name, value in fields.items():
        setattr(endpoint, name, value)
    await endpoint.asave()
    return endpoint


async def signed_in() -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(await sync_to_async(make_user)())
    return client


# --- the check itself (the SDK's verifier, the admin's keys) ------------------------------------


def test_a_card_signed_by_the_admins_key_verifies(key):
    found = check_card(signed_card(key), pasted=parse_key_set(key.key_set))
    assert (found.state, found.kid, found.alg, found.key_source) == ("signed", "k1", "ES256", "pasted")


def test_one_field_changed_after_signing_does_not_verify(key):
    card = signed_card(key)
    card.description = "changed"
    found = check_card(card, pasted=parse_key_set(key.key_set))
    assert found.state == "invalid"
    assert "does not match the card" in found.reason


def test_an_unsigned_card_is_unsigned_and_an_unknown_key_does_not_verify(key):
    assert check_card(parse_card(card_json()), pasted=parse_key_set(key.key_set)).state == "unsigned"
    other = SigningKey("k2")
    found = check_card(signed_card(other), pasted=parse_key_set(key.key_set))
    assert found.state == "invalid" and "'k2'" in found.reason


def test_only_asymmetric_algorithms_are_accepted(key):
    import jwt

    card = parse_card(card_json())
    # An HMAC "signed" with public key material as the secret: algorithm confusion.
    secret = key.public_jwk["x"].encode()  # public material, read as a shared secret
    token = jwt.api_jws.encode(b"{}", secret, algorithm="HS256", headers={"kid": "k1"})
    protected, _, signature = token.split(".")
    card.signatures.add(protected=protected, signature=signature)
    found = check_card(card, pasted=parse_key_set(key.key_set))
    assert found.state == "invalid" and "HS256, which is not accepted" in found.reason
    none = base64.urlsafe_b64encode(b'{"alg":"none","kid":"k1"}').rstrip(b"=").decode()
    del card.signatures[:]
    card.signatures.add(protected=none, signature="")
    assert "none, which is not accepted" in check_card(card, pasted=parse_key_set(key.key_set)).reason


def test_a_jku_is_honoured_only_when_it_is_the_admins_url(key):
    elsewhere = SigningKey("k1", jku="https://attacker.example/jwks.json")
    card = signed_card(elsewhere)
    # The card names its own key set: not fetched, and the admin's k1 (another key) does not match.
    assert check_card(card, pasted=parse_key_set(key.key_set)).state == "invalid"
    mine = SigningKey("k1", jku="https://keys.example/jwks.json")
    card = signed_card(mine)
    fetched = parse_key_set(mine.key_set)
    found = check_card(card, pasted=None, fetched=fetched, key_set_url="https://keys.example/jwks.json")
    assert (found.state, found.key_source) == ("signed", "url")
    # The URL's keys are the only ones that jku picks: a pasted key of that id is not tried.
    assert check_card(card, pasted=fetched, fetched=KeySet(), key_set_url=mine.jku).state == "invalid"


@pytest.mark.parametrize(
    ("key_set", "said"),
    [
        ("{not json", "not valid JSON"),
        ({"kty": "EC"}, '"keys" list'),
        ({"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}]}, "only public keys"),
        ({"keys": [{"kty": "EC", "crv": "P-256", "x": "AA", "y": "AA"}]}, "no “kid”"),
    ],
)
def test_a_key_set_that_cannot_be_used_says_why(key_set, said):
    with pytest.raises(KeySetError, match=said):
        parse_key_set(key_set)


def test_a_private_key_pasted_by_mistake_is_refused(key):
    from jwt.algorithms import ECAlgorithm

    private = {**json.loads(ECAlgorithm.to_jwk(key.private)), "kid": "k1"}
    with pytest.raises(KeySetError, match="private part"):
        parse_key_set({"keys": [private]})


# --- discovery, the catalogue, the workspace ------------------------------------------------------


async def test_a_signed_card_shows_signed_in_the_catalogue_and_explain_after_a_reload(serve, key):
    agent = serve(card_edit=key.sign)
    endpoint = await endpoint_for(agent, signing_keys=key.key_set, signer_name="Echo Corp")
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.DECLARED
    assert found.signature == {"state": "signed", "kid": "k1", "alg": "ES256", "key_source": "pasted"}
    snapshot = await CapabilitySnapshot.objects.aget(endpoint=endpoint)
    assert snapshot.signature["state"] == "signed"

    await cache.aclear()
    client = await signed_in()
    catalogue = (await client.get("/")).content.decode()
    assert '<span class="badge badge-ok">Signed</span>' in catalogue
    page = (await client.get(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert 'data-signature="signed"' in page
    assert 'by key <span class="mono">k1</span> (Echo Corp)' in page and ">ES256<" in page
    assert 'data-banner="signature"' not in page


async def test_a_tampered_card_is_a_warning_under_verify_if_present(serve, key):
    agent = serve(card_edit=key.sign_then(retitled))
    endpoint = await endpoint_for(agent, signing_keys=key.key_set)
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.DECLARED and found.signature["state"] == "invalid"
    client = await signed_in()
    assert "Signature does not verify" in (await client.get("/")).content.decode()
    page = (await client.get(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert 'data-banner="signature"' in page and 'data-signature="invalid"' in page
    assert "does not match the card" in page
    assert "disabled>" not in page.split('id="message"')[1].split("</textarea>")[0]


async def test_under_require_an_unsigned_or_tampered_card_makes_the_agent_unusable(serve, key):
    agent = serve(card_edit=key.sign_then(retitled))
    endpoint = await endpoint_for(agent, signing_keys=key.key_set, signature_policy=Policy.REQUIRE)
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.UNTRUSTED and found.declaration is None
    client = await signed_in()
    catalogue = (await client.get("/")).content.decode()
    assert "Signature required: its card&#x27;s signature does not verify" in catalogue
    url = reverse("workspace", kwargs={"slug": "echo"})
    page = (await client.get(url)).content.decode()
    assert 'data-banner="untrusted"' in page and "This agent cannot be used." in page
    textarea = page.split('id="message"')[1].split("</textarea>")[0]
    assert "disabled>" in textarea

    sent = await client.post(reverse("send-message", kwargs={"slug": "echo"}), {"content": "Hello there"})
    said = sent.content.decode()
    assert sent.status_code == 422 and "This agent cannot be used." in said
    assert ">Hello there</textarea>" in said  # nothing typed is lost
    assert not await Run.objects.aexists()


async def test_under_require_a_signed_card_is_usable_and_an_unsigned_one_is_not(serve, key):
    agent = serve(card_edit=key.sign)
    endpoint = await endpoint_for(agent, signing_keys=key.key_set, signature_policy=Policy.REQUIRE)
    assert (await discover_one(endpoint, refresh=True)).status == Status.DECLARED
    unsigned = serve()
    endpoint.base_url = unsigned.url
    await endpoint.asave()
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.UNTRUSTED and "it is not" in found.in_words

    # A run started another way (a form, an action) finds no card to send by.
    user = await sync_to_async(make_user)()
    conversation = await Conversation.objects.acreate(user=user, endpoint=endpoint)
    run = await Run.objects.acreate(conversation=conversation)
    run.conversation = conversation
    with pytest.raises(UnsupportedCapabilityError, match="not signed by a key this product trusts"):
        await stored_card(run)


async def test_the_key_set_url_is_fetched_cached_and_fetched_again_on_rediscovery(serve):
    key = SigningKey("k9")
    holder = serve(key_set=key.key_set)
    key.jku = f"{holder.url}/jwks.json"
    agent = serve(card_edit=key.sign)
    endpoint = await endpoint_for(agent, signing_keys_url=key.jku, signature_policy=Policy.REQUIRE)
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.DECLARED
    assert (found.signature["kid"], found.signature["key_source"]) == ("k9", "url")
    assert holder.key_set_requests == 1
    # The card's discovery expires; the key set is still cached.
    await cache.adelete(discovery._cache_key(endpoint))
    discovery._RECENT.clear()
    assert (await discover_one(endpoint)).signature["state"] == "signed"
    assert holder.key_set_requests == 1
    await discover_one(endpoint, refresh=True)  # re-discovery: fetched again
    assert holder.key_set_requests == 2


async def test_the_key_set_url_is_behind_the_address_guard(serve, key, settings):
    settings.AGENTS_UI_ALLOW_PRIVATE_ADDRESSES = False
    agent = serve(card_edit=key.sign)
    endpoint = await endpoint_for(agent, signing_keys_url="http://169.254.169.254/jwks.json")
    from agents_ui.endpoints.card_trust import url_keys
    from agents_ui.endpoints.clients import agent_client

    async with agent_client() as client:
        keys, problem = await url_keys(endpoint, client, refresh=True)
    assert keys is None and "could not be used" in problem


# --- the extended card ----------------------------------------------------------------------------


async def test_the_extended_card_is_asked_with_the_credential_and_brings_its_extra_skill(serve, key):
    agent = serve(extended_edit=with_extra_skill)
    endpoint = await endpoint_for(
        agent,
        auth_kind=AgentEndpoint.AuthKind.HEADER,
        auth_header_name="X-Api-Key",
        credential="extended-secret",
    )
    found = await discover_one(endpoint, refresh=True)
    assert agent.extended_requests and agent.extended_requests[-1]["x-api-key"] == "extended-secret"
    assert found.extended["signature"] == {"state": "unsigned"}
    assert "Ledger lookup" in json.dumps(found.declaration)
    client = await signed_in()
    assert "Ledger lookup" in (await client.get("/")).content.decode()
    page = (await client.get(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert '<option value="ledger"' in page
    assert 'data-extended-card="read"' in page
    assert 'data-raw="extended-card"' in page


async def test_a_failing_extended_card_keeps_the_public_card_with_a_note_for_staff(serve):
    agent = serve(extended_edit=with_extra_skill)
    endpoint = await endpoint_for(agent)  # no credential: the agent refuses the extended card
    found = await discover_one(endpoint, refresh=True)
    assert agent.extended_requests and "x-api-key" not in agent.extended_requests[-1]
    assert found.status == Status.DECLARED and "Ledger lookup" not in json.dumps(found.declaration)
    assert "The extended card was not read" in found.extended["error"]
    staff = AsyncClient()
    await staff.aforce_login(await sync_to_async(make_user)(staff=True))
    page = (await staff.get(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert 'data-banner="extended-card"' in page and 'data-extended-card="not-read"' in page
    person = await signed_in()
    page = (await person.get(reverse("workspace", kwargs={"slug": "echo"}))).content.decode()
    assert 'data-banner="extended-card"' not in page


async def test_a_signed_extended_card_is_checked_like_the_card(serve, key):
    agent = serve(card_edit=key.sign, extended_edit=key.sign_then(with_extra_skill))
    endpoint = await endpoint_for(
        agent,
        auth_kind=AgentEndpoint.AuthKind.HEADER,
        auth_header_name="X-Api-Key",
        credential="extended-secret",
        signing_keys=key.key_set,
        signature_policy=Policy.REQUIRE,
    )
    found = await discover_one(endpoint, refresh=True)
    # The skill was added after signing: under "require" the extended card is not used.
    assert found.status == Status.DECLARED and "not used" in found.extended["error"]
    assert "Ledger lookup" not in json.dumps(found.declaration)


async def test_the_demo_trip_planners_card_is_signed_by_this_installations_demo_key(live_url):
    from agents_ui.demo.a2a import signing
    from agents_ui.demo.registry import register_demo_agents

    endpoints = await sync_to_async(register_demo_agents)(live_url)
    [endpoint] = [e for e in endpoints if e.protocol == AgentEndpoint.Protocol.A2A]
    assert endpoint.signing_keys == signing.key_set()
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.DECLARED, found.error
    assert (found.signature["state"], found.signature["kid"]) == ("signed", signing.KEY_ID)


async def test_the_admin_shows_the_outcome_in_the_latest_discovery_and_the_history(serve, key):
    agent = serve(card_edit=key.sign_then(retitled))
    endpoint = await endpoint_for(agent, signing_keys=key.key_set, signature_policy=Policy.REQUIRE)
    admin = AsyncClient()
    await admin.aforce_login(await sync_to_async(make_user)(superuser=True))
    response = await admin.post(reverse("admin:agents_ui_agentendpoint_rediscover", args=[endpoint.pk]))
    assert response.status_code == 302
    change = (await admin.get(reverse("admin:agents_ui_agentendpoint_change", args=[endpoint.pk]))).content
    page = change.decode()
    assert "Echo: signature required: Its Agent Card&#x27;s signature does not verify" in page
    assert 'class="signature signature-invalid"' in page and "Card signing keys" in page
    history = (
        await admin.get(reverse("admin:agents_ui_agentendpoint_declarations", args=[endpoint.pk]))
    ).content
    assert "Its card&#x27;s signature does not verify." in history.decode()
    assert "Signature required" in history.decode()


async def test_a_slow_extended_card_keeps_the_public_card(serve, settings):
    settings.AGENTS_UI_DISCOVERY_TIMEOUT = 1.0
    agent = serve(extended_edit=with_extra_skill)
    agent.extended_delay = 3.0
    endpoint = await endpoint_for(
        agent,
        auth_kind=AgentEndpoint.AuthKind.HEADER,
        auth_header_name="X-Api-Key",
        credential="extended-secret",
    )
    found = await discover_one(endpoint, refresh=True)
    assert found.status == Status.DECLARED
    assert "did not come in time" in found.extended["error"]
    assert "Ledger lookup" not in json.dumps(found.declaration)


def test_a_0_3_card_says_it_has_an_extended_card_in_its_own_words():
    card = card_json(supportsAuthenticatedExtendedCard=True, capabilities={"streaming": True})
    assert parse_card(card).capabilities.extended_agent_card is True

import asyncio

import httpx
import pytest
from django.core.cache import cache

from agents_ui.endpoints.discovery import discover, discover_one
from agents_ui.models import CapabilitySnapshot
from tests.factories import make_endpoint

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def empty_cache():
    cache.clear()


class FakeAgents:
    """Answers discovery requests by host, and counts them."""

    def __init__(self, answers: dict[str, object], delay: float = 0.0):
        self.answers = answers
        self.delay = delay
        self.calls: list[str] = []

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(str(request.url))
        if self.delay:
            await asyncio.sleep(self.delay)
        answer = self.answers[request.url.host]
        if isinstance(answer, Exception):
            raise answer
        if isinstance(answer, int):
            return httpx.Response(answer, json={"error": {"code": "not_found", "message": "no"}})
        return httpx.Response(200, json=answer)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self))


DECLARED = {"identity": {"name": "Weather"}, "reasoning": {"supported": True, "streaming": True}}


async def test_statuses_are_kept_apart_and_stored_as_snapshots():
    endpoints = [
        await make_async(name="declared", base_url="http://declared.test/agent"),
        await make_async(name="none", base_url="http://none.test/agent"),
        await make_async(name="invalid", base_url="http://invalid.test/agent"),
        await make_async(name="down", base_url="http://down.test/agent"),
    ]
    fake = FakeAgents(
        {
            "declared.test": DECLARED,
            "none.test": 404,
            "invalid.test": {"reasoning": {"supported": "very much"}},
            "down.test": httpx.ConnectError("refused"),
        }
    )
    async with fake.client() as client:
        found = await discover(endpoints, client=client)
    statuses = {e.name: found[e.pk].status for e in endpoints}
    assert statuses == {"declared": "declared", "none": "none", "invalid": "invalid", "down": "unreachable"}
    assert found[endpoints[0].pk].capabilities.reasoning.streaming is True
    assert "reasoning" in found[endpoints[2].pk].error
    assert await CapabilitySnapshot.objects.acount() == 4


async def test_cached_until_refreshed_and_one_snapshot_per_distinct_answer():
    endpoint = await make_async(base_url="http://declared.test/agent")
    fake = FakeAgents({"declared.test": DECLARED})
    async with fake.client() as client:
        await discover_one(endpoint, client=client)
        await discover_one(endpoint, client=client)
        assert len(fake.calls) == 1  # the second came from the cache
        await discover_one(endpoint, client=client, refresh=True)
        assert len(fake.calls) == 2
        assert await CapabilitySnapshot.objects.acount() == 1  # same answer: same snapshot

        fake.answers["declared.test"] = {**DECLARED, "tools": {"supported": True, "items": []}}
        await discover_one(endpoint, client=client, refresh=True)
    snapshots = [s async for s in CapabilitySnapshot.objects.order_by("first_seen_at")]
    assert len(snapshots) == 2
    assert snapshots[0].content_hash != snapshots[1].content_hash
    assert snapshots[1].payload["tools"] == {"supported": True, "items": []}


async def test_unreachable_keeps_the_last_known_declaration():
    endpoint = await make_async(base_url="http://flaky.test/agent")
    fake = FakeAgents({"flaky.test": DECLARED})
    async with fake.client() as client:
        await discover_one(endpoint, client=client)
        fake.answers["flaky.test"] = httpx.ConnectError("refused")
        found = await discover_one(endpoint, client=client, refresh=True)
    assert found.status == "unreachable"
    assert found.last_known == DECLARED
    assert found.capabilities.identity.name == "Weather"  # the plan still has something to show


async def test_a_slow_agent_delays_nobody_beyond_its_own_timeout(settings):
    settings.AGENTS_UI_DISCOVERY_TIMEOUT = 0.3
    fast = await make_async(base_url="http://fast.test/agent")
    slow = await make_async(base_url="http://slow.test/agent")

    class Mixed(FakeAgents):
        async def __call__(self, request):
            if request.url.host == "slow.test":
                await asyncio.sleep(5)
            return httpx.Response(200, json=DECLARED)

    loop = asyncio.get_running_loop()
    started = loop.time()
    async with Mixed({}).client() as client:
        found = await discover([fast, slow], client=client)
    elapsed = loop.time() - started
    assert found[fast.pk].status == "declared"
    assert found[slow.pk].status == "unreachable"
    assert "0.3 seconds" in found[slow.pk].error
    assert elapsed < 2


async def test_many_agents_are_asked_concurrently():
    endpoints = [await make_async(base_url=f"http://a{i}.test/agent") for i in range(20)]
    fake = FakeAgents({f"a{i}.test": DECLARED for i in range(20)}, delay=0.2)
    loop = asyncio.get_running_loop()
    started = loop.time()
    async with fake.client() as client:
        found = await discover(endpoints, client=client)
    assert loop.time() - started < 1.0  # 20 x 0.2 s one after the other would be 4 s
    assert {d.status for d in found.values()} == {"declared"}


async def make_async(**fields):
    from asgiref.sync import sync_to_async

    return await sync_to_async(make_endpoint)(**fields)


def test_a_stored_declaration_nested_too_deep_reads_as_invalid_not_as_a_crash():
    from agents_ui.endpoints.discovery import Discovery

    deep: dict = {}
    node = deep
    for _ in range(10_000):
        node["custom"] = {}
        node = node["custom"]
    found = Discovery(1, "agui", "declared", "", None, raw=deep)
    assert found.capabilities is None

"""The AG-UI conformance corpus, each fixture replayed over HTTP into the product's SDK.

`make conformance` runs this file and prints the table by area (tests/conformance/agui/report.py).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.fixture_agent import FixtureAgent

from .corpus import EXPECT_KEYS, TOP_KEYS, check, load, manifest, replay

FIXTURES = load()


@pytest.fixture(scope="module")
def fixture_agent() -> Iterator[FixtureAgent]:
    agent = FixtureAgent(FIXTURES).start()
    try:
        yield agent
    finally:
        agent.stop()


@pytest.mark.parametrize("name", sorted(FIXTURES))
async def test_fixture(name: str, fixture_agent: FixtureAgent) -> None:
    fixture = FIXTURES[name]
    found = await replay(fixture, fixture_agent.url)
    request = (fixture_agent.app.requests.get(name) or [None])[-1]
    problems = check(fixture, found, request)
    assert not problems, f"{name} ({fixture['specPage']}):\n  " + "\n  ".join(problems)


def test_the_manifest_lists_every_fixture_and_nothing_else() -> None:
    assert manifest() == sorted(f"{name}.json" for name in FIXTURES)


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_fixture_is_well_formed(name: str) -> None:
    fixture = FIXTURES[name]
    assert fixture["name"] == name
    assert set(fixture) <= TOP_KEYS, set(fixture) - TOP_KEYS
    assert {"area", "description", "specPage", "kill", "stream", "expect"} <= set(fixture)
    expect = fixture["expect"]
    assert set(expect) <= EXPECT_KEYS, set(expect) - EXPECT_KEYS
    # "The client consumed the stream" alone proves nothing: every fixture asserts more, and a
    # failure says which one.
    assert set(expect) - {"outcome"}, "a fixture asserts more than its outcome"
    if expect.get("outcome") == "failed":
        assert expect.get("errorContains") or expect.get("runError"), "a failure names its reason"

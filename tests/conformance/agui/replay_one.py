"""One fixture replayed into the SDK outside pytest: exit 0 when it passes, 1 when it does not."""

from __future__ import annotations

import asyncio
import sys

from tests.support.fixture_agent import FixtureAgent

from .corpus import check, load, replay


def main(name: str) -> int:
    fixture = load()[name]
    agent = FixtureAgent({name: fixture}).start()
    try:
        found = asyncio.run(replay(fixture, agent.url))
        problems = check(fixture, found, (agent.app.requests.get(name) or [None])[-1])
    finally:
        agent.stop()
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

"""The README describes the product as it is: every demo agent, every screenshot it shows present,
and every screenshot the README's browser test takes shown."""

from __future__ import annotations

import re
from pathlib import Path

from agents_ui.demo.registry import DEMO_AGENTS

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SHOWN = set(re.findall(r"\(docs/screenshots/([\w-]+\.png)\)", README))


def test_every_demo_agent_has_its_row_in_the_readme():
    rows = {line.split("|")[1].strip() for line in README.splitlines() if line.startswith("| ")}
    missing = [agent.name for agent in DEMO_AGENTS if agent.name not in rows]
    assert missing == []


def test_every_screenshot_the_readme_shows_is_there():
    assert SHOWN
    assert sorted(name for name in SHOWN if not (ROOT / "docs" / "screenshots" / name).is_file()) == []


def test_every_screenshot_the_readme_test_takes_is_shown():
    source = (ROOT / "tests" / "e2e" / "test_readme_screenshots.py").read_text()
    taken = {f"{name}.png" for name in re.findall(r'shoot\(page, "([\w-]+)"', source)}
    assert taken
    assert sorted(taken - SHOWN) == []

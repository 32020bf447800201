"""`make conformance`'s table: the corpus's fixtures by area, with how many passed and failed.

A pytest plugin (``-p tests.conformance.agui.report``): it reads the outcome of each
``test_fixture[<name>]`` and prints the table after the run.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from .corpus import load

_FIXTURES = load()
_passed: Counter[str] = Counter()
_failed: Counter[str] = Counter()


def pytest_runtest_logreport(report: Any) -> None:
    name = report.nodeid.rpartition("test_fixture[")[2].rstrip("]")
    if "test_fixture[" not in report.nodeid or name not in _FIXTURES:
        return
    area = _FIXTURES[name]["area"]
    if report.when == "call":
        (_passed if report.passed else _failed)[area] += 1
    elif report.when == "setup" and report.failed:
        _failed[area] += 1


def pytest_terminal_summary(terminalreporter: Any) -> None:
    areas = sorted({f["area"] for f in _FIXTURES.values()})
    rules = Counter(f["area"] for f in _FIXTURES.values())
    write = terminalreporter.write_line
    write("")
    write("AG-UI 1.1 consumer conformance (tests/conformance/agui/streams)")
    write(f"{'area':<16}{'rules':>7}{'passed':>8}{'failed':>8}")
    for area in areas:
        write(f"{area:<16}{rules[area]:>7}{_passed[area]:>8}{_failed[area]:>8}")
    write(f"{'total':<16}{sum(rules.values()):>7}{sum(_passed.values()):>8}{sum(_failed.values()):>8}")

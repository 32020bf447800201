"""The compatibility table (framework x feature) from the last browser interop run: docs/interop.md.

A pytest plugin: ``python -m pytest -p tests.interop.report tests/e2e/test_interop.py`` (what
``make interop`` runs) records the outcome of every test of that module, and at the end of a run
that covered every cell writes the table, with the versions of the frameworks it ran against.
A partial run (``-k``) leaves the table as it was.
"""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from tests.interop.peers import PEERS

ROOT = Path(__file__).resolve().parents[2]
TABLE = ROOT / "docs" / "interop.md"
README = ROOT / "README.md"
# The README embeds the table between these two lines.
BEGIN, END = "<!-- interop-table: written by tests/interop/report.py -->", "<!-- /interop-table -->"
MODULE = "tests/e2e/test_interop.py"

# Columns: the browser test's parameter id -> (heading, peer).
FRAMEWORKS: dict[str, tuple[str, str]] = {
    "pydantic-ai": ("pydantic-ai (client history)", "pydantic-ai"),
    "pydantic-ai-store": ("pydantic-ai (server store)", "pydantic-ai"),
    "langgraph": ("LangGraph", "langgraph"),
    "adk": ("Google ADK", "adk"),
    "agent-framework": ("Microsoft Agent Framework", "agent-framework"),
    "strands": ("AWS Strands", "strands"),
}
# Rows: test function -> feature.
FEATURES: dict[str, str] = {
    "test_text_and_a_second_message": "Streamed text, a second message in the thread",
    "test_reasoning": "Reasoning (and the explain panel following it)",
    "test_tool_call_and_result": "Tool call and its result",
    "test_state_live_and_after_a_reload": "State, live and after a reload",
    "test_approval_approve": "Approval: approve, result on the original card",
    "test_approval_reject": "Approval: reject",
    "test_approval_edit": "Approval: edit the arguments",
    "test_run_error": "Run error",
    "test_subagent": "Sub-agent at work",
    "test_adk_confirmation": "ADK confirmation shown as the call it asks about",
    "test_frontend_tool": "Frontend tool answered by the user",
    "test_agent_framework_confirm_changes": "Agent Framework's confirm_changes answered on its card",
}
# Rows the browser run does not cover (yet), with what the cell says.
NOT_COVERED: dict[str, str] = {}

_NODE = re.compile(r"::(?P<test>test_\w+)\[(?P<param>.+?)(?:-chromium)?\]$")
_results: dict[tuple[str, str], tuple[str, str]] = {}


def pytest_runtest_logreport(report: Any) -> None:
    if not report.nodeid.startswith(MODULE):
        return
    found = _NODE.search(report.nodeid)
    if not found or found["test"] not in FEATURES or found["param"] not in FRAMEWORKS:
        return
    key = (found["test"], found["param"])
    if report.failed:
        _results[key] = ("failed", "")
    elif report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else ""
        _results[key] = ("n/a", str(reason).removeprefix("Skipped: "))
    elif report.when == "call" and key not in _results:
        _results[key] = ("passed", "")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    cells = {(test, param) for test in FEATURES for param in FRAMEWORKS}
    if not _results:
        return
    missing = cells - set(_results)
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if missing:
        if reporter:
            reporter.write_line(f"interop report: {len(missing)} cells not run; {TABLE} left as it was")
        return
    page = render(_results, _versions())
    TABLE.write_text(page)
    embed(page)
    if reporter:
        reporter.write_line(f"interop report: wrote {TABLE}")


def embed(page: str) -> None:
    """The table (without its title) in the README, between the markers, when they are there."""
    text = README.read_text()
    if BEGIN not in text or END not in text:
        return
    body = page.split("\n", 2)[2].strip()
    before, rest = text.split(BEGIN, 1)
    after = rest.split(END, 1)[1]
    README.write_text(f"{before}{BEGIN}\n{body}\n{END}{after}")


def _versions() -> dict[str, dict[str, str]]:
    found = {}
    for name in dict.fromkeys(peer for _, peer in FRAMEWORKS.values()):
        peer = PEERS[name]
        try:
            found[name] = peer.versions() if peer.installed else {}
        except Exception:  # the table is written even when a version cannot be read
            found[name] = {}
    return found


_MARKS = {"passed": "✅ yes", "failed": "❌ fails", "n/a": "— n/a"}


def render(results: dict[tuple[str, str], tuple[str, str]], versions: dict[str, dict[str, str]]) -> str:
    """The Markdown page: the table, what each "n/a" means, and the versions run against."""
    headings = [heading for heading, _ in FRAMEWORKS.values()]
    lines = [
        "# Compatibility with real AG-UI frameworks",
        "",
        "Produced by `make interop` from its browser run (`tests/e2e/test_interop.py`, written by",
        f"`tests/interop/report.py`) on {dt.datetime.now(dt.UTC):%Y-%m-%d}. Each cell is a real server built",
        "with the framework's own AG-UI adapter and a scripted model, used through the product in the",
        "browser, and checked live and again after a reload.",
        "",
        "| Feature | " + " | ".join(headings) + " |",
        "|---|" + "---|" * len(headings),
    ]
    # (feature, why) -> the columns it is not applicable to.
    notes: dict[tuple[str, str], list[str]] = {}
    for test, feature in FEATURES.items():
        row = []
        for param in FRAMEWORKS:
            outcome, reason = results[(test, param)]
            row.append(_MARKS[outcome])
            if outcome == "n/a" and reason:
                notes.setdefault((feature, reason), []).append(FRAMEWORKS[param][0])
        lines.append(f"| {feature} | " + " | ".join(row) + " |")
    for feature, text in NOT_COVERED.items():
        lines.append(f"| {feature} | " + " | ".join([text] * len(headings)) + " |")
    if notes:
        lines += ["", "Not applicable:", ""]
        lines += [f"- {feature}, {', '.join(where)}: {why}." for (feature, why), where in notes.items()]
    lines += ["", "Versions:", ""]
    for name, found in versions.items():
        pins = ", ".join(f"`{d}=={v}`" for d, v in found.items()) or "not installed"
        lines.append(f"- {PEERS[name].framework}: {pins}")
    return "\n".join(lines) + "\n"

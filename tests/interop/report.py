"""The compatibility table (framework x feature) from the last browser interop run: docs/interop.md.

A pytest plugin: ``python -m pytest -p tests.interop.report tests/e2e/test_interop.py
tests/e2e/test_interop_agno.py`` (what ``make interop`` runs) records the outcome of every test of
those modules, and at the end of a run that covered every cell writes the table, with the versions
of the frameworks it ran against. A partial run (``-k``) leaves the table as it was. The first
module's tests are the rows every framework is tried on; a framework's own module (Agno's ways of
asking through a tool call) adds rows of its own column only, the others' cells "n/a" with why.
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
    "agno": ("Agno", "agno"),
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
# Rows of one framework's own module: test function -> (feature, column, why the others have none).
OWN_MODULES: dict[str, str] = {"tests/e2e/test_interop_agno.py": "agno"}
OWN: dict[str, tuple[str, str, str]] = {
    "test_approve_runs_the_tool_and_the_agent_replies": (
        "Agno: confirmation approved on its card, the tool runs",
        "agno",
        "only Agno asks for a confirmation with a tool call of the tool itself",
    ),
    "test_reject_with_a_reason": (
        "Agno: confirmation rejected with a reason",
        "agno",
        "only Agno asks for a confirmation with a tool call of the tool itself",
    ),
    "test_ask_user_is_answered_with_the_form": (
        "Agno: its ask_user questions answered with the form",
        "agno",
        "only Agno asks questions with options through its own ask_user",
    ),
}
# Rows the browser run does not cover (yet), with what the cell says.
NOT_COVERED: dict[str, str] = {}

_NODE = re.compile(r"::(?P<test>test_\w+)\[(?P<param>.+?)(?:-chromium)?\]$")
_OWN_NODE = re.compile(r"::(?P<test>test_\w+)\[chromium\]$|::(?P<bare>test_\w+)$")
_results: dict[tuple[str, str], tuple[str, str]] = {}


def _key(nodeid: str) -> tuple[str, str] | None:
    """The cell a test's node id fills: (test, column), or None for a test outside the table."""
    module = nodeid.split("::", 1)[0]
    if module == MODULE:
        found = _NODE.search(nodeid)
        if found and found["test"] in FEATURES and found["param"] in FRAMEWORKS:
            return found["test"], found["param"]
    elif module in OWN_MODULES:
        found = _OWN_NODE.search(nodeid)
        test = found and (found["test"] or found["bare"])
        if test in OWN and OWN[test][1] == OWN_MODULES[module]:
            return test, OWN[test][1]
    return None


def pytest_runtest_logreport(report: Any) -> None:
    key = _key(report.nodeid)
    if key is None:
        return
    if report.failed:
        _results[key] = ("failed", "")
    elif report.skipped:
        reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else ""
        _results[key] = ("n/a", str(reason).removeprefix("Skipped: "))
    elif report.when == "call" and key not in _results:
        _results[key] = ("passed", "")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    cells = {(test, param) for test in FEATURES for param in FRAMEWORKS}
    cells |= {(test, column) for test, (_, column, _) in OWN.items()}
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
        "Produced by `make interop` from its browser run (`tests/e2e/test_interop.py` and",
        "`tests/e2e/test_interop_agno.py`, written by `tests/interop/report.py`) on",
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d}. Each cell is a real server built with the framework's own",
        "AG-UI adapter (Agno's: its AgentOS with the AGUI interface) and a scripted model, used through",
        "the product in the browser, and checked live and again after a reload.",
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
    for test, (feature, column, why) in OWN.items():
        outcome, _ = results[(test, column)]
        row = [_MARKS[outcome] if param == column else _MARKS["n/a"] for param in FRAMEWORKS]
        others = [heading for param, (heading, _) in FRAMEWORKS.items() if param != column]
        notes.setdefault((feature, why), []).extend(others)
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

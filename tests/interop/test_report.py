"""The compatibility table's plugin: which cell each browser test fills, and the page it writes."""

from __future__ import annotations

from tests.interop import report


def every_cell(outcome: str = "passed") -> dict[tuple[str, str], tuple[str, str]]:
    cells = {(test, param): (outcome, "") for test in report.FEATURES for param in report.FRAMEWORKS}
    cells |= {(test, column): (outcome, "") for test, (_, column, _) in report.OWN.items()}
    return cells


def test_a_shared_test_fills_its_frameworks_cell():
    node = "tests/e2e/test_interop.py::test_run_error[agno-chromium]"
    assert report._key(node) == ("test_run_error", "agno")
    node = "tests/e2e/test_interop.py::test_run_error[pydantic-ai-store-chromium]"
    assert report._key(node) == ("test_run_error", "pydantic-ai-store")
    assert report._key("tests/e2e/test_interop.py::test_unknown[agno-chromium]") is None


def test_a_frameworks_own_test_fills_only_its_column():
    node = "tests/e2e/test_interop_agno.py::test_reject_with_a_reason[chromium]"
    assert report._key(node) == ("test_reject_with_a_reason", "agno")
    # A test of that module outside the table, and a same-named test of another module, fill nothing.
    assert report._key("tests/e2e/test_interop_agno.py::test_state_and_the_conversation[chromium]") is None
    assert report._key("tests/e2e/test_other.py::test_reject_with_a_reason[chromium]") is None


def test_the_page_has_a_row_per_feature_and_a_column_per_framework():
    page = report.render(every_cell(), {"agno": {"agno": "3.1.10"}})
    rows = [line for line in page.splitlines() if line.startswith("| ") and not line.startswith("| Feature")]
    assert len(rows) == len(report.FEATURES) + len(report.OWN)
    header = next(line for line in page.splitlines() if line.startswith("| Feature"))
    assert header.endswith("| Agno |")
    for feature, column, why in report.OWN.values():
        [row] = [r for r in rows if r.startswith(f"| {feature} |")]
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        index = list(report.FRAMEWORKS).index(column)
        assert cells[index] == "✅ yes"
        assert all(c == "— n/a" for i, c in enumerate(cells) if i != index)
        assert f"- {feature}, " in page and why in page
    assert "- Agno: `agno==3.1.10`" in page


def test_a_failed_cell_says_so():
    results = every_cell()
    results[("test_reject_with_a_reason", "agno")] = ("failed", "")
    page = report.render(results, {})
    [row] = [line for line in page.splitlines() if line.startswith("| Agno: confirmation rejected")]
    assert row.rstrip().endswith("❌ fails |")

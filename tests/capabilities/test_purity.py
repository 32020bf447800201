"""The capability model and the decisions are pure: no Django, no network, no files."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agents_ui.capabilities
from agents_ui import decisions

PACKAGE = Path(agents_ui.capabilities.__file__).parent
MODULES = [*sorted(PACKAGE.rglob("*.py")), Path(decisions.__file__)]

# Everything a pure module may import at run time.
ALLOWED = {
    "__future__",
    "collections",
    "dataclasses",
    "enum",
    "functools",
    "itertools",
    "json",
    "re",
    "typing",
}
FORBIDDEN_CALLS = {"open", "eval", "exec", "__import__", "input"}


def runtime_imports(tree: ast.Module) -> set[str]:
    """Imported module names, leaving out `if TYPE_CHECKING:` blocks (annotations only)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            node.body = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            names.add(node.module or "")
    return names


def test_only_pure_modules_are_imported() -> None:
    assert len(MODULES) > 5
    for path in MODULES:
        for name in runtime_imports(ast.parse(path.read_text())):
            assert name.startswith("agents_ui.capabilities") or name.split(".")[0] in ALLOWED, (path, name)


def test_no_file_or_code_is_opened() -> None:
    for path in MODULES:
        calls = {
            node.func.id
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        }
        assert not calls & FORBIDDEN_CALLS, path


def test_importing_them_loads_neither_django_nor_a_network_client() -> None:
    probe = (
        "import sys, agents_ui.capabilities, agents_ui.decisions; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'django', 'httpx', 'socket', 'requests'}))"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)

    assert result.stdout.strip() == "[]"

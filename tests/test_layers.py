"""The layers meet one way: no two modules of agents_ui import each other, and the SDK knows no Django."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "agents_ui"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py") if "migrations" not in path.parts}


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_names(path: Path, name: str) -> set[str]:
    """Every module this one imports, anywhere in it (in functions too), as dotted names."""
    known = set(modules())
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _type_checking_only(node):
            return
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # `from package import module` imports the module; `from module import name`, the module.
            submodules = {f"{source}.{alias.name}" for alias in node.names} & known
            found.update(submodules or {source})
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {
        name: {other for other in imported_names(path, name) if other in known and other != name}
        for name, path in known.items()
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                connect(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            connect(node)
    return groups


def test_the_cycle_finder_finds_a_cycle_through_a_third_module():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_import_graph_sees_imports_inside_functions():
    graph = import_graph()
    assert "agents_ui.views.workspace" in graph["agents_ui.views.composer"]
    assert "agents_ui.endpoints.discovery" in graph["agents_ui.endpoints.plans"]


def test_no_two_modules_import_each_other_directly_or_through_others():
    assert cycles(import_graph()) == []


def test_the_sdk_imports_nothing_of_django_nor_of_the_rest_of_the_product():
    for name, path in modules().items():
        if not name.startswith("agents_ui.sdk"):
            continue
        for imported in imported_names(path, name):
            assert imported.split(".")[0] != "django", f"{name} imports {imported}"
            assert not imported.startswith("agents_ui.") or imported.startswith("agents_ui.sdk"), (
                f"{name} imports {imported}"
            )


def test_importing_the_sdk_loads_no_django():
    script = "import sys, agents_ui.sdk; print(sorted(m for m in sys.modules if m.split('.')[0] == 'django'))"
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True, timeout=60
    )
    assert result.stdout.strip() == "[]"


# Views and templates read the plan, never the protocol: what differs per protocol is in its adapter
# (agents_ui/runs/protocols/) and its reader (agents_ui/capabilities/readers/).
PROTOCOL_NAME = re.compile(r"(?<![a-z0-9])(external|a2a|agui|ag-ui)(?![a-z0-9])|protocol\.", re.IGNORECASE)
# At most one partial per protocol, where one is truly needed: none is, today.
PROTOCOL_PARTIALS: set[str] = set()


def protocol_names(path: Path) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if PROTOCOL_NAME.search(line)
    ]


def test_the_protocol_check_finds_a_protocol_name():
    assert PROTOCOL_NAME.search('{% if plan.protocol == "external" %}')
    assert PROTOCOL_NAME.search("if endpoint.protocol == AgentEndpoint.Protocol.A2A:")
    assert PROTOCOL_NAME.search("from agents_ui.sdk.a2a_fold import TaskRecord")
    assert not PROTOCOL_NAME.search("{% if plan.agent_keeps_thread %} a2ui-surface")


def test_no_view_module_names_a_protocol():
    found = [hit for path in sorted((PACKAGE / "views").glob("*.py")) for hit in protocol_names(path)]
    assert found == []


def test_no_template_names_a_protocol_but_its_own_partial():
    templates = ROOT / "templates"
    found = [
        hit
        for path in sorted(templates.rglob("*.html"))
        if str(path.relative_to(templates)) not in PROTOCOL_PARTIALS
        for hit in protocol_names(path)
    ]
    assert found == []


def test_the_sdk_names_no_template():
    """Which template draws a record is the product's choice (agents_ui/display/): the SDK names none."""
    template_path = re.compile(r"\.(?:html|jinja2?)\b|\btemplates/")
    for name, path in modules().items():
        if name.startswith("agents_ui.sdk"):
            found = template_path.findall(path.read_text())
            assert not found, f"{name} names a template: {found[:3]}"


# The rules about controls live in one module on purpose; the demo agents' scripted data is data.
LONG_BY_DESIGN = {"agents_ui.decisions"}


def test_no_module_is_longer_than_six_hundred_lines():
    too_long = {
        name: lines
        for name, path in modules().items()
        if name not in LONG_BY_DESIGN
        and not name.startswith("agents_ui.demo.")
        and (lines := len(path.read_text().splitlines())) > 600
    }
    assert too_long == {}


# Names in templates say what a thing is: `call`, `activity`, `surface`, never `c`, `a`, `s`.
TEMPLATE_TAG = re.compile(r"\{\{.*?\}\}|\{%.*?%\}", re.DOTALL)
STRING_LITERAL = re.compile(r"\"[^\"]*\"|'[^']*'")
ONE_LETTER_NAME = re.compile(r"(?<![\w.])[a-zA-Z](?!\w)")


def one_letter_names(text: str) -> list[str]:
    return [
        tag for tag in TEMPLATE_TAG.findall(text) if ONE_LETTER_NAME.search(STRING_LITERAL.sub('""', tag))
    ]


def test_the_name_check_finds_a_one_letter_name():
    for tag in (
        "{{ c.name }}",
        "{{ call.name|default:c.name }}",
        "{% if a %}",
        "{% for p in parts %}",
        '{% include "x.html" with c=call %}',
    ):
        assert one_letter_names(tag) == [tag]
    assert one_letter_names('{{ call.name|default:"a" }}{% for part in parts %}{{ part.1 }}') == []


def test_no_template_names_a_variable_with_one_letter():
    templates = ROOT / "templates"
    found = {
        str(path.relative_to(templates)): names
        for path in sorted(templates.rglob("*.html"))
        if (names := one_letter_names(path.read_text()))
    }
    assert found == {}

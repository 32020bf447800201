"""Dependencies: each requirement says why it is here, the locks pin and hash everything they install,
and the production stack (demo agents off) runs without the demo A2A agent's Starlette."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
REQUIREMENTS = ROOT / "requirements"
# Each group on top of the one before it: a deployment, the demo agents' server, tests and tooling.
GROUPS = ["runtime", "demo", "dev"]
DEMO_ONLY = {"starlette", "sse-starlette"}


def lock(name: str) -> dict[str, tuple[str, frozenset[str]]]:
    """A lock file's packages: name -> (exact version and marker, its hashes)."""
    text = (REQUIREMENTS / f"{name}.txt").read_text()
    packages = {}
    for entry in re.split(r"\n(?=\S)", text):
        if entry.startswith("#") or not entry.strip():
            continue
        head = entry.split(" \\\n")[0]
        requirement = Requirement(head.strip())
        hashes = frozenset(re.findall(r"--hash=sha256:([0-9a-f]{64})", entry))
        assert len(requirement.specifier) == 1 and next(iter(requirement.specifier)).operator == "==", head
        packages[canonicalize_name(requirement.name)] = (
            f"{requirement.specifier};{requirement.marker}",
            hashes,
        )
    return packages


def declared(name: str) -> list[tuple[Requirement, str]]:
    """The requirements an .in file itself declares (not those it includes), each with its comment."""
    lines = []
    for line in (REQUIREMENTS / f"{name}.in").read_text().splitlines():
        if not line.strip() or line.startswith(("#", "-r ", "-c ")):
            continue
        requirement, _, why = line.partition("  # ")
        lines.append((Requirement(requirement), why.strip()))
    return lines


@pytest.mark.parametrize("name", GROUPS)
def test_every_requirement_is_pinned_and_says_why_it_is_here(name):
    requirements = declared(name)
    assert requirements
    for requirement, why in requirements:
        assert [spec.operator for spec in requirement.specifier] == ["=="], requirement
        assert len(why) > 10, f"{requirement}: say why it is here"


@pytest.mark.parametrize("name", GROUPS)
def test_each_lock_pins_and_hashes_what_its_requirements_declare(name):
    packages = lock(name)
    assert all(hashes for _, hashes in packages.values())  # pip --require-hashes refuses anything else
    included = GROUPS[: GROUPS.index(name) + 1]
    for requirement, _ in (item for group in included for item in declared(group)):
        version, _ = packages[canonicalize_name(requirement.name)]
        assert version.startswith(str(requirement.specifier) + ";"), (requirement, version)


def test_each_lock_holds_the_one_before_it_unchanged():
    """Tests run on exactly the versions (and files) a deployment installs."""
    for smaller, larger in itertools.pairwise(GROUPS):
        below, above = lock(smaller), lock(larger)
        assert {name: above[name] for name in below} == below, (smaller, larger)


def test_the_demo_a2a_agents_server_is_not_in_the_runtime_lock():
    assert DEMO_ONLY.isdisjoint(lock("runtime"))
    assert DEMO_ONLY <= set(lock("demo"))
    assert {canonicalize_name(r.name) for r, _ in declared("demo")} == DEMO_ONLY


def test_the_locks_are_compiled_with_the_uv_the_interop_peers_use():
    (uv,) = [r for r, _ in declared("dev") if r.name == "uv"]
    interop = (ROOT / "scripts" / "interop_setup.sh").read_text()
    assert f"UV_VERSION={next(iter(uv.specifier)).version}\n" in interop


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize("name", GROUPS)
def test_a_changed_lock_reinstalls_with_every_hash_checked(tmp_path, name):
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "python").touch()
    stamp = tmp_path / ".requirements-installed"
    stamp.touch()  # installed after the locks last changed

    def plan(*options: str) -> str:
        command = ["make", "--dry-run", f"VENV={tmp_path}", *options, str(stamp)]
        return subprocess.run(
            command, cwd=ROOT, capture_output=True, text=True, timeout=60, check=True
        ).stdout

    install = f"{tmp_path}/bin/python -m pip install --quiet --require-hashes -r requirements/dev.txt"
    assert install not in plan()
    assert install in plan(f"--what-if=requirements/{name}.txt")


# --- The production stack -------------------------------------------------------------------------

# Runs in a fresh interpreter where Starlette and sse-starlette cannot be imported, as in a deployment
# that installed requirements/runtime.txt only: builds the stack, loads every URL, serves a page.
PRODUCTION = """
import importlib.abc, json, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in {"starlette", "sse_starlette"}:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)

sys.meta_path.insert(0, NotInstalled())
import httpx, asyncio
from django.urls import get_resolver

import project.asgi

get_resolver().url_patterns  # every view module is imported

async def get(path):
    transport = httpx.ASGITransport(app=project.asgi.application)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        return (await client.get(path)).status_code

app, chain = project.asgi.application, []
while app is not None:
    chain.append(type(app).__name__)
    app = getattr(app, "app", None) or getattr(app, "application", None)
print(json.dumps({
    "chain": chain,
    "loaded": sorted(m for m in sys.modules if m.partition(".")[0] in {"starlette", "sse_starlette"}
                     or m.startswith("agents_ui.demo.a2a.server")),
    "static": asyncio.run(get("/static/agents_ui/app.css")),
    "demo_a2a": asyncio.run(get("/demo-a2a/trip-planner/.well-known/agent-card.json")),
}))
"""


def production(**env: str) -> subprocess.CompletedProcess:
    environment = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "project.settings",
        "DEBUG": "false",
        "SECRET_KEY": "a-test-secret-key-long-enough-for-the-deployment-checks",
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "false",
    }
    environment.pop("AGENTS_UI_DEMO_AGENTS", None)  # off: the default with DEBUG off
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", PRODUCTION],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_production_stack_neither_mounts_nor_imports_the_demo_a2a_agents_server():
    result = production()
    assert result.returncode == 0, result.stderr
    seen = json.loads(result.stdout)
    assert "DemoA2AAgents" not in seen["chain"] and seen["chain"][0] == "BoundedBody"
    assert seen["loaded"] == []
    assert seen["static"] == 200  # the product serves without them
    assert seen["demo_a2a"] == 404


def test_demo_agents_on_without_the_demo_requirements_say_what_to_install():
    result = production(AGENTS_UI_DEMO_AGENTS="true")
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr and "requirements/demo.txt" in result.stderr


def layers(app) -> list[str]:
    chain = []
    while app is not None:
        chain.append(type(app).__name__)
        app = getattr(app, "app", None) or getattr(app, "application", None)
    return chain


def test_with_the_demo_agents_on_the_demo_a2a_agent_is_mounted(settings):
    from project.asgi import application, build_application

    assert settings.AGENTS_UI_DEMO_AGENTS  # development and tests
    assert layers(application) == [
        "BoundedBody",
        "DemoA2AAgents",
        "StaticFilesHandler",
        "AgentsUIASGIHandler",
    ]
    assert "starlette" in sys.modules and "agents_ui.demo.a2a.server" in sys.modules
    assert layers(build_application(demo_agents=False)) == [
        "BoundedBody",
        "StaticFilesHandler",
        "AgentsUIASGIHandler",
    ]

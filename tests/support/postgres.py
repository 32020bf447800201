"""A throwaway PostgreSQL cluster for the tests of separate run workers (tests/queue).

`postgres_cluster` (session): a cluster made with initdb under /tmp/pg-queue-<pid>, listening on
127.0.0.1:15432 (or the next free port, below the ephemeral range: tests/support/ports.py), run by
the postgres user when the tests run as root (PostgreSQL refuses root), stopped at the end. A start
that fails says why from the server's log; one that lost its port to another socket tries the next.
The product's schema is migrated once into a template database; `pg_database` gives each test a
fresh copy of it (CREATE DATABASE ... TEMPLATE, a fraction of a second).

Skipped, saying why, where PostgreSQL is not installed (.ci/run installs it).
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.ports import unused_port

# Each test process its own cluster: a folder and a port of its own.
ROOT = Path(f"/tmp/pg-queue-{os.getpid()}")
FIRST_PORT = 15432
TEMPLATE = "agents_template"
REPO = Path(__file__).resolve().parents[2]


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).resolve().parent if initdb else None


@dataclass
class Cluster:
    bindir: Path
    as_postgres: list[str]
    port: int = 0

    def url(self, database: str) -> str:
        return f"postgres://agents@127.0.0.1:{self.port}/{database}"

    def run(self, *args: str) -> None:
        result = subprocess.run(
            [*self.as_postgres, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
        )
        if result.returncode != 0:
            raise RuntimeError(f"{Path(args[0]).name} failed: {result.stderr.strip()}")

    def sql(self, statement: str, database: str = "postgres") -> None:
        self.run(str(self.bindir / "psql"), "-h", "127.0.0.1", "-p", str(self.port), "-U", "agents",
                 "-d", database, "-v", "ON_ERROR_STOP=1", "-q", "-c", statement)  # fmt: skip

    def start(self) -> None:
        """pg_ctl start on the first free port; on another if a socket took that one meanwhile."""
        log = ROOT / "server.log"
        tried: set[int] = set()
        for _ in range(5):
            self.port = unused_port(FIRST_PORT, skip=tried)
            tried.add(self.port)
            log.unlink(missing_ok=True)
            options = f"-p {self.port} -k {ROOT} -h 127.0.0.1 -c max_connections=200 -c fsync=off"
            try:
                self.run(str(self.bindir / "pg_ctl"), "-D", str(ROOT / "data"), "-l", str(log),
                         "-w", "-o", options, "start")  # fmt: skip
                return
            except RuntimeError as failed:
                said = log.read_text(errors="replace")[-3000:] if log.exists() else "(no server log)"
                if "could not bind" not in said and "already in use" not in said:
                    raise RuntimeError(f"{failed}\nserver log:\n{said}") from None
        raise RuntimeError(f"PostgreSQL found no port to listen on (tried {sorted(tried)})")

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.run(str(self.bindir / "pg_ctl"), "-D", str(ROOT / "data"), "-m", "immediate", "-w", "stop")


def product_env(database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a product process (a run worker, a web process) on that database."""
    env = {k: v for k, v in os.environ.items() if k not in {"DJANGO_SETTINGS_MODULE", "DATABASE_URL"}}
    env.update(
        DJANGO_SETTINGS_MODULE="project.settings",
        DATABASE_URL=database_url,
        DEBUG="true",
        AGENTS_UI_RUN_WORKERS="separate",
        AGENTS_UI_DEMO_AGENTS="false",
        AGENTS_UI_ALLOW_PRIVATE_ADDRESSES="true",
        PYTHONPATH=str(REPO),
    )
    env.update(extra)
    return env


def step(database_url: str, name: str, **arguments: object) -> dict:
    """One step of tests/support/queue_scenarios.py, in a product process of its own: its result."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.support.queue_scenarios", name, json.dumps(arguments)],
        cwd=REPO, env=product_env(database_url), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"{name} failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[Cluster]:
    bindir = _bindir()
    if bindir is None:
        pytest.skip("PostgreSQL is not installed (no initdb): apt-get install postgresql to run these")
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    cluster = Cluster(bindir, as_postgres)
    if (ROOT / "data").exists():  # left by an interrupted run
        cluster.stop()
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir(parents=True)
    if as_postgres:
        shutil.chown(ROOT, "postgres", "postgres")
    cluster.run(
        str(bindir / "initdb"), "-D", str(ROOT / "data"), "-U", "agents", "--auth=trust", "-E", "UTF8"
    )
    cluster.start()
    try:
        cluster.sql(f"CREATE DATABASE {TEMPLATE}")
        migrated = subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"],
            cwd=REPO, env=product_env(cluster.url(TEMPLATE)), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if migrated.returncode != 0:
            raise RuntimeError(f"migrate failed: {migrated.stderr[-2000:]}")
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(ROOT, ignore_errors=True)


@pytest.fixture
def pg_database(postgres_cluster: Cluster) -> Iterator[str]:
    """A fresh migrated database of its own for the test: its URL."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    postgres_cluster.sql(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
    yield postgres_cluster.url(name)
    with contextlib.suppress(Exception):
        postgres_cluster.sql(f"DROP DATABASE {name} WITH (FORCE)")

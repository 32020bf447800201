"""Real third-party AG-UI servers, each in its own virtual environment under ``.interop/<name>/``.

``running(peer)`` starts one on a free loopback port in a subprocess, waits until it answers HTTP,
and stops it afterwards. ``scripts/interop_setup.sh`` creates the environments.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
ENVIRONMENTS = ROOT / ".interop"
STARTUP_SECONDS = 90.0


@dataclass(frozen=True)
class Peer:
    name: str
    framework: str
    # Distributions whose versions describe the peer (the adapter and the framework).
    distributions: tuple[str, ...]
    # Endpoint paths, by the history mode or variant they serve.
    endpoints: tuple[tuple[str, str], ...] = (("default", "/"),)

    @property
    def folder(self) -> Path:
        return HERE / self.name

    @property
    def python(self) -> Path:
        return ENVIRONMENTS / self.name / "bin" / "python"

    @property
    def installed(self) -> bool:
        """The environment exists and was completed from this requirements file."""
        stamp = ENVIRONMENTS / self.name / ".requirements"
        requirements = self.folder / "requirements.txt"
        return self.python.exists() and stamp.exists() and stamp.read_text() == requirements.read_text()

    def path(self, endpoint: str = "default") -> str:
        return dict(self.endpoints)[endpoint]

    def versions(self) -> dict[str, str]:
        code = (
            "import importlib.metadata as m, json, sys; "
            "print(json.dumps({d: m.version(d) for d in sys.argv[1:]}))"
        )
        out = subprocess.run(
            [str(self.python), "-c", code, *self.distributions],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        return json.loads(out)


PEERS: dict[str, Peer] = {
    peer.name: peer
    for peer in (
        Peer(
            "pydantic-ai",
            "pydantic-ai",
            ("pydantic-ai-slim", "ag-ui-protocol"),
            (("default", "/"), ("store", "/store")),
        ),
        Peer("langgraph", "LangGraph", ("ag-ui-langgraph", "langgraph", "langchain-core", "ag-ui-protocol")),
        Peer(
            "adk",
            "Google ADK",
            ("ag-ui-adk", "google-adk", "ag-ui-protocol"),
            (("default", "/"), ("bare", "/bare")),
        ),
        Peer(
            "agent-framework",
            "Microsoft Agent Framework",
            ("agent-framework-ag-ui", "agent-framework-core", "ag-ui-protocol"),
        ),
        Peer("strands", "AWS Strands", ("ag-ui-strands", "strands-agents", "ag-ui-protocol")),
        # Agno's AG-UI interface is part of Agno itself (AgentOS + AGUI), served at /agui.
        Peer("agno", "Agno", ("agno", "ag-ui-protocol"), (("default", "/agui"),)),
    )
}


def missing_reason(peer: Peer) -> str | None:
    if peer.installed:
        return None
    return (
        f"the {peer.framework} interop peer is not installed in .interop/{peer.name} "
        "(run `make interop` or scripts/interop_setup.sh)"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class RunningPeer:
    peer: Peer
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, endpoint: str = "default") -> str:
        return self.base_url + self.peer.path(endpoint)

    def log_tail(self, limit: int = 4000) -> str:
        try:
            return self.log.read_text(errors="replace")[-limit:]
        except OSError:
            return ""


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True  # any HTTP status means the server is up
    except (OSError, ValueError):
        return False


@contextmanager
def running(peer: Peer, log_dir: Path | None = None) -> Iterator[RunningPeer]:
    """Start ``peer`` on a free loopback port; stop it on exit."""
    reason = missing_reason(peer)
    if reason:
        raise RuntimeError(reason)
    port = free_port()
    log_dir = log_dir or ENVIRONMENTS / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{peer.name}-{port}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    # No telemetry, no network: the peers run on loopback only.
    env.update(
        {
            "PYTHONUNBUFFERED": "1",
            "OTEL_SDK_DISABLED": "true",
            "LANGCHAIN_TRACING_V2": "false",
            "GOOGLE_GENAI_USE_VERTEXAI": "false",
            "ADK_DISABLE_TELEMETRY": "true",
            "AGENT_FRAMEWORK_DISABLE_TELEMETRY": "true",
            "AGNO_TELEMETRY": "false",
        }
    )
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(peer.python), str(peer.folder / "server.py"), "--port", str(port)],
            cwd=peer.folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )
    handle = RunningPeer(peer, port, process, log)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _answers(handle.base_url + "/"):
            if process.poll() is not None:
                raise RuntimeError(f"{peer.name} exited with {process.returncode}:\n{handle.log_tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(
                    f"{peer.name} did not answer within {STARTUP_SECONDS:g} s:\n{handle.log_tail()}"
                )
            time.sleep(0.2)
        yield handle
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


if __name__ == "__main__":
    # `python tests/interop/peers.py NAME`: serve one peer until Ctrl-C, for trying it by hand.
    with running(PEERS[sys.argv[1]]) as handle:
        print(f"{handle.peer.framework} on {handle.url()} (log: {handle.log})", flush=True)
        try:
            handle.process.wait()
        except KeyboardInterrupt:
            pass

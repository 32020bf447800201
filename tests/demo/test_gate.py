"""The demo agents are no way in: served only when enabled, only to the product's key, bounded both ways."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents_ui.demo.gate import ANSWER_ALLOWANCE, ANSWER_FACTOR, KEY_HEADER, MAX_BODY_BYTES
from agents_ui.demo.registry import AGUI_AGENTS

from .conftest import PNG_1PX, SDK_HEADERS, keyed, run_input, sse_data

ROOT = Path(__file__).resolve().parents[2]


async def post(url: str, *, headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.post(url, headers=headers or {}, **kwargs)


async def get(url: str, *, headers: dict[str, str] | None = None) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as client:
        return await client.get(url, headers=headers or {})


def error_code(response: httpx.Response) -> str:
    assert response.headers["content-type"] == "application/json", response.text
    return response.json()["error"]["code"]


# --- Who may call them -------------------------------------------------------------------------------

KEYED_ROUTES = [
    ("POST", "research-assistant/", {"json": run_input("What is a heat pump?")}),
    ("POST", "support-desk/prepare", {"json": {}}),
    ("POST", "support-desk/conversations", {"json": {}}),
    ("POST", "support-desk/conversations/conv_x/messages", {"json": {"content": "hi"}}),
    ("POST", "support-desk/approvals/approval_x", {"json": {"decision": "approve"}}),
    ("POST", "support-desk/files", {"files": {"file": ("a.png", PNG_1PX, "image/png")}}),
    ("GET", "support-desk/files/file_x", {}),
    ("POST", "support-desk/interactions", {"json": {}}),
    ("GET", "archive/conversations/conv_x/artifacts", {}),
    ("GET", "archive/artifacts/artifact_x", {}),
]
ROUTE_IDS = [f"{method} {path}" for method, path, _ in KEYED_ROUTES]


@pytest.mark.parametrize(("method", "path", "body"), KEYED_ROUTES, ids=ROUTE_IDS)
@pytest.mark.parametrize("key", [None, "not-the-key"], ids=["no key", "wrong key"])
async def test_a_call_without_the_installations_key_is_refused(live_url, method, path, body, key):
    headers = {**SDK_HEADERS, **({KEY_HEADER: key} if key else {})}
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.request(method, f"{live_url}/demo-agents/{path}", headers=headers, **body)

    assert response.status_code == 403
    assert error_code(response) == "forbidden"
    assert "Agents UI installation" in response.json()["error"]["message"]


async def test_an_anonymous_large_post_gets_a_small_refusal_not_a_large_answer(live_url):
    body = run_input(content=[{"type": "text", "text": "x" * (2 * 1024 * 1024)}])
    response = await post(f"{live_url}/demo-agents/document-reviewer/", json=body)
    assert response.status_code == 403 and len(response.content) < 1024


async def test_discovery_stays_open_as_a_real_agents_does(live_url):
    capabilities = await get(f"{live_url}/demo-agents/planner/capabilities")
    policy = await get(f"{live_url}/demo-agents/support-desk/policy")
    docs = await get(f"{live_url}/demo-agents/planner/docs")
    assert [capabilities.status_code, policy.status_code, docs.status_code] == [200, 200, 200]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("POST", "planner/"),
        ("GET", "planner/"),
        ("GET", "planner/capabilities"),
        ("GET", "planner/docs"),
        ("GET", "support-desk/policy"),
        ("POST", "support-desk/conversations"),
    ],
)
async def test_every_route_is_not_found_while_the_demo_agents_are_off(live_url, settings, method, path):
    settings.AGENTS_UI_DEMO_AGENTS = False
    async with httpx.AsyncClient(timeout=10) as client:
        response = await client.request(
            method, f"{live_url}/demo-agents/{path}", headers={**keyed(), **SDK_HEADERS}, json=run_input()
        )
    assert response.status_code == 404


def settings_value(name: str, **env: str) -> str:
    environment = {k: v for k, v in os.environ.items() if not k.startswith(("DEBUG", "AGENTS_UI_DEMO"))}
    environment.pop("DJANGO_SETTINGS_MODULE", None)
    environment.update(SECRET_KEY="x" * 64, **env)
    code = f"import project.settings as s; print(s.{name})"
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_demo_agents_are_served_in_development_and_off_when_deployed_unless_turned_on():
    assert settings_value("AGENTS_UI_DEMO_AGENTS", DEBUG="true") == "True"
    assert settings_value("AGENTS_UI_DEMO_AGENTS", DEBUG="false") == "False"
    assert settings_value("AGENTS_UI_DEMO_AGENTS", DEBUG="false", AGENTS_UI_DEMO_AGENTS="true") == "True"


# --- How much a call may send ------------------------------------------------------------------------


async def test_a_run_over_the_agents_limit_is_refused_before_it_is_parsed(live_url):
    body = json.dumps(run_input("x" * MAX_BODY_BYTES)).encode()
    response = await post(
        f"{live_url}/demo-agents/planner/",
        content=body,
        headers={**keyed(), "Content-Type": "application/json"},
    )
    assert response.status_code == 413
    assert error_code(response) == "request_too_large"
    assert "at most 1.0 MB" in response.json()["error"]["message"]


async def test_the_document_reviewer_takes_one_file_at_its_limit_and_no_more(live_url):
    reviewer = AGUI_AGENTS["document-reviewer"]
    assert reviewer.max_input_bytes > 4 / 3 * 10 * 1024 * 1024  # one 10 MB file, base64-encoded
    over = b"x" * (reviewer.max_input_bytes + 1)
    response = await post(f"{live_url}/demo-agents/document-reviewer/", content=over, headers=keyed())
    assert response.status_code == 413 and error_code(response) == "request_too_large"


async def test_an_external_call_over_the_limit_is_refused(live_url):
    response = await post(
        f"{live_url}/demo-agents/support-desk/conversations/conv_x/messages",
        json={"content": "x" * MAX_BODY_BYTES},
        headers={**keyed(), **SDK_HEADERS},
    )
    assert response.status_code == 413 and error_code(response) == "request_too_large"


async def test_an_upload_announced_over_the_file_limit_is_refused_before_it_is_parsed(live_url):
    response = await post(
        f"{live_url}/demo-agents/support-desk/files",
        files={"file": ("big.pdf", b"%PDF-1.4\n" + b"0" * (6 * 1024 * 1024), "application/pdf")},
        headers={**keyed(), **SDK_HEADERS},
    )
    assert response.status_code == 413
    assert error_code(response) == "file_too_large"
    assert response.json()["error"]["message"].startswith("The upload is 6.0 MB")


async def test_a_document_nested_too_deeply_is_refused_not_a_server_error(live_url):
    nested = b"[" * 100_000 + b"]" * 100_000
    run = await post(f"{live_url}/demo-agents/planner/", content=nested, headers=keyed())
    external = await post(
        f"{live_url}/demo-agents/support-desk/prepare", content=nested, headers={**keyed(), **SDK_HEADERS}
    )
    assert run.status_code == 422 and "nested too deeply" in run.json()["detail"]
    assert external.status_code == 400 and error_code(external) == "invalid_request"


# --- How much an answer may grow ---------------------------------------------------------------------


def answer_limit(request_bytes: int) -> int:
    return ANSWER_ALLOWANCE + ANSWER_FACTOR * request_bytes


async def test_an_agui_answer_stops_at_a_small_multiple_of_its_request(live_url):
    # Each tiny attachment makes a line of the answer, streamed as several events: amplification.
    parts = [{"type": "image", "source": {"type": "url", "value": f"https://x/{i}.png"}} for i in range(4000)]
    body = json.dumps(run_input(content=parts)).encode()
    response = await post(
        f"{live_url}/demo-agents/document-reviewer/",
        content=body,
        headers={**keyed(), "Content-Type": "application/json"},
    )

    assert response.status_code == 200
    assert len(response.content) <= answer_limit(len(body)) + 1024
    last = json.loads(sse_data(response.text)[-1])
    assert last["type"] == "RUN_ERROR" and last["code"] == "answer_too_large"


async def test_an_external_answer_stops_at_a_small_multiple_of_its_request(live_url):
    base = f"{live_url}/demo-agents/support-desk"
    headers = {**keyed(), **SDK_HEADERS}
    async with httpx.AsyncClient(timeout=30, headers=headers) as client:
        upload = await client.post(f"{base}/files", files={"file": ("a.png", PNG_1PX, "image/png")})
        conversation = (await client.post(f"{base}/conversations", json={})).json()["id"]
        # The same file named many times: each mention is a phrase of the answer.
        body = json.dumps({"content": "Here", "fileIds": [upload.json()["id"]] * 10_000}).encode()
        response = await client.post(
            f"{base}/conversations/{conversation}/messages",
            content=body,
            headers={"Content-Type": "application/json"},
        )

    assert response.status_code == 200
    assert len(response.content) <= answer_limit(len(body)) + 1024
    frames = response.text.strip().split("\n\n")
    assert "event: run:failed" in frames[-1] and "answer_too_large" in frames[-1]


async def test_an_ordinary_answer_is_far_inside_its_budget(live_url):
    body = run_input("How do heat pumps compare with gas boilers in an old house?")
    response = await post(f"{live_url}/demo-agents/research-assistant/", json=body, headers=keyed())
    assert json.loads(sse_data(response.text)[-1])["type"] == "RUN_FINISHED"
    assert len(response.content) < ANSWER_ALLOWANCE / 2

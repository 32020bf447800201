"""Every page the product draws keeps the same guard rails: a nonce CSP with no inline script or
handler, no frame, cookies no script can read, files that are never sniffed into HTML."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from agents_ui.models import Conversation
from tests.factories import PASSWORD, make_user
from tests.support import routes
from tests.support.routes import product_routes, url_for

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
HANDLER = re.compile(r"<[a-z][^>]*\son[a-z]+\s*=", re.IGNORECASE)


def page_checks(url: str, response) -> None:
    csp = response.get("Content-Security-Policy", "")
    directives = dict([*part.split(None, 1), ""][:2] for part in (p.strip() for p in csp.split(";")) if part)
    script_src = directives.get("script-src", directives.get("default-src", ""))
    assert script_src and "*" not in script_src and "data:" not in script_src, f"{url}: {csp!r}"
    assert "unsafe-inline" not in csp and "unsafe-eval" not in csp, url
    assert directives.get("object-src") == "'none'" and directives.get("frame-ancestors") == "'none'", url
    assert response.get("X-Content-Type-Options") == "nosniff", url
    # Django puts a nonce in the policy only on a page that used one; without it, no inline script runs.
    found = re.search(r"'nonce-([^']+)'", script_src)
    nonce = found.group(1) if found else None
    html = response.content.decode()
    for attributes in SCRIPT.findall(html):
        inline_allowed = nonce is not None and f'nonce="{nonce}"' in attributes
        assert "src=" in attributes or inline_allowed, f"{url}: inline <script{attributes}>"
    assert not HANDLER.search(html), f"{url}: an inline event handler"
    assert "<iframe" not in html.lower(), f"{url}: a frame"


@pytest.fixture
def owners_client():
    things = routes.owners_things()
    client = Client()
    client.force_login(Conversation.objects.get(pk=things["conversation_id"]).user)
    return client, things


def test_every_page_of_the_product_has_the_csp_and_no_inline_script(owners_client):
    client, things = owners_client
    checked = []
    for name, pattern in sorted(product_routes().items()):
        url = url_for(name, pattern, things)
        response = client.get(url)
        if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
            page_checks(url, response)
            checked.append(name)
    pages = {"catalogue", "workspace", "conversation", "conversations", "shared-links", "shared"}
    assert pages <= set(checked)


def test_the_sign_in_page_and_the_admin_have_the_csp_and_no_inline_script(client):
    page_checks("/accounts/login/", client.get("/accounts/login/"))
    client.force_login(make_user(superuser=True))
    for url in ("/admin/", "/admin/agents_ui/agentendpoint/", "/admin/agents_ui/agentendpoint/add/"):
        response = client.get(url)
        assert response.status_code == 200, url
        page_checks(url, response)


def test_no_script_can_read_the_session_or_the_csrf_cookie(client):
    user = make_user(everyday=True)
    client.get("/accounts/login/")
    response = client.post("/accounts/login/", {"username": user.username, "password": PASSWORD})
    session = response.cookies["sessionid"]
    assert session["httponly"] and session["samesite"] == "Lax"
    csrf = client.cookies["csrftoken"]
    assert csrf["httponly"] and csrf["samesite"] == "Lax"


def test_nothing_the_product_ships_frames_a_page_or_keeps_a_secret_in_script_storage():
    """Any future embed goes on an origin of its own: a frame with allow-same-origin on ours would
    give an agent's content the person's session."""
    for folder in ("templates", "static/agents_ui"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix not in {".html", ".js", ".css"}:
                continue
            text = path.read_text()
            assert "allow-same-origin" not in text and "<iframe" not in text.lower(), path
            assert 'createElement("iframe")' not in text and "createElement('iframe')" not in text, path
            # The theme is the only thing kept in the browser's storage.
            for key in re.findall(r"(?:local|session)Storage\.(?:set|get)Item\(\s*[\"']([^\"']+)", text):
                assert key == "theme", f"{path}: {key}"

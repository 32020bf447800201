"""What a browser downloads for the catalogue and a workspace: bytes of HTML, CSS and JavaScript.

The product runs under `manage.py serve` (its own process, a temp SQLite database, the demo agents registered
against it). This process signs in as a person holding every agents_ui permission (so the
workspace shows every control its agent allows), fetches each page, then every
`<script src>` and `<link rel="stylesheet">` the page references, and counts the bytes: as served,
and gzipped (level 6, what a proxy in front would send; the product itself does not compress).

JavaScript is split into htmx (core and its SSE extension, vendored by django-htmx) and the
product's own. The product runs as deployed (DEBUG off, `benchmarks/settings.py`), so the pages are
what production serves; django-htmx's `django-htmx.js`, which `{% htmx_script %}` adds only with
DEBUG on, would be counted apart (`*_debug_js_bytes`) and left out of the totals.

Three workspaces are weighed: one whose agent takes voice notes (`page_workspace`, the audio recorder
shown), one whose agent does not (`page_workspace_no_recorder`), and one whose agent names skills
(`page_workspace_skills`, the skill chooser shown). The recorder's, the skill chooser's and the phone
drawer's own scripts are loaded only when the control is first used, the fallback for a proxied image
that failed only when one fails, and the clocks (an approval's expiry, a live run's time) only when
the page first shows one; they are counted apart (`*_on_demand_js_bytes`, every `data-script` and
`data-clocks` the page names), and `*_own_js_after_record_bytes` is what the page has run once they came.

Usage: python benchmarks/page_weight.py [--json] [--workspace SLUG] [--plain-workspace SLUG]
       [--skills-workspace SLUG]
Target: page_*_own_js_bytes < 15,360 (JavaScript beyond htmx and its SSE extension under 15 KB).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.stream import free_port, serve_arguments, signed_in_client, wait_for_port  # noqa: E402

TARGET_OWN_JS_BYTES = 15 * 1024
_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=\"([^\"]+)\"", re.I)
_LINK = re.compile(r"<link\b[^>]*>", re.I)
_HREF = re.compile(r"\bhref=\"([^\"]+)\"", re.I)
_ON_DEMAND = re.compile(r"\bdata-(?:script|clocks)=\"([^\"]+)\"", re.I)


def gzipped(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=6, mtime=0))


def js_kind(url: str) -> str:
    name = url.rsplit("/", 1)[-1]
    if "/django_htmx/" in url and name.startswith("django-htmx"):
        return "debug"
    if "/django_htmx/" in url:
        return "htmx"
    return "own"


def assets(html: str) -> tuple[list[str], list[str]]:
    scripts = _SCRIPT.findall(html)
    styles = [
        _HREF.search(tag).group(1)
        for tag in _LINK.findall(html)
        if re.search(r"\brel=\"stylesheet\"", tag, re.I) and _HREF.search(tag)
    ]
    return scripts, styles


def weigh(client: Any, name: str, path: str) -> dict[str, Any]:
    response = client.get(path)
    assert response.status_code == 200, f"{path}: {response.status_code}"
    html = response.content
    scripts, styles = assets(response.text)
    sizes = {"css": [0, 0], "htmx": [0, 0], "own": [0, 0], "debug": [0, 0]}
    files = []
    for kind, urls in (("css", styles), ("js", scripts)):
        for url in urls:
            body = client.get(url).content
            bucket = "css" if kind == "css" else js_kind(url)
            sizes[bucket][0] += len(body)
            sizes[bucket][1] += gzipped(body)
            files.append(f"{url.rsplit('/', 1)[-1]}={len(body)}")
    js = [sizes["htmx"][i] + sizes["own"][i] for i in (0, 1)]
    on_demand = sum(len(client.get(url).content) for url in dict.fromkeys(_ON_DEMAND.findall(response.text)))
    p = f"page_{name}"
    return {
        f"{p}_html_bytes": len(html),
        f"{p}_html_gzip_bytes": gzipped(html),
        f"{p}_css_bytes": sizes["css"][0],
        f"{p}_css_gzip_bytes": sizes["css"][1],
        f"{p}_js_bytes": js[0],
        f"{p}_js_gzip_bytes": js[1],
        f"{p}_htmx_js_bytes": sizes["htmx"][0],
        f"{p}_own_js_bytes": sizes["own"][0],
        f"{p}_own_js_gzip_bytes": sizes["own"][1],
        f"{p}_debug_js_bytes": sizes["debug"][0],
        f"{p}_on_demand_js_bytes": on_demand,
        f"{p}_own_js_after_record_bytes": sizes["own"][0] + on_demand,
        f"{p}_total_bytes": len(html) + sizes["css"][0] + js[0],
        f"{p}_total_gzip_bytes": gzipped(html) + sizes["css"][1] + js[1],
        f"{p}_files": " ".join(files),
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    tmp = tempfile.mkdtemp(prefix="agents-ui-weight-")
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    os.environ.update(
        DJANGO_SETTINGS_MODULE="benchmarks.settings",
        DATABASE_URL=f"sqlite:///{tmp}/bench.sqlite3",
        AGENTS_UI_DEMO_AUTOREGISTER="true",
        AGENTS_UI_ALLOW_PRIVATE_ADDRESSES="true",
        AGENTS_UI_PUBLIC_URL=base,
        LOG_LEVEL="WARNING",
    )
    import django

    django.setup()
    from django.contrib.auth.models import Permission
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)
    call_command("setup_demo_agents", base_url=base, force=True, stdout=open(os.devnull, "w"))
    from tests.factories import PASSWORD, make_user

    user = make_user("weigher")
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="agents_ui"))

    command = [sys.executable, *serve_arguments(port)]
    product = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    try:
        wait_for_port(port)
        client = signed_in_client(base, user.username, PASSWORD)
        results = weigh(client, "catalogue", "/")
        results.update(weigh(client, "workspace", f"/agents/{args.workspace}/"))
        results.update(weigh(client, "workspace_no_recorder", f"/agents/{args.plain_workspace}/"))
        results.update(weigh(client, "workspace_skills", f"/agents/{args.skills_workspace}/"))
    finally:
        product.send_signal(2)
        try:
            product.wait(timeout=10)
        except subprocess.TimeoutExpired:
            product.kill()
        shutil.rmtree(tmp, ignore_errors=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--workspace", default="research-assistant", help="an agent whose workspace shows the recorder"
    )
    parser.add_argument(
        "--plain-workspace", default="planner", help="an agent whose workspace shows no recorder"
    )
    parser.add_argument(
        "--skills-workspace", default="trip-planner", help="an agent whose workspace shows its skills"
    )
    args = parser.parse_args()
    results = run(args)
    if args.json:
        print(json.dumps(results))
        return
    for name, value in results.items():
        unit = "" if name.endswith("_files") else "bytes"
        if name.endswith("_own_js_bytes"):
            unit += f" (target < {TARGET_OWN_JS_BYTES})"
        print(f"{name}: {value} {unit}".rstrip())
    pages = ("catalogue", "workspace", "workspace_no_recorder", "workspace_skills")
    met = all(results[f"page_{p}_own_js_bytes"] < TARGET_OWN_JS_BYTES for p in pages)
    print(f"target_page_own_js_met: {met}")


if __name__ == "__main__":
    main()

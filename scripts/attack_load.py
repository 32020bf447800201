"""Hostile agents under measure: the server's memory, and another user's pages, during each attack.

    .venv/bin/python scripts/attack_load.py                 # every attack, 15 s each
    .venv/bin/python scripts/attack_load.py --seconds 5 --only endless,redos

It starts the product as deployed (`manage.py serve`, DEBUG off, one worker, SQLite, its default
bounds) and the fault agent of tests/support/fault_agent.py in a process of its own, registers an
endpoint per attack, then for each attack: one user sends a message to the hostile agent and follows
the run (deciding its approval with edited arguments when it asks), while another user opens the
catalogue, a workspace and their conversations again and again. The server's resident memory is
sampled all along.

The server refuses private addresses, as in production. The hostile agents (the fault agent, and
the SSRF site of tests/support/ssrf_site.py) live on loopback and are reached as a public address
through the test-only seam of tests/support/public_hops.py (the server's settings are
tests/support/ssrf_settings.py); so are the demo agents. The SSRF attacks point the server inside:
redirect chains, IPv4-mapped and metadata addresses, card interfaces, the extended card, a name that
rebinds, a hundred images named inside (each then asked from the image proxy), a card past its bound.
An internal listener (tests/support/internal_listener.py) on 127.0.0.1, 127.0.0.2 and [::1]
records every connection made to it, during every attack.

Printed: per attack, the peak memory, the other user's slowest page, what the attacker saw and the
internal connections; exit status 1 when memory passed --max-rss-mb, a page took longer than
--max-page-seconds, or anything reached the listener.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from load import PASSWORD, RUN_ID, Person, Stats, Uvicorn, free_port, setup_database

from tests.support.internal_listener import InternalListener
from tests.support.live_server import ThreadedUvicorn
from tests.support.public_hops import OTHER_PUBLIC, PUBLIC
from tests.support.ssrf_site import SsrfSite

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.support.inert reads the pages

# attack -> the fault agent's path and query ({fault_port} is the fault agent's, {listener} the
# internal listener's port).
ATTACKS = {
    "endless": "endless",
    "drip-forever": "drip-forever?delay=1",
    "patch-amplification": "patch-amplification",
    "deep-nesting": "deep-nesting",
    "schema-ref": "schema-ref?ref=http://127.0.0.1:{fault_port}/fault/ok/capabilities",
    "redos": "redos",
    "bad-utf8": "bad-utf8",
    "redirect-port": "redirect-port?to=http://127.0.0.1:{listener}/",
    # Stored script: every field it controls, then every page it lands on read for what would run.
    "script-payloads": "script-payloads",
    "error-payloads": "error-payloads",
}
# The pages a stored payload lands on, read after the run ({slug}, {conversation}).
PAYLOAD_PAGES = ["/", "/agents/{slug}/", "/agents/{slug}/c/{conversation}/", "/conversations/", "/inbox/"]
# attack -> (protocol, base URL on the SSRF site: {site} its public URL, {listener} the listener's port).
SSRF_ATTACKS = {
    "ssrf-redirect-chain": ("agui", "{site}/chain/2/loopback/agent"),
    "ssrf-redirect-mapped": ("agui", "{site}/chain/1/ipv4-mapped/agent"),
    "ssrf-redirect-decimal": ("agui", "{site}/to/decimal/agent"),
    "ssrf-redirect-metadata": ("external", "{site}/chain/2/metadata/agent"),
    "ssrf-card-interface": ("a2a", "{site}/card/interface-redirect"),
    "ssrf-extended-card": ("a2a", "{site}/card/extended-redirect"),
    "ssrf-rebinding": ("agui", "http://rebind.test:{listener}/record/agent"),
    "image-flood-inside": ("agui", "{site}/agui/images/120"),
    "huge-card": ("a2a", "{site}/card/huge"),
}
IMAGE_URL = re.compile(r"/runs/[0-9a-f-]{36}/image/\?u=[\w:.\-]+")
# Not an agent's attack, but one on the same bound of the server: a 100 MB request body.
BODY_ATTACK = "huge-request-body"
OTHER_PAGES = ["/", "/conversations/", "/agents/research-assistant/"]


class FaultAgent:
    def __init__(self, logfile: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.public_url = f"http://{PUBLIC}:{self.port}"  # as the server reaches it
        self._log = logfile.open("w")
        command = [
            sys.executable, "-m", "uvicorn", "tests.support.fault_agent:application",
            "--host", "127.0.0.1", "--port", str(self.port), "--log-level", "critical",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, cwd=ROOT, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/fault/ok/capabilities", timeout=2).status_code == 200:
                    return
            time.sleep(0.2)
        raise SystemExit("the fault agent did not start")

    def stop(self) -> None:
        self.process.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)
        self._log.close()


def register_attacks(fault: FaultAgent, site: SsrfSite, listener: InternalListener) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Permission
    from django.db import connections

    from agents_ui.models import AgentEndpoint

    for name, path in ATTACKS.items():
        fault_name, _, query = path.format(fault_port=fault.port, listener=listener.port).partition("?")
        AgentEndpoint.objects.create(
            name=f"Attack {name}", slug=f"attack-{name}",
            base_url=f"{fault.public_url}/fault/{fault_name}/" + (f"?{query}" if query else ""),
            auth_kind="bearer", credential="attack-load-credential",
        )  # fmt: skip
    for name, (protocol, base) in SSRF_ATTACKS.items():
        AgentEndpoint.objects.create(
            name=f"Attack {name}", slug=f"attack-{name}", protocol=protocol,
            base_url=base.format(site=site.public, listener=listener.port),
            auth_kind="bearer", credential="attack-load-credential",
        )  # fmt: skip
    attacker = get_user_model().objects.create_user(username="attacker", password=PASSWORD)
    attacker.user_permissions.add(Permission.objects.get(codename="approve_actions"))
    get_user_model().objects.create_user(username="bystander", password=PASSWORD)
    connections.close_all()


async def bystander_pages(person: Person, until: float, latencies: list[float], errors: list[str]) -> None:
    """Another user opening their pages again and again."""
    while time.monotonic() < until:
        for page in OTHER_PAGES:
            started = time.monotonic()
            try:
                response = await person.client.get(page)
                if response.status_code != 200:
                    errors.append(f"{page}: {response.status_code}")
            except httpx.HTTPError as exc:
                errors.append(f"{page}: {type(exc).__name__}")
            latencies.append(time.monotonic() - started)
        await asyncio.sleep(0.1)


async def attack(person: Person, name: str, until: float) -> str:
    """The attacker's side; what the attacker ended up reading."""
    slug = f"attack-{name}"
    if name == BODY_ATTACK:  # the headers of a 100 MB post, then whatever the server answers
        host, port = person.base.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"POST /agents/research-assistant/send/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 104857600\r\n\r\n"
            + b"x"
            * 65536
        )
        await writer.drain()
        status = (await asyncio.wait_for(reader.readline(), 10)).decode().strip()
        writer.close()
        return f"after 64 KB of a declared 100 MB body: {status}"
    response = await person.client.post(
        f"/agents/{slug}/send/",
        data={"content": f"Attack {name}"},
        headers={**person._csrf(), "HX-Request": "true", "Referer": f"{person.base}/agents/{slug}/"},
    )
    found = RUN_ID.search(response.text)
    if not found:
        return f"send answered {response.status_code}: {response.text[:120]!r}"
    run = found.group(1)
    tail, status, alert, images = "", "still running", "", set()
    with contextlib.suppress(TimeoutError, httpx.HTTPError):
        async with asyncio.timeout(max(1.0, until - time.monotonic())):
            async with person.client.stream("GET", f"/runs/{run}/events/") as stream:
                async for chunk in stream.aiter_text():
                    seen = tail + chunk
                    status = [status, *re.findall(r'data-run-status="(\w+)"', seen)][-1]
                    alert = [alert, *re.findall(r'role="alert"[^>]*>\s*([^<]{3,200})', seen)][-1]
                    images.update(IMAGE_URL.findall(seen.replace("&amp;", "&")))
                    tail = seen[-2000:]
    said = f"run {status}" + (f": {alert.strip()}" if alert else "")
    if name in ("schema-ref", "redos"):
        edited = {"to": "b"} if name == "schema-ref" else {"to": "a" * 40 + "!"}
        started = time.monotonic()
        decided = await person.client.post(
            f"/runs/{run}/decide/",
            data={"decision-ask-1": "edit", "edited-ask-1": json.dumps(edited)},
            headers={**person._csrf(), "HX-Request": "true"},
        )
        note = [" ".join(re.sub(r"<[^>]+>", " ", decided.text).split())[:160]]
        said += (
            f"; decision answered in {time.monotonic() - started:.2f} s: {note[-1].strip() if note else ''}"
        )
    if name == "image-flood-inside":  # every image the answer named, asked from the image proxy
        said += await ask_images(person, images)
    if name in ("script-payloads", "error-payloads"):
        said += "; " + await active_markup(person, slug, response.text)
    if name == "endless":  # the conversation the attack leaves, opened again
        conversation = re.search(r'id="conversation-id"\s+value="([0-9a-f-]{36})"', response.text)
        if conversation:
            reloads = []
            for _ in range(3):
                started = time.monotonic()
                page = await person.client.get(f"/agents/{slug}/c/{conversation.group(1)}/")
                reloads.append(time.monotonic() - started)
            said += f"; its conversation reloads in {max(reloads):.2f} s ({len(page.content) // 1024} KB)"
    return said


async def active_markup(person: Person, slug: str, sent: str) -> str:
    """Every page the payloads land on, read as a browser would: what in them would run or load."""
    from tests.support.inert import ActiveMarkup

    conversation = re.search(r'id="conversation-id"\s+value="([0-9a-f-]{36})"', sent)
    found: list[str] = []
    pages = [
        p.format(slug=slug, conversation=conversation.group(1) if conversation else "") for p in PAYLOAD_PAGES
    ]
    for page in pages if conversation else pages[:2]:
        parser = ActiveMarkup()
        parser.feed((await person.client.get(page)).text)
        found += [f"{page}: {what}" for what in parser.found]
    return f"{len(pages)} pages read, nothing active" if not found else f"ACTIVE: {found[:3]}"


async def ask_images(person: Person, urls: set[str], *, at_once: int = 6) -> str:
    """Each image URL asked from the proxy, `at_once` at a time as a browser does (six connections
    to a host); what came back, counted by status."""
    started = time.monotonic()
    gate = asyncio.Semaphore(at_once)

    async def ask(url: str) -> httpx.Response:
        async with gate:
            return await person.client.get(url)

    answers = await asyncio.gather(*(ask(url) for url in urls), return_exceptions=True)
    statuses: dict[str, int] = {}
    refusals = 0
    for answer in answers:
        key = type(answer).__name__ if isinstance(answer, Exception) else str(answer.status_code)
        statuses[key] = statuses.get(key, 0) + 1
        refusals += not isinstance(answer, Exception) and "not one this server fetches from" in answer.text
    counted = ", ".join(f"{n} answered {k}" for k, n in sorted(statuses.items()))
    return (
        f"; {len(urls)} proxied images asked in {time.monotonic() - started:.2f} s: {counted or 'none'}"
        f" ({refusals} saying the address is inside)"
    )


async def measure(
    product: Uvicorn, names: list[str], seconds: float, listener: InternalListener
) -> list[dict]:
    stats = Stats()
    attacker, bystander = Person(product.url, "attacker", stats), Person(product.url, "bystander", stats)
    assert await attacker.sign_in() and await bystander.sign_in()
    results = []
    for name in names:
        peak = [product.rss_bytes()]
        start_rss = peak[0]
        latencies: list[float] = []
        errors: list[str] = []
        until = time.monotonic() + seconds
        listener.clear()

        async def sample(until: float = until, peak: list[int] = peak) -> None:
            while time.monotonic() < until:
                peak[0] = max(peak[0], product.rss_bytes())
                await asyncio.sleep(0.1)

        said, *_ = await asyncio.gather(
            attack(attacker, name, until), bystander_pages(bystander, until, latencies, errors), sample()
        )
        result = {
            "attack": name,
            "rss_mb_start": round(start_rss / 2**20),
            "rss_mb_peak": round(peak[0] / 2**20),
            "pages": len(latencies),
            "page_p50_s": round(statistics.median(latencies), 3) if latencies else None,
            "page_max_s": round(max(latencies), 3) if latencies else None,
            "page_errors": errors[:3],
            "attacker_saw": said,
            "internal_connections": len(listener.recorded()),
        }
        results.append(result)
        print(
            f"{name:20} rss {result['rss_mb_start']:>4} -> peak {result['rss_mb_peak']:>4} MB | other user: "
            f"{result['pages']:>3} pages, p50 {result['page_p50_s']} s, max {result['page_max_s']} s"
            f"{' ERRORS ' + str(errors[:3]) if errors else ''}\n{'':22}{said}"
            f"\n{'':22}internal connections: {result['internal_connections']}",
            flush=True,
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15, help="how long each attack is measured (15)")
    parser.add_argument("--only", help="comma-separated attacks to run")
    parser.add_argument("--max-rss-mb", type=float, default=300)
    parser.add_argument("--max-page-seconds", type=float, default=1.0)
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args(argv)
    names = [*ATTACKS, *SSRF_ATTACKS, BODY_ATTACK]
    if args.only:
        names = [n for n in names if n in args.only.split(",")]

    workdir = Path(tempfile.mkdtemp(prefix="agents-ui-attack-"))
    listener = InternalListener().start()
    site = SsrfSite(port=listener.port)
    site_server = ThreadedUvicorn(site).start()
    site.public, site.other = (f"http://{host}:{site_server.port}" for host in (PUBLIC, OTHER_PUBLIC))
    fault = FaultAgent(workdir / "fault.log")
    product_port = free_port()
    # The public addresses the server may reach, each sent on to a loopback port (test-only seam).
    hops = {
        f"{PUBLIC}:{fault.port}": fault.port,
        f"{PUBLIC}:{site_server.port}": site_server.port,
        f"{OTHER_PUBLIC}:{site_server.port}": site_server.port,
        f"{PUBLIC}:{listener.port}": site_server.port,  # the rebinding name's first answer
        f"{PUBLIC}:{product_port}": product_port,  # the demo agents, served by the product
    }
    env = {
        **{k: v for k, v in os.environ.items() if k != "AGENTS_UI_ALLOW_PRIVATE_ADDRESSES"},
        "DJANGO_SETTINGS_MODULE": "tests.support.ssrf_settings",
        "ALLOWED_HOSTS": f"127.0.0.1,localhost,{PUBLIC}",
        "AGENTS_UI_PUBLIC_HOPS": ",".join(f"{public}={port}" for public, port in hops.items()),
        "AGENTS_UI_FAKE_NAMES": json.dumps({"rebind.test": [PUBLIC, "127.0.0.1"]}),
        "DATABASE_URL": f"sqlite:///{workdir / 'db.sqlite3'}",
        "AGENTS_UI_DEMO_AUTOREGISTER": "false",
        "LOG_LEVEL": "WARNING",
    }
    product = Uvicorn(env, 1, workdir / "server.log", port=product_port)
    try:
        setup_database(env, f"http://{PUBLIC}:{product.port}", 1)
        register_attacks(fault, site, listener)
        fault.wait_ready()
        product.wait_ready()
        results = asyncio.run(measure(product, names, args.seconds, listener))
    finally:
        product.stop()
        fault.stop()
        site_server.stop()
        listener.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    worst_rss = max(r["rss_mb_peak"] for r in results)
    worst_page = max((r["page_max_s"] or 0) for r in results)
    errors = sum(len(r["page_errors"]) for r in results)
    reached = sum(r["internal_connections"] for r in results)
    errors += sum("ACTIVE:" in r["attacker_saw"] for r in results)
    print(
        f"\nworst: server memory {worst_rss} MB, another user's slowest page {worst_page} s, "
        f"{errors} page errors, {reached} internal connections"
    )
    ok = worst_rss < args.max_rss_mb and worst_page < args.max_page_seconds and not errors and not reached
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

"""An endpoint's history of declarations, and what changed between two of them.

Each distinct answer of the discovery route is a snapshot; the history lists them newest first and
the diff compares two field by field, with what users would see before and after (read with the
endpoint's overrides) and whether the change hides a control. Both pages are the admin's own
(`page` is its context: site, breadcrumbs, links); a credential the agent echoed is blanked out.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.safestring import SafeString

from agents_ui.admin.listing import age
from agents_ui.endpoints.signatures import card_signature
from agents_ui.models import AgentEndpoint, CapabilitySnapshot
from agents_ui.snapshot_diff import Declaration, diff_declarations


def history_url(endpoint: AgentEndpoint) -> str:
    return reverse("admin:agents_ui_agentendpoint_declarations", args=[endpoint.pk])


def diff_url(endpoint: AgentEndpoint) -> str:
    return reverse("admin:agents_ui_agentendpoint_diff", args=[endpoint.pk])


def declarations_page(
    request: HttpRequest, endpoint: AgentEndpoint, page: dict[str, Any]
) -> TemplateResponse:
    snapshots = list(endpoint.snapshots.order_by("-last_seen_at", "-pk"))
    rows = [
        {
            "snapshot": snapshot,
            "number": len(snapshots) - index,
            "pretty": json.dumps(endpoint.scrub_payload(snapshot.payload), indent=2, sort_keys=True)
            if snapshot.payload is not None
            else "",
            "error": endpoint.scrub(snapshot.error),
            "first_age": age(snapshot.first_seen_at),
            "last_age": age(snapshot.last_seen_at),
            "signature": signature_html(endpoint, snapshot),
        }
        for index, snapshot in enumerate(snapshots)
    ]
    context = {
        **page,
        "title": f"History of declarations: {endpoint.name}",
        "rows": rows,
        "default_a": snapshots[1].pk if len(snapshots) > 1 else None,
        "default_b": snapshots[0].pk if snapshots else None,
    }
    return TemplateResponse(request, "admin/agents_ui/agentendpoint/declarations.html", context)


def signature_html(endpoint: AgentEndpoint, snapshot: CapabilitySnapshot) -> SafeString | str:
    """ " · Signed by key k1 (ES256)", or why not, and what became of its extended card."""
    found = card_signature(endpoint, snapshot.signature)
    extended = snapshot.extended if isinstance(snapshot.extended, dict) else {}
    note = (
        "extended card read"
        if isinstance(extended.get("payload"), dict)
        else endpoint.scrub(str(extended.get("error") or ""))
    )
    if found is None and not note:
        return ""
    return format_html(
        ' · <span class="signature signature-{}">{}</span>{}',
        found.state if found else "unchecked",
        (found.summary + (f" ({found.algorithm})" if found.algorithm else "")) if found else "not checked",
        format_html(' · <span class="extended-card">{}</span>', note) if note else "",
    )


def diff_page(request: HttpRequest, endpoint: AgentEndpoint, page: dict[str, Any]) -> HttpResponse:
    """Snapshots `a` and `b` of this endpoint compared, older first whichever order they come in."""
    picked = []
    for key in ("a", "b"):
        try:
            picked.append(endpoint.snapshots.get(pk=int(request.GET.get(key, ""))))
        except (ValueError, CapabilitySnapshot.DoesNotExist):
            messages.warning(request, "Pick two snapshots of this agent to compare.")
            return HttpResponseRedirect(history_url(endpoint))
    if picked[0].pk == picked[1].pk:
        messages.warning(request, "Pick two different snapshots to compare.")
        return HttpResponseRedirect(history_url(endpoint))
    old, new = sorted(picked, key=lambda s: (s.first_seen_at, s.pk))
    overrides = endpoint.overrides or {}
    diff = diff_declarations(
        Declaration(endpoint.protocol, old.status, endpoint.scrub_payload(old.payload)),
        Declaration(endpoint.protocol, new.status, endpoint.scrub_payload(new.payload)),
        overrides=overrides,
    )
    context = {
        **page,
        "title": f"What changed: {endpoint.name}",
        "diff": diff,
        "old": old,
        "new": new,
        "permalink": f"{diff_url(endpoint)}?" + urlencode({"a": old.pk, "b": new.pk}),
        "overrides": overrides,
    }
    return TemplateResponse(request, "admin/agents_ui/agentendpoint/diff.html", context)

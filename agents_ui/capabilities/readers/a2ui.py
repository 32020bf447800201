"""A2UI (Google's Agent-to-UI protocol) in a declaration: whether the agent builds interfaces with it.

AG-UI's `AgentCapabilities` has no field for A2UI, so this product reads a custom capability holding
A2UI's own server capabilities (`{"v0.9": {"supportedCatalogIds": [...], "acceptsInlineCatalogs":
false}}`; `true` or `false` are read too), under any of the names agents use for it (`CUSTOM_PATHS`,
listed in docs/PROTOCOLS.md 1.6). In A2A, A2UI is an extension of the agent card
(`capabilities.extensions[]` with A2UI's URI, its `params` the same object): `from_extensions` reads
that for an A2A reader.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agents_ui.capabilities.profile import GenerativeUI
from agents_ui.capabilities.provenance import UNSAID, Fact, Kind, Provenance
from agents_ui.capabilities.readers.document import Document

# The same ids as agents_ui/sdk/a2ui/catalog.py (this package imports nothing of the SDK's).
VERSION = "v0.9"
VERSION_1 = "v1.0"
EXTENSION_URI = "https://a2ui.org/a2a-extension/a2ui/v0.9"
EXTENSION_URI_1 = "https://a2ui.org/a2a-extension/a2ui/v1.0"
CUSTOM_PATH = "custom.a2ui"
# Where an AG-UI declaration may hold A2UI's server capabilities, first found wins: this product's
# short name, then the object's name in A2UI v0.9's specification (`a2uiServerCapabilities`, the
# a2ui-agent-sdk's `A2uiServerCapabilities`), then v1.0's name for it (`a2uiAgentCapabilities`).
CUSTOM_PATHS = {
    CUSTOM_PATH: "this product's custom capability for A2UI: A2UI's server capabilities (docs/PROTOCOLS.md)",
    "custom.a2uiServerCapabilities": "A2UI's server capabilities, under their name in A2UI's specification",
    "custom.a2uiAgentCapabilities": "A2UI's agent capabilities, under their name in A2UI 1.0's specification",
}


def read_server_capabilities(raw: Any) -> tuple[bool | None, tuple[str, ...]]:
    """A2UI's server capabilities (`{"v0.9": {"supportedCatalogIds": [...]}, "v1.0": {...}}`, or
    `true` / `false`): whether the agent speaks A2UI v0.9 or v1.0, the two this product renders
    (None: it does not say), and the catalogues it names in them."""
    if isinstance(raw, bool):
        return raw, ()
    if not isinstance(raw, Mapping) or not raw:
        return None, ()
    versions = [raw.get(v) for v in (VERSION, VERSION_1) if isinstance(raw.get(v), Mapping)]
    if not versions:
        return False, ()  # other versions of A2UI only
    found: list[str] = []
    for version in versions:
        ids = version.get("supportedCatalogIds")
        if isinstance(ids, list):
            found.extend(str(i)[:300] for i in ids[:20] if isinstance(i, str))
    return True, tuple(dict.fromkeys(found))[:20]


def from_custom(doc: Document) -> GenerativeUI:
    """A2UI's server capabilities in an AG-UI custom capability (the first of `CUSTOM_PATHS` that is
    there); absent everywhere, A2UI is not declared (unknown)."""
    path = next((p for p in CUSTOM_PATHS if doc.at(p) is not None), CUSTOM_PATH)
    speaks, catalogs = read_server_capabilities(doc.at(path))
    provenance = (doc.provenance(path, note=CUSTOM_PATHS[path]),)
    return GenerativeUI(
        a2ui=Fact(speaks, provenance),
        catalogs=Fact(catalogs, provenance) if catalogs else UNSAID,
    )


MODULE = "a2ui"


def from_modules(
    offered: Fact[tuple[str, ...]], granted: Fact[tuple[str, ...]], prepared: bool
) -> GenerativeUI:
    """An external agent's output modules: the `a2ui` module, once negotiated, carries A2UI surfaces
    (before `prepare()`, an offer without it rules A2UI out; with it, nothing is known yet)."""
    if prepared and granted.value is not None:
        return GenerativeUI(a2ui=Fact(MODULE in granted.value, granted.provenance))
    if offered.value is not None and MODULE not in offered.value:
        return GenerativeUI(a2ui=Fact(False, offered.provenance))
    return GenerativeUI(a2ui=Fact(None, offered.provenance or granted.provenance))


def from_extensions(extensions: Any, source: str, path: str = "capabilities.extensions") -> GenerativeUI:
    """An A2A agent card's extensions: A2UI's URI among them declares it (its params name catalogues)."""
    if not isinstance(extensions, list):
        return GenerativeUI()
    for index, extension in enumerate(extensions[:50]):
        if isinstance(extension, Mapping) and extension.get("uri") in (EXTENSION_URI, EXTENSION_URI_1):
            params = extension.get("params")
            where = Provenance(
                source, f"{path}[{index}]", extension.get("uri"), Kind.DECLARED, "A2UI's A2A extension"
            )
            ids = params.get("supportedCatalogIds") if isinstance(params, Mapping) else None
            catalogs = tuple(i for i in ids[:20] if isinstance(i, str)) if isinstance(ids, list) else ()
            return GenerativeUI(
                a2ui=Fact(True, (where,)), catalogs=Fact(catalogs, (where,)) if catalogs else UNSAID
            )
    return GenerativeUI(
        a2ui=Fact(None, (Provenance(source, path, None, Kind.DECLARED, "no A2UI extension"),))
    )

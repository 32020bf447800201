"""The template that draws each A2UI component (templates/agents_ui/a2ui/): the SDK resolves a
surface into a tree of components (`agents_ui.sdk.a2ui.render`) and knows nothing of templates."""

from __future__ import annotations

from agents_ui.sdk.a2ui.catalog import COMPONENTS
from agents_ui.sdk.a2ui.render import Node

__all__ = ["COMPONENT_TEMPLATES", "template_for"]

TEMPLATE_DIR = "agents_ui/a2ui"

# One template per component of the catalogue the product renders, named after it, and one per
# kind of node the tree has in a component's place (one it lacks, one it refused, one it does not know).
COMPONENT_TEMPLATES: dict[str, str] = {
    kind: f"{TEMPLATE_DIR}/{kind.lower()}.html" for kind in (*COMPONENTS, "missing", "refused", "unknown")
}


def template_for(node: Node) -> str:
    """The template that draws ``node``."""
    return COMPONENT_TEMPLATES.get(node.kind, COMPONENT_TEMPLATES["unknown"])

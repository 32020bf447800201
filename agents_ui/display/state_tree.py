"""The agent's state document as a person reads it: a folding tree, lists of steps as checklists.

Bounded: an agent's document may be deep or long; past the bounds the raw JSON (one click away)
has the rest.
"""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 8
MAX_ITEMS = 200
DONE_WORDS = {"done", "completed", "complete", "finished", "succeeded", "success", "ok"}
TITLE_KEYS = ("title", "name", "step", "label", "text", "description", "task")


def state_tree(document: Any) -> list[dict[str, Any]]:
    """The top-level entries of the document (a document that is not an object is one entry)."""
    if isinstance(document, dict):
        return [_node(str(key), value, 1) for key, value in list(document.items())[:MAX_ITEMS]]
    if document is None:
        return []
    return [_node("document", document, 1)]


def _node(key: str, value: Any, depth: int) -> dict[str, Any]:
    if isinstance(value, list) and _is_checklist(value):
        return {"key": key, "kind": "checklist", "items": [_step(item) for item in value[:MAX_ITEMS]]}
    if isinstance(value, (dict, list)) and depth < MAX_DEPTH:
        entries = value.items() if isinstance(value, dict) else enumerate(value)
        children = [_node(str(k), v, depth + 1) for k, v in list(entries)[:MAX_ITEMS]]
        kind = "object" if isinstance(value, dict) else "list"
        return {"key": key, "kind": kind, "children": children, "size": len(value)}
    if isinstance(value, (dict, list)):
        return {"key": key, "kind": "value", "value": "…", "type": "deep"}
    return {"key": key, "kind": "value", "value": _scalar(value), "type": _json_type(value)}


def _json_type(value: Any) -> str:
    """The value's JSON type, the words the page speaks (never the server's language's own)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    return "string"


def _is_checklist(items: list[Any]) -> bool:
    """A list of steps: every item an object with a status or done field, and something to call it."""
    return bool(items) and all(
        isinstance(item, dict)
        and ("done" in item or "status" in item or "completed" in item)
        and any(isinstance(item.get(k), str) for k in TITLE_KEYS)
        for item in items
    )


def _step(item: dict[str, Any]) -> dict[str, Any]:
    title = next(item[k] for k in TITLE_KEYS if isinstance(item.get(k), str))
    status = item.get("status")
    done = item.get("done") is True or item.get("completed") is True
    if isinstance(status, str) and status.lower() in DONE_WORDS:
        done = True
    return {
        "title": title[:300],
        "done": done,
        "status": status[:60] if isinstance(status, str) else ("done" if done else "to do"),
    }


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)[:1000]

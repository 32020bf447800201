"""Requests as htmx sends them, for view tests."""

from __future__ import annotations

from typing import Any

from django.test import AsyncClient


class HtmxClient(AsyncClient):
    """An `AsyncClient` whose POSTs carry `HX-Request: true`, as htmx's do."""

    async def post(self, path: str, data: Any = None, **extra: Any) -> Any:
        headers = {"HX-Request": "true", **(extra.pop("headers", None) or {})}
        return await super().post(path, data, headers=headers, **extra)


async def htmx_post(client: AsyncClient, path: str, data: Any = None, **extra: Any) -> Any:
    """One POST as htmx sends it, from any client."""
    headers = {"HX-Request": "true", **(extra.pop("headers", None) or {})}
    return await client.post(path, data, headers=headers, **extra)

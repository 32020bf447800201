"""Test data builders, so tests say what matters and nothing else."""

from __future__ import annotations

import itertools

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission

from agents_ui.models import AgentEndpoint

_counter = itertools.count(1)

PASSWORD = "correct horse battery staple"


def make_user(
    username: str | None = None, *, staff: bool = False, superuser: bool = False, perms=(), everyday=False
):
    """A user with exactly `perms`; `everyday`: also in the group every new person joins."""
    username = username or f"user{next(_counter)}"
    User = get_user_model()
    if superuser:
        user = User.objects.create_superuser(username=username, password=PASSWORD, email="")
    else:
        user = User.objects.create_user(username=username, password=PASSWORD, is_staff=staff)
    if not everyday:
        user.groups.clear()
    for codename in perms:
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="agents_ui")
        )
    return user


def make_endpoint(**fields) -> AgentEndpoint:
    n = next(_counter)
    defaults = {
        "name": f"Agent {n}",
        "slug": f"agent-{n}",
        "protocol": AgentEndpoint.Protocol.AGUI,
        "base_url": f"http://agent{n}.example.test/run",
    }
    defaults.update(fields)
    endpoint = AgentEndpoint(**defaults)
    endpoint.full_clean()
    endpoint.save()
    return endpoint

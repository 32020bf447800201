"""The everyday abilities signed-in people get: a group the setup creates, and every new user joins.

Admins narrow it by removing permissions from the group (or a person from it); the group is only
created when missing, so their changes stay.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import Group, Permission

EVERYDAY_GROUP = "Agent users"
EVERYDAY_PERMISSIONS = ("view_reasoning", "upload_files", "approve_actions")


def everyday_group() -> Group | None:
    """The group, created with its permissions the first time (None before the permissions exist)."""
    group = Group.objects.filter(name=EVERYDAY_GROUP).first()
    if group is not None:
        return group
    permissions = list(
        Permission.objects.filter(content_type__app_label="agents_ui", codename__in=EVERYDAY_PERMISSIONS)
    )
    if len(permissions) < len(EVERYDAY_PERMISSIONS):
        return None
    group = Group.objects.create(name=EVERYDAY_GROUP)
    group.permissions.set(permissions)
    return group


def create_everyday_group(**kwargs: Any) -> None:
    """post_migrate: the permissions exist now."""
    everyday_group()


def join_everyday_group(sender: Any, instance: Any, created: bool, raw: bool = False, **kwargs: Any) -> None:
    """post_save of a user: a new person gets the everyday abilities."""
    if not created or raw or not getattr(settings, "AGENTS_UI_NEW_USERS_JOIN_EVERYDAY_GROUP", True):
        return
    group = everyday_group()
    if group is not None:
        instance.groups.add(group)

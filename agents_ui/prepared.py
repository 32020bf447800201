"""The statements every request makes, written once per process instead of built by the ORM each
time: who is signed in (agents_ui/sessions.py), whether they may use an endpoint
(agents_ui/views/access.open_to), and the side list's latest conversations, drawn again with every
send (agents_ui/views/conversations.Recent). Tables and columns come from the models' own metadata.

Building these queries took most of their cost: the ORM compiles a query again for every request
(about 0.2 ms of CPU for a session or a person, 0.6 to 0.7 ms for permissions or an endpoint's
group rule, against 0.02 to 0.09 ms to run them this way), paid on every request a busy web
process serves.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connections


def _link(quote: Callable[[str], str], through: Any, to: Any) -> str:
    """The column of a many-to-many table that points at `to`."""
    return quote(next(f.column for f in through.concrete_fields if f.related_model is to))


@cache
def person_query(using: str) -> str:
    """The user's own columns, by primary key."""
    User = get_user_model()
    quote = connections[using].ops.quote_name
    columns = ", ".join(quote(field.column) for field in User._meta.concrete_fields)
    return f"SELECT {columns} FROM {quote(User._meta.db_table)} WHERE {quote(User._meta.pk.column)} = %s"


@cache
def permissions_query(using: str) -> str:
    """Every permission of a person, their own and their groups' (app label, codename): (user, user)."""
    from django.contrib.auth.models import Group, Permission
    from django.contrib.contenttypes.models import ContentType

    User = get_user_model()
    quote = connections[using].ops.quote_name
    own = User._meta.get_field("user_permissions").remote_field.through._meta
    member = User._meta.get_field("groups").remote_field.through._meta
    granted = Group._meta.get_field("permissions").remote_field.through._meta

    def column(model: Any, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    def link(through: Any, to: Any) -> str:
        return _link(quote, through, to)

    permission = quote(Permission._meta.pk.column)
    return (
        f"SELECT t.{column(ContentType, 'app_label')}, p.{column(Permission, 'codename')}"
        f" FROM {quote(Permission._meta.db_table)} p JOIN {quote(ContentType._meta.db_table)} t"
        f" ON t.{quote(ContentType._meta.pk.column)} = p.{column(Permission, 'content_type')}"
        f" WHERE p.{permission} IN"
        f" (SELECT {link(own, Permission)} FROM {quote(own.db_table)} WHERE {link(own, User)} = %s)"
        f" OR p.{permission} IN (SELECT g.{link(granted, Permission)} FROM {quote(granted.db_table)} g"
        f" JOIN {quote(member.db_table)} m ON m.{link(member, Group)} = g.{link(granted, Group)}"
        f" WHERE m.{link(member, User)} = %s)"
    )


@cache
def open_to_query(endpoint_model: Any, using: str) -> str:
    """Open to all (no allowed groups), or to a group of the person's: (endpoint, endpoint, user)."""
    User = get_user_model()
    quote = connections[using].ops.quote_name
    allowed = endpoint_model._meta.get_field("allowed_groups").remote_field.through._meta
    member = User._meta.get_field("groups").remote_field.through._meta
    group = endpoint_model._meta.get_field("allowed_groups").related_model

    def link(through: Any, to: Any) -> str:
        return _link(quote, through, to)

    return (
        f"SELECT NOT EXISTS"
        f" (SELECT 1 FROM {quote(allowed.db_table)} WHERE {link(allowed, endpoint_model)} = %s)"
        f" OR EXISTS (SELECT 1 FROM {quote(allowed.db_table)} a JOIN {quote(member.db_table)} m"
        f" ON m.{link(member, group)} = a.{link(allowed, group)}"
        f" WHERE a.{link(allowed, endpoint_model)} = %s AND m.{link(member, User)} = %s)"
    )


@cache
def recent_query(using: str) -> str:
    """A person's latest conversations with one agent, an agent's side of a comparison left out until
    the person continued it (views/conversations.listed): (user, endpoint, how many)."""
    from agents_ui.comparisons import ComparePane
    from agents_ui.models import Conversation

    quote = connections[using].ops.quote_name

    def column(model: Any, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    shown = ", ".join(f"c.{column(Conversation, name)}" for name in ("id", "endpoint", "title", "updated_at"))
    return (
        f"SELECT {shown} FROM {quote(Conversation._meta.db_table)} c"
        f" LEFT OUTER JOIN {quote(ComparePane._meta.db_table)} p"
        f" ON p.{column(ComparePane, 'conversation')} = c.{quote(Conversation._meta.pk.column)}"
        f" WHERE c.{column(Conversation, 'user')} = %s AND c.{column(Conversation, 'endpoint')} = %s"
        f" AND NOT (p.{quote(ComparePane._meta.pk.column)} IS NOT NULL"
        f" AND p.{column(ComparePane, 'continued_at')} IS NULL)"
        f" ORDER BY c.{column(Conversation, 'updated_at')} DESC LIMIT %s"
    )

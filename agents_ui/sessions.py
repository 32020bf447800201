"""Who is signed in, read in the fewest statements a request can make: every request reads its
session and its person, and every page that plans controls reads the person's permissions.

Django's database sessions and ModelBackend, with the same rules, read differently:
- the session (SESSION_ENGINE = "agents_ui.sessions"): one prepared SELECT of its data, unexpired;
- the person (AUTHENTICATION_BACKENDS): a raw query of the user's own columns, converted as the
  ORM converts them;
- all of a person's permissions, their own and their groups', in one SELECT instead of two, kept
  on the user object for the request as ModelBackend keeps them, and the async checks
  (`ahas_perm`) read them in one trip to a thread instead of two.

The statements are agents_ui/prepared.py's, and why: the ORM builds a query again for every request.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission
from django.contrib.sessions.backends import db
from django.core.exceptions import SuspiciousOperation
from django.db import connections, router
from django.utils import timezone

from agents_ui.prepared import permissions_query, person_query


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


class PersonBackend(ModelBackend):
    """ModelBackend (the same sign-in, the same rules for who may act), its reads prepared."""

    def get_user(self, user_id: Any) -> Any:
        User = get_user_model()
        using = router.db_for_read(User)
        found = list(User._default_manager.raw(person_query(using), [user_id]).using(using))
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
            using = router.db_for_read(Permission)
            with connections[using].cursor() as cursor:
                cursor.execute(permissions_query(using), [user_obj.pk, user_obj.pk])
                user_obj._perm_cache = {f"{app}.{codename}" for app, codename in cursor.fetchall()}
        return user_obj._perm_cache

    async def aget_all_permissions(self, user_obj: Any, obj: Any = None) -> set[str]:
        if obj is None and hasattr(user_obj, "_perm_cache"):
            return user_obj._perm_cache if user_obj.is_active else set()
        return await sync_to_async(self.get_all_permissions)(user_obj, obj)

"""Is this process alive, and can it serve? The answers of /healthz and /readyz.

`ready()` checks what every page needs: the database answers, its migrations are all applied, and
the cache answers where it is shared (Redis). Each check is a round trip or two; once the
migrations are found applied they stay so for the life of the process (a new release is a new
process), so that check is not repeated. Why a check failed goes to the log, never to the answer.
"""

from __future__ import annotations

import logging

from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor

logger = logging.getLogger(__name__)

_migrated = False


def database_reachable() -> bool:
    with connections[DEFAULT_DB_ALIAS].cursor() as cursor:
        cursor.execute("SELECT 1")
        return cursor.fetchone() == (1,)


def migrations_applied() -> bool:
    global _migrated
    if not _migrated:
        connection = connections[DEFAULT_DB_ALIAS]
        executor = MigrationExecutor(connection)
        _migrated = not executor.migration_plan(executor.loader.graph.leaf_nodes())
    return _migrated


def cache_reachable() -> bool:
    """The shared cache answers (the in-memory cache of one process always does)."""
    shared = caches["default"]
    if not isinstance(shared, RedisCache):
        return True
    shared.get("agents-ui:readyz")  # raises when Redis does not answer
    return True


CHECKS = (("database", database_reachable), ("migrations", migrations_applied), ("cache", cache_reachable))


def ready() -> bool:
    """Every check passes; the first that fails is logged (its name and the error's kind)."""
    for name, check in CHECKS:
        try:
            passed = check()
        except Exception as exc:
            logger.warning("not ready: the %s check failed (%s)", name, type(exc).__name__)
            return False
        if not passed:
            logger.warning("not ready: the %s check failed", name)
            return False
    return True

"""Django's SQLite backend, with the writers of one process taking turns on a lock of their own.

SQLite lets one writer into a database at a time. The others wait in its busy handler, which sleeps
and tries again (1, 2, 5... then 100 ms at a time): a writer that wakes just after the lock was taken
again sleeps once more. With hundreds of runs saving their events and people sending messages, a
send's transaction took milliseconds and waited up to 2.5 s for its turn (benchmarks/many_streams).
Within a process the writers queue on a lock instead, and each goes in the moment the one before
it is done; SQLite's busy timeout still decides between processes (a `manage.py` command beside the
server). An in-memory database (the tests') is left as it is: its locks are SQLite's shared cache.

A turn is taken by a transaction (`atomic`'s BEGIN IMMEDIATE, until COMMIT or ROLLBACK) and by a
statement other than a SELECT outside one (an autocommit INSERT, UPDATE or DELETE).
"""

from __future__ import annotations

import contextlib
import threading

from django.db.backends.sqlite3 import base

# One lock per database file, for every connection of the process.
_TURNS: dict[str, threading.Lock] = {}
_TURNS_GUARD = threading.Lock()


def _turn_for(name: str) -> threading.Lock:
    with _TURNS_GUARD:
        return _TURNS.setdefault(name, threading.Lock())


class TurnCursor(base.SQLiteCursorWrapper):
    """A cursor whose statements outside a transaction that may write wait for the process's turn."""

    wrapper: DatabaseWrapper

    def execute(self, query, params=None):
        with self.wrapper.turn_for(query):
            return super().execute(query, params)

    def executemany(self, query, param_list):
        with self.wrapper.turn_for(query):
            return super().executemany(query, param_list)


class _Turn:
    """The process's turn for one statement, taken on entering and given back on leaving."""

    def __init__(self, wrapper: DatabaseWrapper) -> None:
        self.wrapper = wrapper

    def __enter__(self) -> None:
        self.wrapper.take_turn()

    def __exit__(self, *exc: object) -> None:
        self.wrapper.end_turn()


_NO_TURN = contextlib.nullcontext()


class DatabaseWrapper(base.DatabaseWrapper):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._turn: threading.Lock | None = None
        self._statement_turn = _Turn(self)
        self.in_turn = False

    def get_new_connection(self, conn_params):
        connection = super().get_new_connection(conn_params)
        in_memory = self.is_in_memory_db()
        self._turn = None if in_memory else _turn_for(str(self.settings_dict["NAME"]))
        self._turn_timeout = float(conn_params.get("timeout", 5.0))
        return connection

    def create_cursor(self, name=None):
        cursor = self.connection.cursor(factory=TurnCursor)
        cursor.wrapper = self
        return cursor

    # --- Turns ---------------------------------------------------------------------------------------

    def turn_for(self, query: str) -> contextlib.AbstractContextManager[None]:
        """The turn a statement waits for: none inside a transaction (it has the turn) or for a read."""
        if (
            self._turn is None
            or self.in_turn
            or not self.autocommit
            or query[:16].lstrip()[:6].upper() == "SELECT"
        ):
            return _NO_TURN
        return self._statement_turn

    def take_turn(self) -> None:
        if self._turn is None or self.in_turn:
            return
        if not self._turn.acquire(timeout=self._turn_timeout):
            with self.wrap_database_errors:
                raise self.Database.OperationalError("database is locked")
        self.in_turn = True

    def end_turn(self) -> None:
        if self.in_turn:
            self.in_turn = False
            self._turn.release()

    # --- Where a transaction starts and ends ---------------------------------------------------------

    def _start_transaction_under_autocommit(self):
        self.take_turn()
        try:
            super()._start_transaction_under_autocommit()
        except BaseException:
            self.end_turn()
            raise

    def _commit(self):
        result = super()._commit()  # when COMMIT fails, the rollback that follows ends the turn
        self.end_turn()
        return result

    def _rollback(self):
        try:
            return super()._rollback()
        finally:
            self.end_turn()

    def _close(self):
        try:
            return super()._close()
        finally:
            self.end_turn()

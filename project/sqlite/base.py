"""Django's SQLite backend, with the writers of one process taking turns on a lock of their own.

SQLite lets one writer into a database at a time. The others wait in its busy handler, which sleeps
and tries again (1, 2, 5... then 100 ms at a time): a writer that wakes just after the lock was taken
again sleeps once more. With hundreds of runs saving their events and people sending messages, a
send's transaction took milliseconds and waited up to 2.5 s for its turn (benchmarks/many_streams).
Within a process the writers queue on a lock instead, and each goes in the moment the one before
it is done; SQLite's busy timeout still decides between processes (a `manage.py` command beside the
server). An in-memory database (the tests') is left as it is: its locks are SQLite's shared cache.

The turn goes to the writers in the order they asked for it (Turns). A plain lock goes to whichever
thread asks while it is free, so with sixteen sends and the event writer waiting, a woken send could
lose it again and again to threads that just arrived and wait twice as long as the others
(benchmarks/many_streams, the sends' p99).

A turn is taken by a transaction (`atomic`'s BEGIN IMMEDIATE, until COMMIT or ROLLBACK) and by a
statement other than a SELECT outside one (an autocommit INSERT, UPDATE or DELETE).
"""

from __future__ import annotations

import collections
import contextlib
import threading
import time

from django.db.backends.sqlite3 import base


class _Waiter:
    """A thread in line for the turn, and the lock it sleeps on until the turn is offered to it."""

    __slots__ = ("wake", "woken")

    def __init__(self) -> None:
        self.wake = threading.Lock()
        self.wake.acquire()
        self.woken = False  # the wake is given and not yet taken


class Turns:
    """A lock taken in the order it was asked for, as long as the one it is offered to comes for it.

    Giving it back offers it to the first in line; anyone else waits behind. An offer that is not
    taken within OFFER_SECONDS (its thread still waiting for a core, on a machine busier than it has
    cores) lapses: a thread that asks then takes the turn, and the one it was offered to stays first
    in line for the next offer. A strict order had cut the sends' tail on a quiet machine, but with
    four busy processes beside it every hand-over waited for the next thread to be scheduled, and
    the starts fell from 49 to 13 a second (benchmarks/many_streams --burn 4).
    """

    OFFER_SECONDS = 0.002

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._held = False
        self._waiting: collections.deque[_Waiter] = collections.deque()
        self._offered: _Waiter | None = None
        self._offered_at = 0.0

    def acquire(self, timeout: float = -1) -> bool:
        with self._guard:
            if not self._held and (
                self._offered is None or time.monotonic() - self._offered_at > self.OFFER_SECONDS
            ):
                self._held, self._offered = True, None
                return True
            waiter = _Waiter()
            self._waiting.append(waiter)
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while True:
            left = -1 if deadline is None else max(0.0, deadline - time.monotonic())
            try:
                woken = waiter.wake.acquire(timeout=left)
            except BaseException:  # interrupted: out of the line, and an offer made to it passes on
                with self._guard:
                    self._waiting.remove(waiter)
                    if self._offered is waiter:
                        self._offer_first()
                raise
            with self._guard:
                if woken:
                    waiter.woken = False
                if not self._held and self._offered is waiter:
                    self._held, self._offered = True, None
                    self._waiting.remove(waiter)
                    return True
                if not woken and deadline is not None and time.monotonic() >= deadline:
                    self._waiting.remove(waiter)
                    return False
            # Woken, but the offer lapsed and another thread has the turn: wait for the next offer.

    def release(self) -> None:
        with self._guard:
            if not self._held:
                raise RuntimeError("release of a turn not taken")
            self._held = False
            self._offer_first()

    def _offer_first(self) -> None:
        """Offer the free turn to the first in line (the guard held)."""
        self._offered = None
        if self._waiting:
            first = self._waiting[0]
            self._offered, self._offered_at = first, time.monotonic()
            if not first.woken:
                first.woken = True
                first.wake.release()

    def locked(self) -> bool:
        return self._held


# One queue of turns per database file, for every connection of the process.
_TURNS: dict[str, Turns] = {}
_TURNS_GUARD = threading.Lock()


def _turn_for(name: str) -> Turns:
    with _TURNS_GUARD:
        return _TURNS.setdefault(name, Turns())


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
        self._turn: Turns | None = None
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

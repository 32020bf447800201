"""SQLite's writers in one process take turns on a lock: a transaction holds the turn from its BEGIN
to its COMMIT or ROLLBACK, an autocommit write for its statement; the next writer goes in as soon
as it is free, and one that waits past the busy timeout gets "database is locked"."""

from __future__ import annotations

import threading

import pytest
from django.contrib.auth.models import User
from django.db import OperationalError, connections, transaction
from django.db.backends.sqlite3.base import DatabaseWrapper as DjangoSQLite

from project.sqlite.base import DatabaseWrapper, Turns, _Waiter

pytestmark = pytest.mark.django_db(transaction=True)


class _Default:
    """This thread's connection itself (django.db.connection is a proxy to it)."""

    def __getattr__(self, name):
        return getattr(connections["default"], name)

    def __setattr__(self, name, value):
        setattr(connections["default"], name, value)


connection = _Default()


def turn_of_the_database():
    connection.ensure_connection()
    assert isinstance(connections["default"], DatabaseWrapper)
    return connection._turn


def in_a_thread(work) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run() -> None:
        try:
            result["value"] = work()
        except Exception as exc:
            result["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


def test_the_product_runs_on_this_backend():
    assert connection.settings_dict["ENGINE"] == "project.sqlite"
    assert isinstance(connections["default"], DjangoSQLite)


def test_a_transaction_holds_the_turn_until_it_commits_and_the_next_writer_then_goes_in():
    turn = turn_of_the_database()
    entered, release = threading.Event(), threading.Event()

    def first() -> None:
        with transaction.atomic():
            User.objects.create(username="first")
            entered.set()
            release.wait(10)

    def second() -> str:
        with transaction.atomic():
            User.objects.create(username="second")
        return "saved"

    one, _ = in_a_thread(first)
    assert entered.wait(10)
    assert turn.locked()
    two, result = in_a_thread(second)
    two.join(0.3)
    assert two.is_alive() and not result  # waiting for its turn
    release.set()
    one.join(10)
    two.join(10)
    assert result == {"value": "saved"}
    assert not turn.locked()
    assert set(User.objects.values_list("username", flat=True)) >= {"first", "second"}


def test_a_rollback_and_an_error_give_the_turn_back():
    turn = turn_of_the_database()
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            User.objects.create(username="gone")
            assert turn.locked()
            raise RuntimeError("the work failed")
    assert not turn.locked()
    assert not User.objects.filter(username="gone").exists()


def test_an_autocommit_write_takes_the_turn_for_its_statement_and_a_read_takes_none():
    turn = turn_of_the_database()
    taken = []
    original = DatabaseWrapper.take_turn

    def recording(self) -> None:
        taken.append(True)
        original(self)

    DatabaseWrapper.take_turn = recording  # type: ignore[method-assign]
    try:
        list(User.objects.all())
        assert taken == []
        User.objects.filter(username="nobody").update(first_name="x")
        assert taken == [True]
    finally:
        DatabaseWrapper.take_turn = original  # type: ignore[method-assign]
    assert not turn.locked()


def test_a_writer_that_waits_past_the_busy_timeout_is_told_the_database_is_locked():
    turn = turn_of_the_database()
    connection._turn_timeout = 0.2
    turn.acquire()  # another writer of this process keeps its turn
    try:
        with pytest.raises(OperationalError, match="database is locked"):
            with transaction.atomic():
                User.objects.create(username="late")
        with pytest.raises(OperationalError, match="database is locked"):
            User.objects.filter(username="late").delete()
    finally:
        turn.release()
        connection._turn_timeout = 20.0
    assert not connection.in_turn
    User.objects.create(username="late")


def test_an_in_memory_database_keeps_sqlites_own_locks():
    memory = DatabaseWrapper({**connection.settings_dict, "NAME": ":memory:", "TEST": {}}, alias="memory")
    try:
        with memory.cursor() as cursor:
            cursor.execute("CREATE TABLE t (x)")
            cursor.execute("INSERT INTO t VALUES (1)")
        assert memory._turn is None and not memory.in_turn
    finally:
        memory.close()


# --- The line for the turn (project.sqlite.base.Turns), on its own ---------------------------------


def queued(turns, count: int) -> None:
    for _ in range(500):
        with turns._guard:
            if len(turns._waiting) == count:
                return
        threading.Event().wait(0.01)
    raise AssertionError(f"{count} threads never queued")


@pytest.mark.django_db(transaction=False)
def test_the_turn_goes_to_the_writers_in_the_order_they_asked_for_it():
    turns, order = Turns(), []
    assert turns.acquire()

    def writer(name: str) -> None:
        assert turns.acquire(timeout=10)
        order.append(name)
        turns.release()

    threads = []
    for i, name in enumerate("abcde"):
        threads.append(threading.Thread(target=writer, args=(name,)))
        threads[-1].start()
        queued(turns, i + 1)
    turns.release()
    for thread in threads:
        thread.join(10)
    assert order == list("abcde") and not turns.locked()


@pytest.mark.django_db(transaction=False)
def test_a_turn_offered_to_the_first_in_line_waits_for_it_until_the_offer_lapses(monkeypatch):
    turns, slow = Turns(), _Waiter()  # first in line, its thread not yet running
    assert turns.acquire()
    turns._waiting.append(slow)
    turns.release()
    assert turns._offered is slow and slow.woken
    assert not turns.acquire(timeout=0)  # a thread that just asked goes behind it
    assert list(turns._waiting) == [slow]
    monkeypatch.setattr(turns, "OFFER_SECONDS", -1.0)  # the offer lapsed
    assert turns.acquire(timeout=0) and turns._offered is None
    assert list(turns._waiting) == [slow]  # still first in line, and offered the turn again next
    turns.release()
    assert turns._offered is slow and not turns.locked()
    assert slow.wake.acquire(blocking=False) and not slow.wake.acquire(blocking=False)  # woken once


@pytest.mark.django_db(transaction=False)
def test_a_writer_that_waits_past_its_timeout_leaves_the_line():
    turns, got = Turns(), []
    assert turns.acquire()
    late = threading.Thread(target=lambda: got.append(turns.acquire(timeout=0.05)))
    late.start()
    late.join(10)
    assert got == [False] and not turns._waiting and turns.locked()
    turns.release()
    assert turns.acquire(timeout=0)


@pytest.mark.django_db(transaction=False)
def test_a_writer_interrupted_in_line_leaves_it_and_the_turn_offered_to_it_goes_to_the_next(monkeypatch):
    from project.sqlite import base

    turns, behind = Turns(), _Waiter()
    assert turns.acquire()

    class Interrupted:
        def acquire(self, timeout: float = -1) -> bool:
            turns._waiting.append(behind)  # another writer queues behind it
            turns.release()  # the turn is given back and offered to the interrupted one
            raise KeyboardInterrupt

        def release(self) -> None:
            pass

    class InterruptedWaiter(_Waiter):
        def __init__(self) -> None:
            super().__init__()
            self.wake = Interrupted()

    monkeypatch.setattr(base, "_Waiter", InterruptedWaiter)
    with pytest.raises(KeyboardInterrupt):
        turns.acquire(timeout=10)
    assert list(turns._waiting) == [behind] and turns._offered is behind and behind.woken
    assert not turns.locked()

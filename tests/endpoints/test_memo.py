from __future__ import annotations

from agents_ui.endpoints import memo as memo_module
from agents_ui.endpoints.memo import MISSING, Memo, forget_all
from tests.support.clock import Clock


def test_a_memo_keeps_a_value_by_its_key_and_pushes_out_the_oldest_when_full():
    memo = Memo("test", size=2)
    memo.put("a", 1)
    memo.put("b", 2)
    assert (memo.get("a"), memo.get("b")) == (1, 2)
    memo.put("c", 3)
    assert (memo.get("a"), memo.get("b"), memo.get("c")) == (None, 2, 3)
    assert len(memo) == 2


def test_a_memo_entry_expires_after_its_seconds_and_a_stored_none_is_told_from_a_missing_one(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(memo_module, "now", clock)
    memo = Memo("test", size=8, seconds=lambda: 0.05)
    memo.put("gone soon", None)
    assert memo.get("gone soon", MISSING) is None
    assert memo.get("never put", MISSING) is MISSING
    clock.advance(0.04)
    assert memo.get("gone soon", MISSING) is None
    clock.advance(0.02)
    assert memo.get("gone soon", MISSING) is MISSING


def test_a_memo_trusting_nothing_keeps_nothing():
    memo = Memo("test", size=8, seconds=0)
    memo.put("k", 1)
    assert memo.get("k") is None


def test_every_memo_can_be_forgotten_at_once():
    first, second = Memo("first", size=8), Memo("second", size=8)
    first.put("k", 1)
    second.put("k", 2)
    forget_all()
    assert (first.get("k"), second.get("k")) == (None, None)

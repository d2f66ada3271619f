"""The request journal's random generator: marks and rewinds instead of copying its state (issue 22)."""

from __future__ import annotations

import random

from fakeapi.server import txn


def _draws(r: random.Random) -> list[object]:
    """A mix of every kind of draw the server makes (uids, names, IPs, ports), and a few more."""
    return [r.getrandbits(128), r.choice("bcdf2456"), r.randrange(30000, 32768), r.random(), r.getrandbits(1),
            r.getrandbits(32), r.getrandbits(33), r.gauss(0, 1), r.randbytes(5), r.getrandbits(0)]


def test_the_same_sequence_as_random_random() -> None:
    plain, journaled = random.Random(7), txn.JournaledRandom(7)
    for _ in range(50):
        assert _draws(journaled) == _draws(plain)
    assert journaled.getstate() == plain.getstate()


def test_rewind_puts_back_the_state_it_had() -> None:
    r = txn.JournaledRandom(3)
    _draws(r)
    mark, state = r.mark(True), r.getstate()
    first = _draws(r)
    r.rewind(mark)
    assert r.getstate() == state
    assert _draws(r) == first  # (drawn again)


def test_nested_marks_and_a_rewind_with_nothing_drawn() -> None:
    r = txn.JournaledRandom(5)
    outer = r.mark(True)
    state0 = r.getstate()
    r.rewind(outer)  # (nothing drawn: nothing changes)
    assert r.getstate() == state0
    _draws(r)
    inner = r.mark(False)
    state1 = r.getstate()
    _draws(r)
    r.rewind(inner)
    assert r.getstate() == state1
    _draws(r)
    r.rewind(outer)
    assert r.getstate() == state0


def test_a_checkpoint_far_behind_is_taken_anew_by_an_outermost_mark() -> None:
    r, plain = txn.JournaledRandom(1), random.Random(1)
    for _ in range(txn.CHECKPOINT_WORDS // 4 + 10):
        assert r.getrandbits(128) == plain.getrandbits(128)
    mark = r.mark(True)
    assert r._checkpoint[1] == r.drawn  # (taken here: a rewind replays nothing)
    state = r.getstate()
    r.getrandbits(64)
    r.rewind(mark)
    assert r.getstate() == state == plain.getstate()


def test_seed_and_setstate_start_over() -> None:
    r = txn.JournaledRandom(2)
    _draws(r)
    saved = r.getstate()
    r.seed(2)
    assert r.getstate() == txn.JournaledRandom(2).getstate()
    r.setstate(saved)
    mark = r.mark(True)
    _draws(r)
    r.rewind(mark)
    assert r.getstate() == saved

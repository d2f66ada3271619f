"""The server's generator (``txn.JournaledRandom``) draws words a block ahead: its values and its
state must stay those of ``random.Random`` with the same seed, and going back must replay the same values."""

from __future__ import annotations

import random

import pytest

from fakeapi.server.txn import JournaledRandom


def _draw(r: random.Random, i: int) -> object:
    op = i % 8
    if op == 0:
        return r.getrandbits(128)  # (a uid)
    if op == 1:
        return r.random()
    if op == 2:
        return r.randrange(1, 1 << 20)  # (a cluster IP's offset)
    if op == 3:
        return r.choice("bcdfghjklmnpqrstvwxz2456789")  # (a generated name's letter)
    if op == 4:
        return r.getrandbits(45)
    if op == 5:
        return r.randint(30000, 32767)  # (a node port)
    if op == 6:
        return r.randbytes(1500)  # (more words than a block holds)
    return r.getrandbits(0), r.getrandbits(7)


@pytest.mark.parametrize("seed", [0, 1, 42])
def test_same_values_and_state_as_random(seed: int) -> None:
    plain, journaled = random.Random(seed), JournaledRandom(seed)
    for i in range(3000):
        if i % 40 == 0:
            journaled.arm()
        if i % 40 == 25:
            journaled.disarm()
        assert _draw(journaled, i) == _draw(plain, i), i
        if i % 89 == 0:
            assert journaled.getstate() == plain.getstate(), i
    assert journaled.getstate() == plain.getstate()
    assert len(journaled._words) < 2000  # (the words handed out are dropped between requests)


def test_rewind_replays_the_same_values() -> None:
    r = JournaledRandom(7)
    r.getrandbits(128)
    r.arm()
    before = r.getstate()
    first = [_draw(r, i) for i in range(500)]
    assert r.saved is not None
    r.rewind(r.saved)
    assert r.getstate() == before
    assert [_draw(r, i) for i in range(500)] == first
    r.disarm()


def test_setstate_and_gauss() -> None:
    plain, journaled = random.Random(3), JournaledRandom(3)
    assert journaled.gauss() == plain.gauss()
    assert journaled.getstate() == plain.getstate()
    plain.getrandbits(64)
    journaled.setstate(plain.getstate())
    assert journaled.random() == plain.random()
    journaled.seed(11)
    plain.seed(11)
    assert journaled.getrandbits(128) == plain.getrandbits(128)
    with pytest.raises(ValueError):
        journaled.getrandbits(-1)

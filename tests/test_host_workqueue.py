"""The work queue rules (client-go's workqueue on the virtual clock) and the back-off sequence."""

from __future__ import annotations

import random
from datetime import timedelta

from fakeapi.host import ExponentialBackoff, WorkQueue
from fakeapi.server.clock import Clock

MS = timedelta(milliseconds=1)


def make_queue(seed: int = 0) -> tuple[Clock, WorkQueue[str]]:
    clock = Clock()
    return clock, WorkQueue(clock, random.Random(seed))


def drain(q: WorkQueue[str]) -> list[str]:
    out = []
    while (item := q.get()) is not None:
        out.append(item)
        q.done(item)
    return out


def test_a_key_is_queued_once_however_many_adds() -> None:
    _, q = make_queue()
    for _ in range(5):
        q.add("a")
    q.add("b")
    assert len(q) == 2
    assert sorted(drain(q)) == ["a", "b"]
    assert q.get() is None


def test_a_key_added_while_processing_is_handed_out_again_after_done() -> None:
    _, q = make_queue()
    q.add("a")
    assert q.get() == "a"
    q.add("a")
    q.add("a")
    # not handed out a second time while it is being processed
    assert q.get() is None
    assert q.processing == frozenset({"a"})
    q.done("a")
    assert q.get() == "a"
    q.done("a")
    assert q.get() is None


def test_done_without_new_adds_does_not_requeue() -> None:
    _, q = make_queue()
    q.add("a")
    assert q.get() == "a"
    q.done("a")
    assert q.get() is None
    assert len(q) == 0


def test_backoff_sequence_doubles_from_5ms() -> None:
    rl = ExponentialBackoff()
    delays = [rl.when("k") for _ in range(6)]
    assert delays == [5 * MS, 10 * MS, 20 * MS, 40 * MS, 80 * MS, 160 * MS]
    assert rl.num_requeues("k") == 6
    # another key has its own back-off
    assert rl.when("other") == 5 * MS


def test_backoff_is_capped_at_1000s() -> None:
    rl = ExponentialBackoff()
    delays = [rl.when("k") for _ in range(40)]
    # 5ms * 2**17 = 655.36s, 5ms * 2**18 = 1310.72s > cap
    assert delays[17] == timedelta(seconds=655.36)
    assert delays[18] == timedelta(seconds=1000)
    assert delays[-1] == timedelta(seconds=1000)
    assert max(delays) == timedelta(seconds=1000)


def test_forget_resets_the_backoff() -> None:
    rl = ExponentialBackoff()
    for _ in range(4):
        rl.when("k")
    rl.forget("k")
    assert rl.num_requeues("k") == 0
    assert rl.when("k") == 5 * MS


def test_rate_limited_adds_wait_on_the_virtual_clock() -> None:
    clock, q = make_queue()
    assert q.add_rate_limited("a") == 5 * MS
    assert q.get() is None
    assert q.next_wakeup() == clock.now() + 5 * MS
    clock.advance(4 * MS)
    assert q.get() is None
    clock.advance(1 * MS)
    assert q.get() == "a"
    q.done("a")
    assert q.add_rate_limited("a") == 10 * MS
    q.forget("a")
    assert q.num_requeues("a") == 0


def test_add_after_keeps_the_earliest_delay() -> None:
    clock, q = make_queue()
    q.add_after("a", timedelta(seconds=30))
    q.add_after("a", timedelta(seconds=10))
    q.add_after("a", timedelta(seconds=20))
    assert q.waiting() == {"a": clock.now() + timedelta(seconds=10)}
    clock.advance(timedelta(seconds=10))
    assert q.get() == "a"
    q.done("a")
    clock.advance(timedelta(seconds=30))
    assert q.get() is None  # the later delays were superseded
    assert q.next_wakeup() is None


def test_add_after_zero_is_an_immediate_add() -> None:
    _, q = make_queue()
    q.add_after("a", timedelta(0))
    assert q.get() == "a"


def test_a_delayed_add_still_fires_after_the_key_was_reconciled_meanwhile() -> None:
    clock, q = make_queue()
    q.add_after("a", timedelta(seconds=5))
    q.add("a")
    assert q.get() == "a"
    q.done("a")
    assert q.get() is None
    clock.advance(timedelta(seconds=5))
    assert q.get() == "a"


def test_a_delayed_add_of_a_processing_key_waits_for_done() -> None:
    clock, q = make_queue()
    q.add("a")
    assert q.get() == "a"
    q.add_after("a", timedelta(seconds=1))
    clock.advance(timedelta(seconds=1))
    assert q.get() is None  # still processing
    q.done("a")
    assert q.get() == "a"


def test_ready_keys_come_out_by_ready_time_then_seeded_order() -> None:
    clock, q = make_queue(seed=1)
    q.add_after("late", timedelta(seconds=1))
    for k in "abcdef":
        q.add(k)
    clock.advance(timedelta(seconds=2))
    q.add("later-added")
    order = drain(q)
    # everything ready at t0 comes before what became ready at t0+1s, then t0+2s
    assert sorted(order[:6]) == list("abcdef")
    assert order[6:] == ["late", "later-added"]


def test_the_seed_decides_the_order_of_keys_ready_at_the_same_time() -> None:
    def order(seed: int) -> list[str]:
        _, q = make_queue(seed)
        for k in "abcdefgh":
            q.add(k)
        return drain(q)

    assert order(3) == order(3)
    orders = {tuple(order(s)) for s in range(6)}
    assert len(orders) > 1

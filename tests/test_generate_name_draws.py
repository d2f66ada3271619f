"""Generated names draw from the seeded generator exactly as ``random.choice`` does (issue 22: an inline draw)."""

from __future__ import annotations

import random

from fakeapi import APIServer
from fakeapi.server.pipeline import GENERATE_ALPHABET
from fakeapi.server.txn import JournaledRandom


def test_generated_names_are_random_choice_draws() -> None:
    api = APIServer(seed=7)
    twin = JournaledRandom(7)
    api._rng.setstate(twin.getstate())
    for i in range(200):
        base = f"runner-{i}-" * (i % 9)
        want = base[:58] + "".join(twin.choice(GENERATE_ALPHABET) for _ in range(5))
        assert api._generate_name(base) == want
    assert api._rng.getstate() == twin.getstate()


def test_a_plain_random_generator_draws_the_same() -> None:
    api = APIServer(seed=3)
    api._rng = random.Random(11)
    twin = random.Random(11)
    for _ in range(50):
        assert api._generate_name("x-") == "x-" + "".join(twin.choice(GENERATE_ALPHABET) for _ in range(5))

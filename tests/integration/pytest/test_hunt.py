"""For pytest --hermetic-hunt: one test fails under some seeds (a random
byte below 64: 1 in 4), the others pass whatever the seed."""
import os
import random


def test_passes():
    assert 1 + 1 == 2


def test_seed_dependent():
    b = os.urandom(1)[0]
    print("VALUES byte=%d" % b)
    assert b >= 64, "random byte %d < 64" % b


def test_random_but_fine():
    assert 0 <= random.random() < 1

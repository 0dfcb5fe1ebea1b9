"""Tests that print what they see: time, uuid4, random, os.urandom."""
import os
import random
import time
import uuid

import pytest


def show(tag):
    print("WORKER %s" % os.environ.get("PYTEST_XDIST_WORKER", "-"))
    print("VALUES %s time=%r mono=%r uuid=%s random=%r urandom=%s" % (
        tag, time.time(), time.monotonic(), uuid.uuid4(), random.random(), os.urandom(4).hex()))


def test_first():
    show("first")
    time.sleep(3)


def test_second():
    show("second")


@pytest.mark.hermetic(seed=1234)
def test_fixed():
    show("fixed")


def test_sandbox(hermetic_sandbox):
    before = time.time()
    hermetic_sandbox.clock.advance(3600)
    print("VALUES sandbox advanced=%r now=%s" % (time.time() - before, hermetic_sandbox.clock.now().isoformat()))


def test_fails():
    show("fails")
    assert os.environ.get("MAKE_IT_PASS"), "fails on purpose: %s" % uuid.uuid4()


@pytest.mark.hermetic(off=True)
def test_off():
    print("VALUES off scope=%r" % (__import__("hermetic").current().scope,))

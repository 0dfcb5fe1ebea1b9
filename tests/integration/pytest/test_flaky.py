"""Fails on its first attempt, passes on the second (pytest-rerunfailures)."""
import os
import uuid


def test_flaky():
    print("VALUES flaky uuid=%s" % uuid.uuid4())
    marker = os.environ["FLAKY_MARKER"]
    if not os.path.exists(marker):
        open(marker, "w").close()
        assert False, "first attempt fails"

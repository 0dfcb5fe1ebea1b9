# pytest-timeout (its SIGALRM method) ends a test that computes; the next
# test's timer is on the run's clock again (its sleep is not cut short).
import time


def test_spins():
    while True:
        pass


def test_after():
    time.sleep(0.5)

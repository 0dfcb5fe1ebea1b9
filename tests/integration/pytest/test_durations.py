"""Tests that take real time without reading the run's clock: they spin on
/proc/uptime, the kernel's real uptime, which the shim leaves alone, so the
run's virtual clock does not move meanwhile (pytest_durations.sh)."""
import time


def uptime():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0])


def busy(seconds):
    end = uptime() + seconds
    while uptime() < end:
        pass


def test_busy_short():
    busy(1.0)


def test_busy_long():
    busy(2.0)


def test_own_clock_stays_virtual():
    # A wait first: the two tests before spun 3 s reading /proc/uptime,
    # and each open() here reads the run's clock a few times, so this
    # thread's run of readings without a wait is long past the 100,000
    # after which they tick, and its tick has grown (docs/virtual-time.md,
    # "Threads that poll for time"). The wait starts the count again: what
    # is asserted is that real time does not show, not the ticks.
    time.sleep(0)
    t = time.monotonic()
    busy(0.3)
    assert time.monotonic() - t < 0.25, "the test's own clock followed real time"

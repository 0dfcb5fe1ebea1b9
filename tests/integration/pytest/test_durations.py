"""Tests that take real time without reading the run's clock: they spin on
/proc/uptime, the kernel's real uptime, which the shim leaves alone, so the
run's virtual clock does not move meanwhile (pytest_durations.sh)."""
import os
import time

# One descriptor, read with pread: open() reads the run's clock (a file's
# times), and 0.3 s of opens on a fast machine, each a few readings at a
# tick that grows with the thread's run of readings, moved the thread's
# own clock past what test_own_clock_stays_virtual allows. pread reads
# no clock.
_UPTIME = os.open("/proc/uptime", os.O_RDONLY)


def uptime():
    return float(os.pread(_UPTIME, 64, 0).split()[0])


def busy(seconds):
    end = uptime() + seconds
    while uptime() < end:
        pass


def test_busy_short():
    busy(1.0)


def test_busy_long():
    busy(2.0)


def test_own_clock_stays_virtual():
    # A wait first: whatever this thread read before (pytest's own
    # readings), its run of readings without a wait starts again here, so
    # its tick is the base one (docs/virtual-time.md, "Threads that poll
    # for time"). What is asserted is that real time does not show.
    time.sleep(0)
    t = time.monotonic()
    busy(0.3)
    assert time.monotonic() - t < 0.25, "the test's own clock followed real time"

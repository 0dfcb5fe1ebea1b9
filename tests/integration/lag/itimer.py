# A repeating 1 ms ITIMER_REAL during 100,000 zero-timeout polls fires as
# often as the thread's readings say time passed.
import select
import signal
import time

n = [0]
signal.signal(signal.SIGALRM, lambda *a: n.__setitem__(0, n[0] + 1))
t0 = time.monotonic()
signal.setitimer(signal.ITIMER_REAL, 0.001, 0.001)
for i in range(100000):
    select.select([], [], [], 0)
signal.setitimer(signal.ITIMER_REAL, 0)
el = time.monotonic() - t0
print("elapsed_ms %d signals %d" % (round(el * 1000), n[0]))

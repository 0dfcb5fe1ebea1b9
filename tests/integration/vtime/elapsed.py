# A timed-out wait of d seconds measures at least d in floating point,
# as on a real kernel, for every seed (CPython's test_eintr).
import select, threading, time
short = []
for d in (0.2, 0.1, 0.3, 1.5, 0.05):
    for wait in (lambda: time.sleep(d), lambda: select.select([], [], [], d),
                 lambda: threading.Event().wait(d)):
        t0 = time.monotonic()
        wait()
        if time.monotonic() - t0 < d:
            short.append(d)
print("short waits:", len(short))

# A thread that ticked 0.1 s (100,000 zero-timeout polls) and then waits for
# another thread's sleep(1) measures it as the other does: 1 s.
import select
import threading
import time

for i in range(100000):
    select.select([], [], [], 0)
t0 = time.monotonic()
res = []


def sleeper():
    s = time.monotonic()
    time.sleep(1)
    res.append(time.monotonic() - s)


th = threading.Thread(target=sleeper)
th.start()
th.join()
print("main %.3f sleeper %.3f" % (time.monotonic() - t0, res[0]))

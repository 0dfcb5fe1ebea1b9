# A daemon thread that spins (a recv() loop on a closed peer) does not stop
# the main thread's select(1.0) from timing out.
import select
import threading
import time


def spin():
    while True:
        pass


threading.Thread(target=spin, daemon=True).start()
t0 = time.monotonic()
select.select([], [], [], 1.0)
print("select returned after %.3f" % (time.monotonic() - t0))

# multiprocessing.connection.wait(timeout=0) polls until the clock shows the
# zero timeout has passed ("deadline - now < 0"), while another thread holds
# the GIL computing: every loop costs a GIL switch interval of real time.
import threading
from multiprocessing.connection import Pipe, wait

r, w = Pipe(duplex=False)
stop = False


def spin():
    while not stop:
        pass


t = threading.Thread(target=spin)
t.start()
n = sum(1 for _ in range(20) if not wait([r], 0))
stop = True
t.join()
w.send_bytes(b"x")
print("empty", n, "ready", len(wait([r], 0)))

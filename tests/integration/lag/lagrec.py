# A sleep the lag bound ends while another thread computes, recorded and
# replayed: the replay prints what the recording printed.
import threading
import time

stop = False


def spin():
    while not stop:
        pass


th = threading.Thread(target=spin)
th.start()
t0 = time.monotonic()
time.sleep(0.2)
print("slept %.3f at %.6f" % (time.monotonic() - t0, time.time()))
stop = True
th.join()

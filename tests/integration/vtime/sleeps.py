# An hour of sleeps, in many sizes: virtual time moves by exactly that.
import time
t0, m0 = time.time(), time.monotonic()
for i in range(3600):
    time.sleep(1)
print("slept", round(time.time() - t0, 6), round(time.monotonic() - m0, 6))

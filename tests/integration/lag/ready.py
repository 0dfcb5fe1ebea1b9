# A loop that waits with a timeout on an always-ready fd until a deadline:
# each select returns at once, and counts as a round of a polling loop.
import os
import select
import time

r, w = os.pipe()
os.write(w, b"x")
t0 = time.monotonic()
deadline = t0 + 1.0
rounds = 0
while True:
    left = deadline - time.monotonic()
    if left <= 0:
        break
    select.select([r], [], [], left)
    rounds += 1
print("ended at %.3f after %s rounds" % (time.monotonic() - t0, "many" if rounds > 1000 else rounds))

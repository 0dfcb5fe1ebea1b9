# Issue 29's reduction of CPython's test_make_msgid_collisions: five threads
# make message ids until 1 s of monotonic() has passed; prints how many.
# Each thread's readings are its own, two per id: with a constant 1 us tick
# a thread needed 1.1 million readings (2.75 million ids in all, 7 times
# slower than bare); the growing tick ends each thread's second in about
# 164,000 (docs/virtual-time.md, "Threads that poll for time").
import email.utils
import threading
import time

ids = []


def run():
    end = time.monotonic() + 1.0
    n = 0
    while time.monotonic() < end:
        email.utils.make_msgid(domain="foo.bar")
        n += 1
    ids.append(n)


ts = [threading.Thread(target=run) for _ in range(5)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sum(ids))

# Threads that sleep, wait on each other and read the clock; a failing exit
# keeps the journal.
import os, sys, threading, time, uuid
out = [None] * 4
ev = threading.Event()
def work(i):
    time.sleep(0.5 * (4 - i))
    if i == 0:
        ev.set()
    else:
        ev.wait(10)
    out[i] = (i, time.time(), str(uuid.uuid4()), os.urandom(4).hex())
ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
for t in ts: t.start()
for t in ts: t.join()
for o in out: print(*o)
print("main", time.time())
sys.exit(1)

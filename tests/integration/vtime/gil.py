# A thread busy-polls a flag another thread sets: under CPython the poller
# sees it only when the GIL changes hands, which takes the GIL switch
# interval (a timed wait) to elapse while both compute.
import threading, time, sys
started = [False]; cont = [True]; interrupted = [False]
def worker():
    it = 100_000_000
    started[0] = True
    while cont[0]:
        if it: it -= 1
        else: return
    interrupted[0] = True
t0 = time.perf_counter()
t = threading.Thread(target=worker); t.start()
while not started[0]: pass
cont[0] = False; t.join()
print(interrupted[0])

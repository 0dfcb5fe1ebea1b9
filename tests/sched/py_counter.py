"""Lost update in Python threads: a read-modify-write of a shared total
through a helper call (the interpreter may switch threads at the call)."""
import sys
import threading

total = 0


def add(v, k):
    return v + k


def work():
    global total
    for _ in range(30000):
        v = total
        v = add(v, 1)
        total = v


ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("total", total, "expected", 60000)
sys.exit(total != 60000)

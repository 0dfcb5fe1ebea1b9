"""Check-then-act in Python threads: a cache filled on a miss; two threads
may both miss and both build the entry (the builder is called twice)."""
import sys
import threading

cache = {}
builds = []


def build(key):
    builds.append(key)
    return sum(range(200))


def get(key):
    if key not in cache:
        cache[key] = build(key)
    return cache[key]


def work():
    for k in range(3000):
        get(k)


ts = [threading.Thread(target=work) for _ in range(2)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("built", len(builds), "entries for", len(cache))
sys.exit(len(builds) != len(cache))

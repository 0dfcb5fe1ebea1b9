"""Atomicity violation in Python threads: a transfer moves money between
two accounts in two steps while an auditor checks the sum; the auditor
sees money in flight (a helper call sits between the two steps)."""
import sys
import threading

acct = {"a": 500, "b": 500}
done = False
bad = []


def step(k, d):
    acct[k] = acct[k] + d


def transfer():
    global done
    for _ in range(20000):
        step("a", -1)
        step("b", 1)
    done = True


def audit():
    for _ in range(20000):
        if done:
            break
        s = acct["a"] + acct["b"]
        if s != 1000:
            bad.append(s)


ts = [threading.Thread(target=transfer), threading.Thread(target=audit)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print("audits that saw money in flight:", len(bad))
sys.exit(bool(bad))

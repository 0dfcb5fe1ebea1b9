# SPDX-License-Identifier: MIT
# A lost update between blocking points, in Python threads (--sched serial,
# tests/integration/sched_serial.sh): both threads wait for one event, then
# the updater reads the balance, sleeps (a blocking call between the check
# and the act) and writes what it read plus 10, while the depositor adds 1
# with no blocking call. If the updater reads first, the deposit is lost:
# which thread goes on first when the event is set is the schedule's choice.
# Exits 1 when the bug shows.
import sys
import threading
import time

balance = 100
go = threading.Event()


def updater():
    global balance
    go.wait()
    v = balance
    time.sleep(0.001)
    balance = v + 10


def depositor():
    global balance
    go.wait()
    balance += 1


ts = [threading.Thread(target=updater), threading.Thread(target=depositor)]
for t in ts:
    t.start()
go.set()
for t in ts:
    t.join()
print("balance", balance)
sys.exit(0 if balance == 111 else 1)

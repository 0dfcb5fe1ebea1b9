# SIGPROF and SIGUSR1 handlers arm ITIMER_REAL for a few microseconds while
# the main thread sleeps 10 us at a time until each SIGALRM came (CPython's
# test_signal StressTest.test_stress_delivery_dependent, reduced).
import os, random, signal, sys, time
N = int(sys.argv[1]) if len(sys.argv) > 1 else 100
sigs = []
def first_handler(signum, frame):
    signal.setitimer(signal.ITIMER_REAL, 1e-6 + random.random() * 1e-5)
def second_handler(signum=None, frame=None):
    sigs.append(signum)
signal.signal(signal.SIGPROF, first_handler)
signal.signal(signal.SIGUSR1, first_handler)
signal.signal(signal.SIGALRM, second_handler)
expected = 0
deadline = time.monotonic() + float(sys.argv[2] if len(sys.argv) > 2 else 30)
while expected < N:
    os.kill(os.getpid(), signal.SIGPROF)
    expected += 1
    while len(sigs) < expected and time.monotonic() < deadline:
        time.sleep(1e-5)
    os.kill(os.getpid(), signal.SIGUSR1)
    expected += 1
    while len(sigs) < expected and time.monotonic() < deadline:
        time.sleep(1e-5)
print("alarms", len(sigs), "of", N)

# alarm(1) and faulthandler's watchdog (regrtest --timeout) fire while the
# main thread computes without ever waiting or reading the clock.
import faulthandler
import signal
import sys

fired = []
signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
faulthandler.dump_traceback_later(2, exit=True)
signal.alarm(1)
while not fired:
    pass
print("alarm fired", flush=True)
while True:
    pass

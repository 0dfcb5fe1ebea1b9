# A parent's subprocess.run(timeout=1) on a child that computes: the run is
# never idle, and the lag bound ends the parent's waits.
import subprocess
import sys
import time

t0 = time.monotonic()
try:
    subprocess.run([sys.executable, "-c", "while True: pass"], timeout=1)
    print("no timeout")
except subprocess.TimeoutExpired:
    print("TimeoutExpired after %.1f" % (time.monotonic() - t0))

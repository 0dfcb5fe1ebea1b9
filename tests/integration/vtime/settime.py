# Setting the clock moves the run's clock (every process of the run sees
# it), never the host's; the monotonic clock does not move.
import subprocess, sys, time
t0, m0 = time.time(), time.monotonic()
time.clock_settime(time.CLOCK_REALTIME, t0 + 1000)
print("wall moved", round(time.time() - t0, 3))
print("monotonic moved", round(time.monotonic() - m0, 3))
child = subprocess.run([sys.executable, "-c", "import time; print(time.time())"],
                       capture_output=True, text=True).stdout.strip()
print("child sees", round(float(child) - t0, 3))
try:
    time.clock_settime(time.CLOCK_MONOTONIC, 5)
except OSError as e:
    print("monotonic refused", e.errno)

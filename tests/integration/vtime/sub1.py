# subprocess.run(timeout=0.001) on a child that is still starting: bare the
# start takes longer and TimeoutExpired comes first; enrolled the start
# costs 2 ms of the run's time (docs/virtual-time.md), so it does too.
import subprocess, sys
try:
    subprocess.run([sys.executable, "-c", "print('ran')"], timeout=0.001)
    print("no timeout")
except subprocess.TimeoutExpired:
    print("TimeoutExpired")
r = subprocess.run([sys.executable, "-c", "print('ran')"], timeout=10, capture_output=True, text=True)
print("timeout 10:", r.stdout.strip())

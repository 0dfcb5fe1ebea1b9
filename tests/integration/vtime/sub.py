import subprocess, sys, time
t = time.monotonic()
try:
    subprocess.run([sys.executable, "-c", "import time;time.sleep(3600)"], timeout=3)
    print("no timeout")
except subprocess.TimeoutExpired:
    print("TimeoutExpired after", round(time.monotonic() - t, 3))

# Flaky by a timeout: the parent waits 1 s for a helper that takes a random
# 0-2 s (a slow server, a cold cache). Virtual time makes the waits free and
# the seed makes the delay repeat. hermetic hunt names the cause
# "randomness (entropy)": the helper's delay is drawn from it.
import subprocess, sys
helper = "import random, time; time.sleep(random.random() * 2)"
try:
    subprocess.run([sys.executable, "-c", helper], timeout=1, check=True)
except subprocess.TimeoutExpired:
    sys.exit("helper did not answer within 1 s")
print("ok")

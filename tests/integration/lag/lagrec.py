# A sleep the lag bound ends while a child computes, recorded and replayed:
# the replay prints what the recording printed. (The busy part is another
# process: a spinning thread would make this thread's GIL waits read the
# clock a scheduling-dependent number of times.)
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "while True: pass"])
t0 = time.monotonic()
time.sleep(0.2)
print("slept %.3f at %.6f" % (time.monotonic() - t0, time.time()))
child.kill()
child.wait()

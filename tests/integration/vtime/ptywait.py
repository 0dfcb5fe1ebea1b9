# A child writes one byte each time the parent asks (over a pipe); the
# parent waits for it with select(..., 120) on the other side: a PTY's
# master (argv[1] "pty": the kernel hands the byte over in a worker outside
# the run) or a pipe's read end ("pipe"). Bare, no wait takes more than a
# few ms; prints how many waits took the 120 s deadline or over 1 s.
import os, select, sys, time
kind = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 500
if kind == "pty":
    src, dst = os.openpty()
else:
    src, dst = os.pipe()
go_r, go_w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(src)
    os.close(go_w)
    while os.read(go_r, 1):
        os.write(dst, b"x")
    os._exit(0)
os.close(go_r)
late = slow = 0
for i in range(n):
    os.write(go_w, b"g")
    t = time.monotonic()
    r, _, _ = select.select([src], [], [], 120)
    if time.monotonic() - t > 1:
        slow += 1
    if not r:
        late += 1
    else:
        os.read(src, 16)
os.close(go_w)
os.waitpid(pid, 0)
print("waits %d timed out %d over 1s %d" % (n, late, slow))

import signal, select, time
t0 = time.monotonic()
def h(s, f): print("handler at", round(time.monotonic() - t0, 3))
signal.signal(signal.SIGALRM, h)
signal.alarm(1)
select.select([], [], [], 30)
print("select returned at", round(time.monotonic() - t0, 3))

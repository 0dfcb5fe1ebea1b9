import signal, time
n = 0
def h(s, f):
    global n; n += 1
signal.signal(signal.SIGALRM, h)
signal.setitimer(signal.ITIMER_REAL, 1, 1)
time.sleep(5.5)
print("ticks", n)

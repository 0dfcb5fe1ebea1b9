# A timed wait whose event comes first never times out, however long the
# other side computes in real time.
import threading
e = threading.Event()
threading.Thread(target=lambda: ([0 for i in range(3 * 10**6)], e.set())).start()
print(e.wait(60))

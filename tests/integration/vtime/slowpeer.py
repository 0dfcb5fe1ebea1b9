# A server outside the run that answers after 300 ms of real time, and a
# client in the run that waits for it with a 5 s timeout while another
# thread sleeps for an hour: the wait is on the real world, so it keeps its
# real deadline and the run's clock waits with it.
import socket, sys, threading, time
port = int(sys.argv[1])
threading.Thread(target=lambda: time.sleep(3600), daemon=True).start()
s = socket.create_connection(("127.0.0.1", port))
s.settimeout(5)
t = time.monotonic()
print(s.recv(10).decode(), "after", round(time.monotonic() - t, 3) < 1)

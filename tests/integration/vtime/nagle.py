# Small writes back to back on a TCP connection between threads of the run:
# with Nagle, the second waits for the peer's delayed ACK (a kernel timer,
# up to 40 ms of real time) while the run looks idle to the scheduler. The
# reader's 10 s timeout must not fire meanwhile; it would, at once, if the
# clock moved past data that is on its way.
import socket, threading
l = socket.socket(); l.bind(("127.0.0.1", 0)); l.listen(1)
ROUNDS = 60
def serve():
    c, _ = l.accept()
    c.settimeout(10)
    for _ in range(ROUNDS):
        c.sendall(b"a" * 50)
        c.sendall(b"b" * 50)
        try:
            c.recv(1)
        except socket.timeout:
            break
    c.close()
threading.Thread(target=serve).start()
s = socket.create_connection(l.getsockname())
s.settimeout(10)
got = 0
try:
    for _ in range(ROUNDS):
        n = 0
        while n < 100:
            n += len(s.recv(100 - n))
        got += n
        s.sendall(b"k")
except socket.timeout:
    pass
print("received", got, "nodelay as set", s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

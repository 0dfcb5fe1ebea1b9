import concurrent.futures, queue, threading, socket, time
def work(): return sum(i*i for i in range(2*10**6))
with concurrent.futures.ThreadPoolExecutor(2) as ex:
    print("future", ex.submit(work).result(timeout=5) > 0)
q = queue.Queue()
threading.Thread(target=lambda: q.put(work())).start()
print("queue", q.get(timeout=10) > 0)
a, b = socket.socketpair()
a.settimeout(300)
threading.Thread(target=lambda: (work(), b.send(b"x"))).start()
print("recv", a.recv(1))

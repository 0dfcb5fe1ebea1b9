#!/usr/bin/env python3
"""hermeticd under a service manager's protocol, played by this script.

    service_notify.py HERMETICD DIR [DAEMON ARGS...]

Acts as systemd would: creates the listening SOCK_SEQPACKET socket and
passes it (LISTEN_FDS=1, LISTEN_PID), receives sd_notify datagrams on
NOTIFY_SOCKET and asks for a watchdog (WATCHDOG_USEC). To observe that
READY=1 comes only after the socket answers, the socket's file is moved
aside and this script's own listener takes its place: the daemon's
readiness probe, which connects by the socket's path, reaches this script,
which holds the probe's request unanswered, checks that no READY=1 came,
and only then relays the request to the daemon's socket and the answer
back. Prints PASS/FAIL lines.
"""
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import time

hermeticd, tdir = sys.argv[1], sys.argv[2]
extra = sys.argv[3:]
HDR = struct.Struct("<IHHII")
MAGIC, REQ_HELLO, REP_HELLO = 0x504D4548, 1, 102
LONG = 120  # seconds: generous, for a loaded machine; never a timing assertion

failed = False


def result(ok, name, why=""):
    global failed
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)), flush=True)
    failed |= not ok


notify_path = os.path.join(tdir, "notify.sock")
notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
notify.bind(notify_path)
messages = []  # every datagram, in order of arrival


def drain(timeout):
    """Read notify datagrams for up to timeout seconds (0: what is queued)."""
    end = time.monotonic() + timeout
    while True:
        left = max(0.0, end - time.monotonic())
        r, _, _ = select.select([notify], [], [], left)
        if not r:
            return
        messages.append(notify.recv(4096).decode())
        if timeout == 0:
            continue


def wait_for(pred, timeout=LONG):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if any(pred(m) for m in messages):
            return True
        drain(min(1.0, end - time.monotonic()))
    return any(pred(m) for m in messages)


def fields(m):
    return dict(l.split("=", 1) for l in m.split("\n") if "=" in l)


# The socket systemd would create; then move its file aside and stand in.
path = os.path.join(tdir, "hermeticd.sock")
real = os.path.join(tdir, "real.sock")
listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
listener.bind(path)
listener.listen(16)
os.rename(path, real)
standin = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
standin.bind(path)
standin.listen(4)


def child_setup():
    os.dup2(listener.fileno(), 3)


env = dict(os.environ, NOTIFY_SOCKET=notify_path, LISTEN_FDS="1", WATCHDOG_USEC="400000")
env.pop("HERMETIC_SOCKET", None)
# LISTEN_PID and WATCHDOG_PID must name the daemon itself: set them in a
# shell that then execs it.
daemon = subprocess.Popen(
    ["sh", "-c", 'export LISTEN_PID=$$ WATCHDOG_PID=$$; exec "$0" "$@"', hermeticd] + extra,
    env=env, preexec_fn=child_setup, close_fds=False,
    stdout=open(os.path.join(tdir, "daemon.log"), "w"), stderr=subprocess.STDOUT)

# 1. The probe arrives at the stand-in, by the socket's path.
standin.settimeout(LONG)
try:
    probe, _ = standin.accept()
    probe.settimeout(LONG)
    req = probe.recv(65536)
except OSError as e:
    result(False, "readiness probe connects through the socket's path", str(e))
    daemon.kill()
    sys.exit(1)
magic, _, typ, _, seq = HDR.unpack_from(req)
result(magic == MAGIC and typ == REQ_HELLO,
       "readiness probe sends a request through the socket's path", "type %d" % typ)

# 2. While the request is unanswered, the daemon must not claim readiness.
drain(1.0)
ready_early = [m for m in messages if "READY=1" in m]
result(not ready_early, "no READY=1 while the socket's answer is outstanding",
       "got %r" % ready_early)
statuses = [fields(m).get("STATUS", "") for m in messages]
result(any("answers" in s for s in statuses) and any("BPF" in s for s in statuses),
       "STATUS= says what start-up is doing", "%r" % statuses)

# 3. Relay the request to the daemon's socket, and its answer back.
relay = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
relay.settimeout(LONG)
relay.connect(real)
relay.send(req)
rep = relay.recv(65536)
relay.close()
_, _, rtyp, _, rseq = HDR.unpack_from(rep)
result(rtyp == REP_HELLO and rseq == seq, "the daemon answers the probe's request", "type %d" % rtyp)
n_before = len(messages)
probe.send(rep)

# 4. Now READY=1, after the answer.
ok = wait_for(lambda m: "READY=1" in m)
result(ok, "READY=1 arrives after the socket answered", "messages %r" % messages)
if ok:
    first_ready = next(i for i, m in enumerate(messages) if "READY=1" in m)
    result(first_ready >= n_before, "READY=1 comes only after the answer was relayed",
           "READY at %d, answer after %d" % (first_ready, n_before))
    result("Serving" in fields(messages[first_ready]).get("STATUS", ""),
           "READY=1 comes with a STATUS= line", messages[first_ready])

# 5. It serves clients through the passed socket.
c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
c.settimeout(LONG)
c.connect(real)
c.send(HDR.pack(MAGIC, 3, REQ_HELLO, 0, 7))  # protocol version 3
r = c.recv(65536)
c.close()
result(HDR.unpack_from(r)[2] == REP_HELLO, "serves a client through the socket it was passed")

# 6. Watchdog pings from the event loop (WatchdogSec= at 400 ms: every 200 ms).
ok = wait_for(lambda m: len([x for x in messages if "WATCHDOG=1" in x]) >= 3)
result(ok, "WATCHDOG=1 pings arrive repeatedly",
       "%d pings" % len([x for x in messages if "WATCHDOG=1" in x]))
# A stopped event loop pings no more (what makes systemd restart a stuck daemon).
os.kill(daemon.pid, signal.SIGSTOP)
drain(0.5)
n = len([x for x in messages if "WATCHDOG=1" in x])
drain(1.5)
result(len([x for x in messages if "WATCHDOG=1" in x]) == n, "no pings while the event loop is stopped",
       "%d more" % (len([x for x in messages if "WATCHDOG=1" in x]) - n))
os.kill(daemon.pid, signal.SIGCONT)

# 7. SIGTERM: STOPPING=1, exit 0, and the socket (systemd's) is left alone.
daemon.send_signal(signal.SIGTERM)
try:
    rc = daemon.wait(LONG)
except subprocess.TimeoutExpired:
    daemon.kill()
    rc = "timeout"
drain(0)
result(any("STOPPING=1" in m for m in messages), "STOPPING=1 on SIGTERM", "%r" % messages[-3:])
result(rc == 0, "exits 0 on SIGTERM", "exit %s" % rc)
result(os.path.exists(path) and os.path.exists(real),
       "the passed socket's file is left to the service manager", "removed")
sys.exit(1 if failed else 0)

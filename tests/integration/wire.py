#!/usr/bin/env python3
"""Raw wire-protocol client for hermeticd robustness tests (lib/proto.h).

    wire.py SOCKET CASE [ARGS]

Runs one hostile or unusual exchange and prints one line: "ok DETAIL" (exit 0)
when the daemon behaved as a robust daemon should, "bad DETAIL" (exit 1)
otherwise. Whether the daemon is still up afterwards is checked by the caller.
"""
import errno
import json
import os
import select
import socket
import struct
import sys
import time

MAGIC = 0x504D4548
VERSION = 3
HDR = struct.Struct("<IHHII")  # magic, version, type, len, seq
REQ_HELLO, REQ_STATUS, REQ_RUN_CREATE, REQ_RUN_ADOPT, REQ_RUN_KILL, REQ_RUN_REPORT, REQ_RUN_END = range(1, 8)
REQ_JOURNAL_STORE, REQ_JOURNAL_UPLOAD = 10, 15
REP_UPLOAD = 111
STORE = struct.Struct("<QiIQq256s")  # run_id, exit_status, flags, seed, started_ns, command
REP_OK, REP_ERROR, REP_HELLO, REP_STATUS, REP_RUN, REP_REPORT = range(100, 106)
MSG_MAX = 65536
RUN_NET_ENFORCE, RUN_NET_LOOPBACK, RUN_NET_UNIX = 1, 2, 4
CREATE = struct.Struct("<II64s")  # flags, n_allow, label
ALLOW = struct.Struct("<16sH6x")
RUN = struct.Struct("<QQ256s")  # run_id, cgroup_id, cgroup_path (the clock page comes as a descriptor)
ERROR = struct.Struct("<i200s")

sock_path = sys.argv[1]


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 21)
    s.connect(sock_path)
    return s


def msg(typ, payload=b"", seq=7, magic=MAGIC, version=VERSION, length=None):
    if length is None:
        length = len(payload)
    return HDR.pack(magic, version, typ, length, seq) + payload


def recv(s, timeout=3.0):
    """Returns (type, seq, payload, fds), "closed" or "timeout"."""
    r, _, _ = select.select([s], [], [], timeout)
    if not r:
        return "timeout"
    try:
        data, anc, flags, _ = s.recvmsg(MSG_MAX + 16, socket.CMSG_SPACE(16 * 4))
    except ConnectionResetError:
        return "closed"
    if not data:
        return "closed"
    fds = []
    for level, typ, d in anc:
        if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
            fds += list(struct.unpack("%di" % (len(d) // 4), d[: len(d) // 4 * 4]))
    if len(data) < HDR.size:
        return ("short", 0, data, fds)
    magic, version, typ, length, seq = HDR.unpack_from(data)
    if magic != MAGIC or version != VERSION or length != len(data) - HDR.size:
        return ("badreply", seq, data, fds)
    return (typ, seq, data[HDR.size:], fds)


def describe(rep):
    if isinstance(rep, str):
        return rep
    typ, seq, payload, fds = rep
    if typ == REP_ERROR and len(payload) == ERROR.size:
        err, m = ERROR.unpack(payload)
        return "ERROR(%s seq=%d %r)" % (errno.errorcode.get(err, err), seq, m.split(b"\0")[0].decode(errors="replace"))
    return "type=%s seq=%d len=%d fds=%d" % (typ, seq, len(payload), len(fds))


def close_fds(rep):
    if not isinstance(rep, str):
        for fd in rep[3]:
            os.close(fd)


def expect_error(rep, errs=None, seq=None):
    """An HM_REP_ERROR (optionally with one of errs, echoing seq)."""
    close_fds(rep)
    if isinstance(rep, str) or rep[0] != REP_ERROR:
        return False
    if len(rep[2]) != ERROR.size:
        return False
    err, _ = ERROR.unpack(rep[2])
    if errs is not None and err not in errs:
        return False
    if seq is not None and rep[1] != seq:
        return False
    return True


def done(ok, detail):
    print(("ok " if ok else "bad ") + detail)
    sys.exit(0 if ok else 1)


def create_payload(flags=RUN_NET_ENFORCE | RUN_NET_LOOPBACK | RUN_NET_UNIX, allows=(), label=b"wire", n_allow=None):
    if n_allow is None:
        n_allow = len(allows)
    return CREATE.pack(flags, n_allow, label) + b"".join(ALLOW.pack(a, p) for a, p in allows)


def create_run(s, seq=11):
    s.send(msg(REQ_RUN_CREATE, create_payload(), seq=seq))
    rep = recv(s)
    if isinstance(rep, str) or rep[0] != REP_RUN:
        close_fds(rep)
        done(False, "RUN_CREATE failed: " + describe(rep))
    run_id, cgid, path = RUN.unpack(rep[2])
    close_fds(rep)
    return run_id, path.split(b"\0")[0].decode()


def send_fds(s, data, fds):
    s.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, struct.pack("%di" % len(fds), *fds))])


def one(payload_bytes, check, what):
    s = connect()
    s.send(payload_bytes)
    rep = recv(s)
    ok = check(rep)
    done(ok, "%s -> %s" % (what, describe(rep)))


EBADMSG, EMSGSIZE = errno.EBADMSG, errno.EMSGSIZE
case = sys.argv[2]

if case == "hello":
    one(msg(REQ_HELLO, seq=42), lambda r: not isinstance(r, str) and r[0] == REP_HELLO and r[1] == 42, "HELLO")
elif case == "status":
    s = connect()
    s.send(msg(REQ_STATUS, seq=5))
    rep = recv(s)
    if isinstance(rep, str) or rep[0] != REP_STATUS:
        done(False, "STATUS -> " + describe(rep))
    j = json.loads(rep[2].decode())
    done(all(k in j for k in ("version", "subtree", "cgroup_root", "attach", "runs")), "STATUS json keys %s" % sorted(j))
elif case == "bad-magic":
    one(msg(REQ_HELLO, magic=0xDEADBEEF), lambda r: expect_error(r, [EBADMSG]), "bad magic")
elif case == "bad-version":
    one(msg(REQ_HELLO, version=VERSION + 1), lambda r: expect_error(r, [EBADMSG]), "version %d" % (VERSION + 1))
elif case == "unknown-type":
    one(msg(999, seq=77), lambda r: expect_error(r, [errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS, EBADMSG], 77), "type 999")
elif case == "reply-type-as-request":
    one(msg(REP_OK, seq=78), lambda r: expect_error(r, None, 78), "type HM_REP_OK sent as a request")
elif case == "len-too-long":
    one(msg(REQ_HELLO, b"x" * 10, length=100), lambda r: expect_error(r, [EBADMSG]), "hdr.len 100, 10 bytes sent")
elif case == "len-too-short":
    one(msg(REQ_HELLO, b"x" * 10, length=4), lambda r: expect_error(r, [EBADMSG]), "hdr.len 4, 10 bytes sent")
elif case == "len-huge":
    one(msg(REQ_STATUS, b"", length=0xFFFFFFFF), lambda r: expect_error(r, [EBADMSG, EMSGSIZE]), "hdr.len 2^32-1")
elif case == "shorter-than-header":
    one(HDR.pack(MAGIC, VERSION, REQ_HELLO, 0, 1)[:7], lambda r: expect_error(r, [EBADMSG]), "7-byte packet")
elif case == "one-byte":
    one(b"\x01", lambda r: expect_error(r, [EBADMSG]), "1-byte packet")
elif case == "empty-packet":
    # A zero-length SEQPACKET record reads like EOF: closing is acceptable.
    one(b"", lambda r: r in ("closed", "timeout") or expect_error(r), "0-byte packet")
elif case == "create-too-short":
    one(msg(REQ_RUN_CREATE, b"\0" * 4), lambda r: expect_error(r, [EBADMSG, errno.EINVAL]), "RUN_CREATE with 4-byte payload")
elif case == "create-nallow-huge":
    one(msg(REQ_RUN_CREATE, create_payload(n_allow=0xFFFFFFFF)), lambda r: expect_error(r), "RUN_CREATE n_allow=2^32-1, no entries")
elif case == "create-nallow-overflow":
    # n_allow * 24 wraps to a small number in 32-bit arithmetic.
    n = (1 << 32) // ALLOW.size + 1
    one(msg(REQ_RUN_CREATE, create_payload(n_allow=n, allows=[(b"\0" * 16, 0)])), lambda r: expect_error(r), "RUN_CREATE n_allow that overflows")
elif case == "create-nallow-mismatch":
    one(msg(REQ_RUN_CREATE, create_payload(allows=[(b"\0" * 16, 80)], n_allow=3)), lambda r: expect_error(r, [EBADMSG, errno.EINVAL]), "RUN_CREATE n_allow=3 with 1 entry")
elif case == "create-too-many-allows":
    one(msg(REQ_RUN_CREATE, create_payload(allows=[(b"\0" * 16, 80)] * 65)), lambda r: expect_error(r), "RUN_CREATE with 65 allows")
elif case == "create-bad-flags":
    one(msg(REQ_RUN_CREATE, create_payload(flags=0x80000000)), lambda r: expect_error(r, [errno.EINVAL]), "RUN_CREATE unknown flag")
elif case == "create-label-unterminated":
    s = connect()
    s.send(msg(REQ_RUN_CREATE, create_payload(label=b"L" * 64), seq=3))
    rep = recv(s)
    close_fds(rep)
    ok = not isinstance(rep, str) and rep[0] in (REP_RUN, REP_ERROR)
    detail = describe(rep)
    if ok and rep[0] == REP_RUN:
        # While the run exists, STATUS must still be valid JSON with a sane label.
        s.send(msg(REQ_STATUS, seq=4))
        st = recv(s)
        try:
            j = json.loads(st[2].decode())
            labels = [r["label"] for r in j["runs"]]
            ok = all(len(l) <= 64 for l in labels)
            detail += " labels=%r" % labels
        except Exception as e:
            ok = False
            detail += " status=%s (%r)" % (describe(st), e)
    done(ok, "RUN_CREATE 64-byte label without NUL -> " + detail)
elif case in ("kill-unknown", "report-unknown", "end-unknown", "adopt-unknown"):
    typ = {"kill-unknown": REQ_RUN_KILL, "report-unknown": REQ_RUN_REPORT, "end-unknown": REQ_RUN_END, "adopt-unknown": REQ_RUN_ADOPT}[case]
    payload = struct.pack("<QII", 0xFFFF123456, 0, 0) if typ == REQ_RUN_END else struct.pack("<Q", 0xFFFF123456)
    one(msg(typ, payload, seq=9), lambda r: expect_error(r, None, 9), "%s for a run that does not exist" % case)
elif case in ("deputy-kill", "deputy-end-keep", "deputy-report"):
    # Issue 25: a run's process asks the daemon to act on a run (another
    # of its user's, or its own) on a connection of its own. Prints the
    # daemon's answer; the caller judges it.
    run_id = int(sys.argv[3])
    s = connect()
    if case == "deputy-kill":
        s.send(msg(REQ_RUN_KILL, struct.pack("<Q", run_id), seq=21))
    elif case == "deputy-report":
        s.send(msg(REQ_RUN_REPORT, struct.pack("<Q", run_id), seq=21))
    else:
        s.send(msg(REQ_RUN_END, struct.pack("<QII", run_id, 1, 0), seq=21))
    rep = recv(s)
    print("REPLY " + describe(rep))
    sys.exit(0)
elif case in ("kill-short", "report-short", "end-short"):
    typ = {"kill-short": REQ_RUN_KILL, "report-short": REQ_RUN_REPORT, "end-short": REQ_RUN_END}[case]
    one(msg(typ, b"\1\2\3"), lambda r: expect_error(r, [EBADMSG, errno.EINVAL]), "%s: 3-byte payload" % case)
elif case == "oversized":
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 70000
    one(msg(REQ_HELLO, b"A" * (n - HDR.size)), lambda r: expect_error(r, [EMSGSIZE, EBADMSG]) or r == "closed", "%d-byte packet" % n)
elif case == "garbage":
    # Random garbage packets of random sizes, then a valid HELLO still works
    # on the same connection.
    import random
    rnd = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 1)
    s = connect()
    n_err = 0
    for i in range(300):
        size = rnd.choice([1, 3, 15, 16, 17, 40, 100, 300, 4096])
        data = bytes(rnd.getrandbits(8) for _ in range(size))
        if rnd.random() < 0.5 and size >= HDR.size:
            # valid-looking header with random type/len
            data = HDR.pack(MAGIC, VERSION, rnd.choice([0, 1, 2, 3, 4, 5, 6, 7, 8, 100, 65535]),
                            rnd.choice([0, size - HDR.size, rnd.getrandbits(32)]), i) + data[HDR.size:]
        s.send(data)
        rep = recv(s)
        close_fds(rep)
        if isinstance(rep, str):
            done(False, "no answer to garbage packet %d (%d bytes): %s" % (i, size, rep))
        if rep[0] == REP_ERROR:
            n_err += 1
    s.send(msg(REQ_HELLO, seq=1234))
    rep = recv(s)
    done(not isinstance(rep, str) and rep[0] == REP_HELLO, "300 garbage packets (%d errors), then HELLO -> %s" % (n_err, describe(rep)))
elif case == "adopt-no-pidfd":
    s = connect()
    run_id, _ = create_run(s)
    s.send(msg(REQ_RUN_ADOPT, struct.pack("<Q", run_id), seq=12))
    one_rep = recv(s)
    # The asker is the run's creator itself, not its child: refused.
    done(expect_error(one_rep, [errno.EPERM], 12), "RUN_ADOPT from the run's creator -> " + describe(one_rep))
elif case == "adopt-not-a-pidfd":
    s = connect()
    run_id, _ = create_run(s)
    f = os.open("/dev/null", os.O_RDONLY)
    send_fds(s, msg(REQ_RUN_ADOPT, struct.pack("<Q", run_id), seq=13), [f])
    os.close(f)
    rep = recv(s)
    done(expect_error(rep, [errno.EPERM], 13), "RUN_ADOPT with /dev/null attached (dropped) -> " + describe(rep))
elif case == "adopt-foreign-process":
    # A pidfd of a process that is not the caller's child (pid 1) must not
    # be moved into the run.
    s = connect()
    run_id, path = create_run(s)
    try:
        pfd = os.pidfd_open(1)
    except OSError as e:
        done(False, "pidfd_open(1): %r" % e)
    send_fds(s, msg(REQ_RUN_ADOPT, struct.pack("<Q", run_id), seq=14), [pfd])
    os.close(pfd)
    rep = recv(s)
    with open("/proc/1/cgroup") as f:
        cg1 = [l[3:] for l in f.read().splitlines() if l.startswith("0::")]
    moved = cg1 and cg1[0] == path
    done(expect_error(rep, [errno.EPERM, errno.EACCES], 14) and not moved,
         "RUN_ADOPT of pid 1 -> %s; pid 1 in %s" % (describe(rep), cg1))
elif case == "fd-flood":
    # Many messages, each carrying SCM_MAX_FD (253) descriptors, valid and
    # garbage; the daemon must answer and must not keep the descriptors.
    s = connect()
    f = os.open("/dev/null", os.O_RDONLY)
    fds = [os.dup(f) for _ in range(253)]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    answered = 0
    for i in range(n):
        data = msg(REQ_HELLO, seq=i) if i % 2 == 0 else msg(999, seq=i) if i % 4 == 1 else b"garbage!" * 3
        send_fds(s, data, fds)
        rep = recv(s)
        close_fds(rep)
        if not isinstance(rep, str):
            answered += 1
    for x in fds + [f]:
        os.close(x)
    done(answered == n, "%d messages x 253 fds, %d answered" % (n, answered))
elif case == "disconnect-after-create":
    # Create a run, then vanish without reading the reply: the run must not
    # be left behind.
    s = connect()
    s.send(msg(REQ_RUN_CREATE, create_payload(label=b"vanish")))
    s.close()
    done(True, "sent RUN_CREATE and closed")
elif case == "disconnect-with-process":
    # Create a run, put a process into it (as root, by writing cgroup.procs
    # directly), disconnect: the daemon ends the run and kills the process.
    import subprocess
    s = connect()
    run_id, path = create_run(s)
    mnt = sys.argv[3]
    p = subprocess.Popen(["sleep", "60"])
    cgdir = path if path.startswith(mnt + "/") else mnt + path
    with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
        f.write(str(p.pid))
    s.close()
    try:
        p.wait(timeout=5)
        done(True, "process in the run killed (status %s) after the client vanished" % p.returncode)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        done(False, "process %d in run %s still alive 5 s after its client vanished" % (p.pid, path))
elif case == "no-read":
    # A client that sends many requests and never reads a reply must not
    # block the daemon (checked by the caller while this one sleeps).
    s = connect()
    s.setblocking(False)
    sent = 0
    for i in range(5000):
        try:
            s.send(msg(REQ_STATUS, seq=i))
            sent += 1
        except BlockingIOError:
            break
    print("ok sent %d requests, reading none" % sent, flush=True)
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 3)
    sys.exit(0)
elif case == "many-conns":
    # Hold N connections open at once (each sent one HELLO, half of them
    # unanswered-for), then close them all.
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    hold = float(sys.argv[4]) if len(sys.argv) > 4 else 0
    conns, answered, refused, failed = [], 0, 0, 0
    for i in range(n):
        try:
            c = connect()
        except OSError as e:
            failed += 1
            continue
        conns.append(c)
        if i % 2 == 0:
            try:
                c.send(msg(REQ_HELLO, seq=i))
            except OSError:
                pass
    for i, c in enumerate(conns):
        if i % 2 == 0:
            rep = recv(c, 2)
            close_fds(rep)
            if not isinstance(rep, str) and rep[0] == REP_HELLO:
                answered += 1
            elif not isinstance(rep, str) and rep[0] == REP_ERROR:
                refused += 1
    print("ok %d connections open, %d of %d HELLOs answered, %d refused with an error, %d connects failed"
          % (len(conns), answered, (n + 1) // 2, refused, failed), flush=True)
    time.sleep(hold)
    for c in conns:
        c.close()
    sys.exit(0)
elif case == "idle":
    # Connect and say nothing for a while.
    s = connect()
    print("ok idle connection open", flush=True)
    time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 3)
    sys.exit(0)
elif case in ("uaf-close-older", "uaf-empty-newer"):
    # Two connections, one run each; the older goes away. The daemon used
    # to free the older run while walking its run list (use after free).
    # uaf-empty-newer: the older run had a process that exited (empty run)
    # and the client dies.
    import subprocess
    a = connect()
    run_a, path_a = create_run(a, seq=1)
    if case == "uaf-empty-newer":
        mnt = sys.argv[3]
        p = subprocess.Popen(["true"])
        cgdir = path_a if path_a.startswith(mnt + "/") else mnt + path_a
        try:
            with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
                f.write(str(p.pid))
        except OSError:
            pass
        p.wait()
    b = connect()
    run_b, _ = create_run(b, seq=2)
    a.close()
    time.sleep(0.3)
    b.send(msg(REQ_STATUS, seq=3))
    rep = recv(b)
    if isinstance(rep, str) or rep[0] != REP_STATUS:
        done(False, "after closing the older connection, STATUS on the newer -> " + describe(rep))
    ids = [r["id"] for r in json.loads(rep[2].decode())["runs"]]
    done(run_b in ids and run_a not in ids,
         "older connection closed: runs now %r (older %d gone, newer %d kept)" % (ids, run_a, run_b))
elif case == "zero-len-fds":
    # Zero-length packets carrying SCM_RIGHTS: each must be answered (an
    # empty packet with descriptors is malformed, not a hang-up) and its
    # descriptors closed.
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 5000
    s = connect()
    f = os.open("/dev/null", os.O_RDONLY)
    fds = [os.dup(f) for _ in range(4)]
    answered = closed = 0
    for i in range(n):
        try:
            send_fds(s, b"", fds)
        except OSError:
            closed += 1
            s = connect()
            continue
        rep = recv(s, 5)
        close_fds(rep)
        if rep == "closed":
            closed += 1
            s = connect()
        elif not isinstance(rep, str):
            answered += 1
    for x in fds + [f]:
        os.close(x)
    s.send(msg(REQ_HELLO, seq=99))
    rep = recv(s)
    done(answered + closed == n and not isinstance(rep, str) and rep[0] == REP_HELLO,
         "%d zero-length packets with 4 fds each: %d answered, %d closed the connection; then HELLO -> %s"
         % (n, answered, closed, describe(rep)))
elif case == "hold-conns":
    # Open up to N connections and hold them: report how many the daemon
    # kept and what it said to the others.
    n = int(sys.argv[3])
    hold = float(sys.argv[4])
    conns, refused, msgs = [], 0, set()
    for i in range(n):
        try:
            c = connect()
        except OSError as e:
            refused += 1
            msgs.add("connect: %s" % e)
            continue
        try:
            c.send(msg(REQ_HELLO, seq=i))
        except OSError:
            pass  # refused and closed already: its answer is waiting
        rep = recv(c, 5)
        close_fds(rep)
        if not isinstance(rep, str) and rep[0] == REP_HELLO:
            conns.append(c)
        else:
            refused += 1
            if not isinstance(rep, str) and rep[0] == REP_ERROR:
                err, m = ERROR.unpack(rep[2])
                msgs.add("%s: %s" % (errno.errorcode.get(err, err), m.split(b"\0")[0].decode()))
            else:
                msgs.add(describe(rep))
            c.close()
    print("ok %d kept, %d refused: %s" % (len(conns), refused, " | ".join(sorted(msgs))), flush=True)
    time.sleep(hold)
    sys.exit(0)
elif case == "create-runs":
    # Create runs on fresh connections until refused; print how many.
    n = int(sys.argv[3])
    made, conns, last = 0, [], ""
    for i in range(n):
        if made % 8 == 0:
            conns.append(connect())
        c = conns[-1]
        c.send(msg(REQ_RUN_CREATE, create_payload(), seq=i))
        rep = recv(c)
        if not isinstance(rep, str) and rep[0] == REP_RUN:
            made += 1
            close_fds(rep)
            continue
        last = describe(rep)
        close_fds(rep)
        break
    print("ok %d runs made; then %s" % (made, last), flush=True)
    time.sleep(float(sys.argv[4]) if len(sys.argv) > 4 else 0)
    sys.exit(0)
elif case == "big-store":
    # Upload a journal of SIZE MiB (a zstd magic, then zeroes), ask for it
    # to be stored, print "storing" and wait for the answer.
    mib = int(sys.argv[3])
    s = connect()
    run_id, _ = create_run(s)
    s.send(msg(REQ_JOURNAL_UPLOAD, struct.pack("<Q", mib << 20), seq=20))
    rep = recv(s)
    if isinstance(rep, str) or rep[0] != REP_UPLOAD or not rep[3]:
        done(False, "UPLOAD -> " + describe(rep))
    mfd = rep[3][0]
    os.pwrite(mfd, b"\x28\xb5\x2f\xfd", 0)
    os.close(mfd)
    s.send(msg(REQ_JOURNAL_STORE, STORE.pack(run_id, 1, 0, 1, 0, b"big"), seq=21))
    print("storing", flush=True)
    rep = recv(s, 120)
    close_fds(rep)
    done(not isinstance(rep, str), "STORE of %d MiB -> %s" % (mib, describe(rep)))
elif case == "upload-cap":
    # Per-uid upload buffers: hold MIB-sized uploads, one per connection,
    # until one is refused; then let them go and upload again; replace one
    # buffer many times on one connection; store MIB-sized journals one
    # after another. One line: what each step got.
    mib = int(sys.argv[3])
    up = msg(REQ_JOURNAL_UPLOAD, struct.pack("<Q", mib << 20), seq=40)

    def upload(c):
        c.send(up)
        rep = recv(c, 10)
        ok = not isinstance(rep, str) and rep[0] == REP_UPLOAD and len(rep[3]) == 1
        fd = rep[3][0] if ok else None
        if not ok:
            close_fds(rep)
        return fd, describe(rep)

    held, refused = [], ""
    for i in range(64):
        c = connect()
        fd, what = upload(c)
        if fd is None:
            refused = what
            c.close()
            break
        held.append((c, fd))
    n_held = len(held)
    for c, fd in held:
        os.close(fd)
        c.close()
    # The daemon handles those closes and this request in an order of its
    # own: poll (20 s) until the upload is taken.
    c = connect()
    deadline = time.monotonic() + 20
    while True:
        fd, after_close = upload(c)
        if fd is not None or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if fd is not None:
        os.close(fd)
    replaced = 0
    for i in range(2 * n_held + 2):
        fd, what = upload(c)
        if fd is None:
            break
        os.close(fd)
        replaced += 1
    c.close()
    stored, last = 0, ""
    for i in range(2 * n_held + 2):
        # One journal per run: a run (and a connection) for each.
        s = connect()
        run_id, _ = create_run(s)
        fd, what = upload(s)
        if fd is None:
            last = what
            break
        os.pwrite(fd, b"\x28\xb5\x2f\xfd", 0)
        os.close(fd)
        s.send(msg(REQ_JOURNAL_STORE, STORE.pack(run_id, 1, 0, 1, 0, b"cap"), seq=41))
        rep = recv(s, 60)
        close_fds(rep)
        s.close()
        if isinstance(rep, str) or rep[0] != REP_OK:
            last = "STORE -> " + describe(rep)
            break
        stored += 1
    print("held %d; then %s; after closing them: %s; replaced %d/%d; stored %d/%d %s" % (
        n_held, refused, after_close.split(" ")[0], replaced, 2 * n_held + 2, stored, 2 * n_held + 2, last), flush=True)
    sys.exit(0)
elif case == "hold-uploads":
    # Hold MIB-sized uploads, one per connection, until one is refused;
    # print what was held and why the next was refused; hold them until
    # the file STOP exists (120 s at most).
    mib, stop = int(sys.argv[3]), sys.argv[4]
    held, refused = [], ""
    for i in range(64):
        c = connect()
        c.send(msg(REQ_JOURNAL_UPLOAD, struct.pack("<Q", mib << 20), seq=42))
        rep = recv(c, 10)
        if isinstance(rep, str) or rep[0] != REP_UPLOAD:
            refused = describe(rep)
            close_fds(rep)
            c.close()
            break
        held.append((c, rep[3]))
    print("held %d; then %s" % (len(held), refused), flush=True)
    deadline = time.monotonic() + 120
    while not os.path.exists(stop) and time.monotonic() < deadline:
        time.sleep(0.05)
    sys.exit(0)
elif case == "create-open":
    # RUN_CREATE with the network not enforced, from wherever this runs.
    s = connect()
    s.send(msg(REQ_RUN_CREATE, create_payload(flags=0, label=b"open"), seq=50))
    rep = recv(s)
    refused = not isinstance(rep, str) and rep[0] == REP_ERROR
    what = describe(rep)
    close_fds(rep)
    done(refused, "RUN_CREATE with the network off -> " + what)
elif case == "reclaim":
    # RUN_RECLAIM of run ID by a process that did not create it: refused.
    s = connect()
    s.send(msg(16, struct.pack("<Q", int(sys.argv[3])), seq=31))
    rep = recv(s)
    done(expect_error(rep, [errno.EPERM, errno.EBUSY], 31), "RUN_RECLAIM of run %s by another process -> %s" % (sys.argv[3], describe(rep)))
else:
    done(False, "unknown case " + case)

# Sourced by integration tests (after tests/lib.sh): a test host in its own
# network namespace, loopback and unix servers, and a probe client.
#
#   nethost_up        creates namespace + veth pair, starts the far-side
#                     servers; sets NH_HOST (IPv4), NH_HOST6 (IPv6), NH_HTTP
#                     (HTTP 200 port), NH_TCP (plain TCP banner port), NH_UDP
#                     (UDP ack port), NH_SLOW (HTTP answering after 300 ms),
#                     NH_UDPLOG (file the UDP server appends
#                     every datagram to), NH_NS (namespace name).
#   lo_server VAR     starts a TCP banner server on 127.0.0.1, random free
#                     port, and stores the port in VAR.
#   unix_server VAR   starts a unix stream server, stores its path in VAR.
#   probe ARGS        runs $T/probe.py (see below) — usable inside a run.
#   PY                the python3 to run tests with.
#
# Traffic only ever goes to loopback or to this namespace's addresses. Every
# name is unique to the test process ($$), so concurrent runs don't collide;
# everything is removed by at_exit.

# Run directly rather than sourced: a self-test (see the end of this file).
_NH_SELFTEST=
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	source "$(dirname "$0")/../lib.sh"
	_NH_SELFTEST=1
fi

NH_HTTP=8080
NH_TCP=9090
NH_UDP=7070
NH_SLOW=8081 # HTTP 200 after 300 ms (real): an allowed destination with latency

# Python for tests and servers: the distribution's (a pyenv or venv shim in
# PATH may be a shell script that costs hundreds of ms per start).
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi

# The probe: one line on stdout, "OK <detail> <ms>" or "ERR <ERRNO_NAME> <ms>",
# <ms> the real time the operation took (the shim virtualises the clocks).
#   probe.py tcp HOST PORT         create_connection; reads the banner/HTTP reply
#   probe.py tcp6 HOST PORT        same on an AF_INET6 socket (for ::ffff:a.b.c.d)
#   probe.py udp HOST PORT MARK    unconnected sendto (AF_INET6 socket if HOST has ':')
#   probe.py udpconn HOST PORT     connect() on a UDP socket
#   probe.py unix PATH             AF_UNIX stream connect
#   probe.py gai NAME              getaddrinfo
cat >"$T/probe.py" <<'EOF'
import errno, signal, socket, sys

# Real time, whatever the shim does to the clocks: /proc/uptime (10 ms steps).
def real_ms():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) * 1000

def on_alarm(sig, frame):
    raise TimeoutError("no answer within 10 s (real)")

def name(e):
    if isinstance(e, socket.gaierror):
        return "GAIERROR(%s)" % (e.args[0],)
    if isinstance(e, TimeoutError):
        return "TIMEOUT"
    if getattr(e, "errno", None) is not None:
        return errno.errorcode.get(e.errno, str(e.errno))
    return type(e).__name__

def main():
    mode = sys.argv[1]
    # Blocking sockets, no socket timeouts (a timed wait is the shim's to
    # shorten); an alarm stops a hang: enrolled, on the run's clock, which
    # stands still while the probe waits on the test host (the run is busy
    # with the world); the caller's timeout is the real-time bound.
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    t0 = real_ms()
    detail = "-"
    try:
        if mode in ("tcp", "tcp6"):
            host, port = sys.argv[2], int(sys.argv[3])
            if mode == "tcp":
                s = socket.create_connection((host, port))
            else:
                s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
                s.connect((host, port))
            s.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n\r\n")
            data = s.recv(200)
            s.close()
            detail = data.split(b"\n")[0].strip().decode(errors="replace").replace(" ", "_") or "empty"
        elif mode in ("udp", "udpconn"):
            host, port = sys.argv[2], int(sys.argv[3])
            fam = socket.AF_INET6 if ":" in host else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if mode == "udp":
                s.sendto(sys.argv[4].encode(), (host, port))
                detail = "sent"
            else:
                s.connect((host, port))
                s.send(b"connected-udp")
                detail = "connected"
            s.close()
        elif mode == "unix":
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[2])
            data = s.recv(200)
            s.close()
            detail = data.strip().decode(errors="replace") or "empty"
        elif mode == "gai":
            r = socket.getaddrinfo(sys.argv[2], 80, proto=socket.IPPROTO_TCP)
            detail = r[0][4][0]
        else:
            print("ERR BADMODE 0")
            return
    except Exception as e:
        signal.alarm(0)
        print("ERR %s %d" % (name(e), real_ms() - t0))
        return
    signal.alarm(0)
    print("OK %s %d" % (detail, real_ms() - t0))

main()
EOF

# Far-side server: HTTP on NH_HTTP, banner TCP on NH_TCP, UDP on NH_UDP; dual
# stack. Also used on loopback (banner TCP only) and for a unix socket.
cat >"$T/nh_server.py" <<'EOF'
import os, socket, sys, threading, time

def tcp(sock, reply):
    while True:
        try:
            c, _ = sock.accept()
        except OSError:
            return
        threading.Thread(target=handle, args=(c, reply), daemon=True).start()

def handle(c, reply):
    try:
        c.settimeout(2)
        if reply == "slow":
            time.sleep(0.3)
            reply = "http"
        if reply == "http":
            buf = b""
            try:
                while b"\r\n\r\n" not in buf and len(buf) < 8192:
                    d = c.recv(4096)
                    if not d:
                        break
                    buf += d
            except OSError:
                pass
            body = b"hermetic-http-ok\n"
            c.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n"
                      b"Connection: close\r\n\r\n%s" % (len(body), body))
        else:
            c.sendall(reply.encode() + b"\n")
    except OSError:
        pass
    finally:
        c.close()

def listen(fam, addr, port):
    s = socket.socket(fam, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind((addr, port))
    s.listen(128)
    return s

def udp(port, log):
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    while True:
        data, peer = s.recvfrom(2048)
        with open(log, "ab") as f:
            f.write(data + b" from " + peer[0].encode() + b"\n")
        try:
            s.sendto(b"ack:" + data, peer)
        except OSError:
            pass

mode, ready = sys.argv[1], sys.argv[2]
threads = []
if mode == "far":
    http_port, tcp_port, udp_port, log, slow_port = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], int(sys.argv[7])
    open(log, "ab").close()
    threads.append(threading.Thread(target=tcp, args=(listen(socket.AF_INET6, "::", http_port), "http")))
    threads.append(threading.Thread(target=tcp, args=(listen(socket.AF_INET6, "::", tcp_port), "hermetic-tcp-ok")))
    threads.append(threading.Thread(target=udp, args=(udp_port, log)))
    threads.append(threading.Thread(target=tcp, args=(listen(socket.AF_INET6, "::", slow_port), "slow")))
    info = "up"
elif mode == "lo":
    s = listen(socket.AF_INET, "127.0.0.1", 0)
    info = str(s.getsockname()[1])
    threads.append(threading.Thread(target=tcp, args=(s, "hermetic-lo-ok")))
elif mode == "unix":
    path = sys.argv[3]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    os.chmod(path, 0o777)
    s.listen(16)
    info = path
    threads.append(threading.Thread(target=tcp, args=(s, "hermetic-unix-ok")))
for t in threads:
    t.daemon = True
    t.start()
with open(ready + ".tmp", "w") as f:
    f.write(info)
os.rename(ready + ".tmp", ready)
threading.Event().wait()
EOF

probe() { "$PY" "$T/probe.py" "$@"; }

# _nh_wait_file FILE: wait up to 5 s for FILE to exist.
_nh_wait_file() {
	local i
	for i in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

nethost_up() {
	local x i used
	NH_NS=hmns-$$
	local vh=hmh$$ vn=hmn$$
	# A /24 no other interface (or concurrent test) uses: 10.213.X.0/24.
	used=$(ip -o addr show 2>/dev/null)
	x=$(($$ % 200 + 20))
	for i in $(seq 240); do
		case "$used" in *" 10.213.$x."*) x=$(((x + 1) % 240 + 10)) ;; *) break ;; esac
	done
	NH_HOST=10.213.$x.2
	NH_HOST6=fd00:213:$x::2
	NH_LOCAL=10.213.$x.1
	NH_UDPLOG=$T/udp.log
	ip netns add "$NH_NS" || return 1
	at_exit "ip netns del $NH_NS"
	ip link add "$vh" type veth peer name "$vn" netns "$NH_NS" || return 1
	at_exit "ip link del $vh"
	ip addr add "$NH_LOCAL/24" dev "$vh" &&
		ip -6 addr add "fd00:213:$x::1/64" dev "$vh" nodad &&
		ip link set "$vh" up &&
		ip -n "$NH_NS" addr add "$NH_HOST/24" dev "$vn" &&
		ip -n "$NH_NS" -6 addr add "$NH_HOST6/64" dev "$vn" nodad &&
		ip -n "$NH_NS" link set "$vn" up &&
		ip -n "$NH_NS" link set lo up || return 1
	ip netns exec "$NH_NS" "$PY" "$T/nh_server.py" far "$T/nh.ready" \
		"$NH_HTTP" "$NH_TCP" "$NH_UDP" "$NH_UDPLOG" "$NH_SLOW" >"$T/nh_server.log" 2>&1 &
	at_exit "kill $!"
	_nh_wait_file "$T/nh.ready" || { cat "$T/nh_server.log" >&2; return 1; }
	# Wait (up to 3 s) for the link to carry traffic; tests check it themselves.
	for i in $(seq 60); do
		case "$(probe tcp "$NH_HOST" "$NH_TCP")" in OK*) break ;; esac
		sleep 0.05
	done
	for i in $(seq 60); do
		case "$(probe tcp "$NH_HOST6" "$NH_TCP")" in OK*) break ;; esac
		sleep 0.05
	done
	export NH_NS NH_HOST NH_HOST6 NH_LOCAL NH_HTTP NH_TCP NH_UDP NH_UDPLOG NH_SLOW
}

# lo_server VAR: TCP banner server on 127.0.0.1:<random free port>.
lo_server() {
	local ready=$T/lo.$RANDOM.ready
	"$PY" "$T/nh_server.py" lo "$ready" >/dev/null 2>&1 &
	at_exit "kill $!"
	_nh_wait_file "$ready" || return 1
	printf -v "$1" '%s' "$(cat "$ready")"
}

# unix_server VAR: unix stream banner server; its path goes to VAR.
unix_server() {
	local ready=$T/unix.$RANDOM.ready path=$T/srv.$RANDOM.sock
	"$PY" "$T/nh_server.py" unix "$ready" "$path" >/dev/null 2>&1 &
	at_exit "kill $!"
	_nh_wait_file "$ready" || return 1
	printf -v "$1" '%s' "$path"
}

# Run directly (tests/run.sh runs every tests/integration/*.sh), this file
# checks itself: the test host and the helper servers come up and answer.
if [ -n "$_NH_SELFTEST" ]; then
	need_root "nethost: test host in a network namespace" || exit 0
	if ! nethost_up; then
		fail "nethost: test host in a network namespace comes up" "nethost_up failed"
		exit 0
	fi
	pass "nethost: test host in a network namespace comes up ($NH_HOST, $NH_HOST6)"
	check "nethost: HTTP server answers over IPv4" sh -c "probe() { \"$PY\" \"$T/probe.py\" \"\$@\"; }; probe tcp $NH_HOST $NH_HTTP | grep '^OK HTTP/1.0_200_OK '"
	check "nethost: TCP server answers over IPv6" sh -c "\"$PY\" \"$T/probe.py\" tcp $NH_HOST6 $NH_TCP | grep '^OK hermetic-tcp-ok '"
	probe udp "$NH_HOST" "$NH_UDP" "nethost-self-$$" >/dev/null
	sleep 0.3
	check "nethost: UDP server receives" grep -q "^nethost-self-$$ from" "$NH_UDPLOG"
	lo_server p && check "nethost: loopback server answers" sh -c "\"$PY\" \"$T/probe.py\" tcp 127.0.0.1 $p | grep '^OK hermetic-lo-ok '"
	unix_server u && check "nethost: unix server answers" sh -c "\"$PY\" \"$T/probe.py\" unix $u | grep '^OK hermetic-unix-ok '"
	ns=$NH_NS
	_run_cleanups
	trap - EXIT
	if ip netns list | grep -q "^$ns\b"; then fail "nethost: cleanup removes the namespace" "$ns still exists"; else pass "nethost: cleanup removes the namespace"; fi
fi

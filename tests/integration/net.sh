#!/usr/bin/env bash
# Network policy of `hermetic enroll`, enforced by the kernel, against a real
# test host in a private network namespace (tests/integration/nethost.sh), plus
# the CLI's exit codes, signal forwarding, straggler handling and summary line.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "network policy" || exit 0
need_build "network policy" || exit 1
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }

H=$NH_HOST H6=$NH_HOST6 HTTP=$NH_HTTP TCPP=$NH_TCP UDPP=$NH_UDP
CURL=(curl -sS --noproxy '*' --max-time 5 -o "$T/curl.body")

# en [bare] [ENROLL-OPTS...] -- CMD...: runs CMD under `hermetic enroll` (or
# bare), sets EN_RC, EN_MS (wall time of the whole command), EN_OUT, EN_ERR.
en() {
	local t0
	t0=$(now_ms)
	if [ "${1:-}" = bare ]; then
		shift
		timeout -k 5 30 "$@" >"$T/out" 2>"$T/err"
	else
		timeout -k 5 30 "$HERMETIC" enroll "$@" >"$T/out" 2>"$T/err"
	fi
	EN_RC=$?
	EN_MS=$(($(now_ms) - t0))
	EN_OUT=$(cat "$T/out")
	EN_ERR=$(cat "$T/err")
}
ctx() {
	printf 'rc=%s %sms out=[%s] err=[%s]' "$EN_RC" "$EN_MS" \
		"$(printf %s "$EN_OUT" | tail -c 300 | tr '\n' '|')" \
		"$(printf %s "$EN_ERR" | tail -c 400 | tr '\n' '|')"
}
# expect NAME BASH-CONDITION: PASS when the condition (evaluated) holds.
expect() {
	local name=$1
	shift
	if eval "$*"; then pass "$name"; else fail "$name" "$(ctx)"; fi
}
# Refused as on an offline machine (ENETUNREACH), the call failing within 1 s (real time, measured around the call
# in the probe), and the whole run not hanging either.
refused_fast='[[ $EN_OUT == "ERR ENETUNREACH "* ]] && ((${EN_OUT##* } < 1000)) && ((EN_MS < 5000))'

# --- the route works: outside a run, the host answers -------------------------
en bare "${CURL[@]}" "http://$H:$HTTP/"
expect "outside a run: curl reaches the test host" \
	'((EN_RC == 0)) && grep -q hermetic-http-ok "$T/curl.body"'
en bare "$PY" "$T/probe.py" tcp "$H" "$TCPP"
expect "outside a run: python create_connection reaches the test host" '[[ $EN_OUT == "OK hermetic-tcp-ok "* ]]'
en bare "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
expect "outside a run: IPv6 reaches the test host" '[[ $EN_OUT == "OK hermetic-tcp-ok "* ]]'
en bare "$PY" "$T/probe.py" tcp6 "::ffff:$H" "$TCPP"
expect "outside a run: IPv4-mapped IPv6 reaches the test host" '[[ $EN_OUT == "OK hermetic-tcp-ok "* ]]'
en bare "$PY" "$T/probe.py" udp "$H" "$UDPP" "outside-$$"
sleep 0.3
expect "outside a run: UDP sendto reaches the test host's server" \
	'[[ $EN_OUT == "OK sent "* ]] && grep -q "^outside-$$ from" "$NH_UDPLOG"'

# --- blocked run (default policy) ---------------------------------------------
rm -f "$T/curl.body"
en -- "${CURL[@]}" -v "http://$H:$HTTP/"
expect "blocked: curl fails as offline (exit 7, couldn't connect), curl says within 1 s" \
	'((EN_RC == 7)) && [[ $EN_ERR == *"Couldn'\''t connect to server"* ]] && [[ $EN_ERR =~ after\ ([0-9]+)\ ms ]] && ((BASH_REMATCH[1] < 1000)) && [ ! -s "$T/curl.body" ]'

cat >"$T/cc.py" <<'EOF'
import errno, socket, sys
def real_ms():
    with open("/proc/uptime") as f:
        return float(f.read().split()[0]) * 1000
t = real_ms()
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])))
    print("connected")
except OSError as e:
    print("%s %d" % (errno.errorcode.get(e.errno, e.errno), real_ms() - t))
except Exception as e:
    print("other %r" % (e,))
EOF
en -- "$PY" "$T/cc.py" "$H" "$HTTP"
expect "blocked: python create_connection raises ENETUNREACH within 1 s" \
	'[[ $EN_OUT == "ENETUNREACH "* ]] && ((${EN_OUT##* } < 1000)) && ((EN_MS < 5000))'

en -- "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
expect "blocked: IPv6 connect to the test host refused" "$refused_fast"
en -- "${CURL[@]}" -v -g "http://[$H6]:$HTTP/"
expect "blocked: curl over IPv6 refused (exit 7)" '((EN_RC == 7)) && [[ $EN_ERR == *"Couldn'\''t connect to server"* ]]'
en -- "$PY" "$T/probe.py" tcp6 "::ffff:$H" "$TCPP"
expect "blocked: IPv4-mapped IPv6 (::ffff:$H) refused" "$refused_fast"

en -- "$PY" "$T/probe.py" udp "$H" "$UDPP" "inside-$$"
sleep 0.3
expect "blocked: unconnected UDP sendto refused with ENETUNREACH, nothing arrives" \
	'[[ $EN_OUT == "ERR ENETUNREACH "* ]] && ! grep -q "^inside-$$ from" "$NH_UDPLOG"'
en -- "$PY" "$T/probe.py" udp "$H6" "$UDPP" "inside6-$$"
sleep 0.3
expect "blocked: UDP sendto over IPv6 refused with ENETUNREACH" \
	'[[ $EN_OUT == "ERR ENETUNREACH "* ]] && ! grep -q "^inside6-$$ from" "$NH_UDPLOG"'
en -- "$PY" "$T/probe.py" udp "::ffff:$H" "$UDPP" "inside-mapped-$$"
sleep 0.3
expect "blocked: UDP sendto to IPv4-mapped IPv6 refused with ENETUNREACH" \
	'[[ $EN_OUT == "ERR ENETUNREACH "* ]] && ! grep -q "^inside-mapped-$$ from" "$NH_UDPLOG"'
en -- "$PY" "$T/probe.py" udpconn "$H" "$UDPP"
expect "blocked: connect() on a UDP socket refused (ENETUNREACH)" '[[ $EN_OUT == "ERR ENETUNREACH "* ]]'

en -- "$PY" "$T/probe.py" gai example.com
expect "blocked: getaddrinfo(example.com) fails (resolution error) within 1 s" \
	'[[ $EN_OUT == "ERR GAIERROR"* ]] && ((${EN_OUT##* } < 1000)) && ((EN_MS < 5000))'

# --- --allow --------------------------------------------------------------------
rm -f "$T/curl.body"
en --allow "$H:$HTTP" -- "${CURL[@]}" "http://$H:$HTTP/"
expect "--allow HOST:PORT: curl to that port succeeds" '((EN_RC == 0)) && grep -q hermetic-http-ok "$T/curl.body"'
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" tcp "$H" "$HTTP"
expect "--allow HOST:PORT: python (blocking socket) reaches that port" '[[ $EN_OUT == "OK HTTP/1.0_200_OK "* ]]'
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" tcp "$H" "$TCPP"
expect "--allow HOST:PORT: another port of the host still refused" "$refused_fast"
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" tcp "$H6" "$HTTP"
expect "--allow HOST:PORT: same port on the host's IPv6 address still refused" "$refused_fast"
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" udp "$H" "$UDPP" "allowport-udp-$$"
expect "--allow HOST:PORT: UDP to another port still refused" '[[ $EN_OUT == "ERR ENETUNREACH "* ]]'
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" tcp6 "::ffff:$H" "$HTTP"
expect "--allow HOST:PORT: the same destination as ::ffff:HOST is allowed too" '[[ $EN_OUT == "OK HTTP/1.0_200_OK "* ]]'
en --allow "$H:$HTTP" -- "$PY" "$T/probe.py" tcp6 "::ffff:$H" "$TCPP"
expect "--allow HOST:PORT: another port as ::ffff:HOST still refused" "$refused_fast"

en --allow "$H" -- sh -c "$PY '$T/probe.py' tcp $H $HTTP; $PY '$T/probe.py' tcp $H $TCPP; $PY '$T/probe.py' udp $H $UDPP allowhost-$$"
sleep 0.3
expect "--allow HOST: all of its ports open (HTTP, TCP, UDP)" \
	'[[ $EN_OUT == "OK HTTP/1.0_200_OK "*"OK hermetic-tcp-ok "*"OK sent "* ]] && grep -q "^allowhost-$$ from" "$NH_UDPLOG"'
en --allow "$H" -- "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
expect "--allow HOST (IPv4): its IPv6 address still refused" "$refused_fast"
en --allow "[$H6]:$HTTP" -- sh -c "$PY '$T/probe.py' tcp $H6 $HTTP; $PY '$T/probe.py' tcp $H6 $TCPP"
expect "--allow [IPv6]:PORT opens exactly that port" \
	'[[ $EN_OUT == "OK HTTP/1.0_200_OK "*"ERR ENETUNREACH "* ]]'
en --allow "$H6" -- sh -c "$PY '$T/probe.py' tcp $H6 $HTTP; $PY '$T/probe.py' tcp $H6 $TCPP"
expect "--allow IPv6-ADDRESS opens all its ports" \
	'[[ $EN_OUT == "OK HTTP/1.0_200_OK "*"OK hermetic-tcp-ok "* ]]'

# An allowed destination that takes 300 ms (real) to answer is still reached,
# by clients that wait with a timeout (curl; python with settimeout).
rm -f "$T/curl.body"
en --allow "$H:$NH_SLOW" -- "${CURL[@]}" "http://$H:$NH_SLOW/"
expect "--allow: curl reaches an allowed server that answers after 300 ms" \
	'((EN_RC == 0)) && grep -q hermetic-http-ok "$T/curl.body"'
en --allow "$H:$NH_SLOW" -- "$PY" -c "
import socket
s = socket.create_connection(('$H', $NH_SLOW), timeout=5)
s.sendall(b'GET / HTTP/1.0\r\n\r\n')
print(s.recv(100).split(b'\r\n')[0].decode())"
expect "--allow: python with a 5 s socket timeout reaches a server that answers after 300 ms" \
	'[[ $EN_OUT == "HTTP/1.0 200 OK"* ]]'
# The same at descriptor 5000: the shim's descriptor tables have no fixed
# bound, so a wait there on the world is still a real one (a virtual wait
# would time out at once, the run being idle).
en --allow "$H:$NH_SLOW" -- "$PY" -c "
import os, resource, socket
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
s = socket.create_connection(('$H', $NH_SLOW), timeout=5)
os.dup2(s.fileno(), 5000)
s.close()
t = socket.socket(fileno=5000)
t.settimeout(5)
t.sendall(b'GET / HTTP/1.0\r\n\r\n')
print(t.fileno(), t.recv(100).split(b'\r\n')[0].decode())"
expect "--allow: at descriptor 5000, a 5 s socket timeout still waits for a server that answers after 300 ms" \
	'[[ $EN_OUT == "5000 HTTP/1.0 200 OK"* ]]'

# --- loopback and unix sockets --------------------------------------------------
lo_server LP1 && lo_server LP2 || fail "loopback servers" "could not start"
en -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP1"
expect "blocked: a server on 127.0.0.1 stays reachable" '[[ $EN_OUT == "OK hermetic-lo-ok "* ]]'
en --no-loopback -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP1"
expect "--no-loopback: 127.0.0.1 refused" "$refused_fast"
en --no-loopback --allow "127.0.0.1:$LP1" -- sh -c "$PY '$T/probe.py' tcp 127.0.0.1 $LP1; $PY '$T/probe.py' tcp 127.0.0.1 $LP2"
expect "--no-loopback --allow 127.0.0.1:PORT reopens exactly that port" \
	'[[ $EN_OUT == "OK hermetic-lo-ok "*"ERR ENETUNREACH "* ]]'

# A program's own socket options read back as it set them, though the shim
# sets TCP_NODELAY on loopback connections of the run and binds loopback
# clients to their port before connect (preload/peers.c).
cat >"$T/sockopts.py" <<'EOF'
import socket
IP_BIND_ADDRESS_NO_PORT = 24
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(8)
port = srv.getsockname()[1]
def nodelay(c):
    return c.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY)
a = socket.socket()
a.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
a.connect(("127.0.0.1", port))
b = socket.socket()
b.connect(("127.0.0.1", port))
c = socket.socket()
c.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
c.bind(("127.0.0.2", 0))
c.connect(("127.0.0.1", port))
peers = sorted(srv.accept()[1][0] for _ in range(3))
print("nodelay_set=%d nodelay_unset=%d bound=%s no_port=%d peers=%s" % (
    nodelay(a), nodelay(b), c.getsockname()[0],
    c.getsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT), ",".join(peers)))
EOF
want_opts="nodelay_set=1 nodelay_unset=0 bound=127.0.0.2 no_port=1 peers=127.0.0.1,127.0.0.1,127.0.0.2"
en bare "$PY" "$T/sockopts.py"
expect "outside a run: the socket options probe reads back what it set" '[ "$EN_OUT" = "$want_opts" ]'
en -- "$PY" "$T/sockopts.py"
expect "blocked: TCP_NODELAY set before connect reads back 1, unset reads 0" \
	'[[ $EN_OUT == "nodelay_set=1 nodelay_unset=0 "* ]]'
expect "blocked: IP_BIND_ADDRESS_NO_PORT + bind 127.0.0.2:0 + connect stays bound to 127.0.0.2" \
	'[ "$EN_OUT" = "$want_opts" ]'

unix_server USOCK || fail "unix server" "could not start"
en -- "$PY" "$T/probe.py" unix "$USOCK"
expect "blocked: unix socket connect allowed by default" '[[ $EN_OUT == "OK hermetic-unix-ok "* ]]'
en --no-unix -- "$PY" "$T/probe.py" unix "$USOCK"
expect "--no-unix: unix socket connect refused" '[[ $EN_OUT == "ERR ECONNREFUSED "* || $EN_OUT == "ERR EPERM "* ]]'

# --- --network off ----------------------------------------------------------------
rm -f "$T/curl.body"
en --network off -- "${CURL[@]}" "http://$H:$HTTP/"
expect "--network off: the host is reachable (curl)" '((EN_RC == 0)) && grep -q hermetic-http-ok "$T/curl.body"'
en --network off -- "$PY" "$T/probe.py" tcp "$H" "$HTTP"
expect "--network off: the host is reachable (python, blocking socket)" '[[ $EN_OUT == "OK HTTP/1.0_200_OK "* ]]'
en --network off -- "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
expect "--network off: the host is reachable over IPv6" '[[ $EN_OUT == "OK hermetic-tcp-ok "* ]]'
# The probe arms alarm(10), on the run's clock, while it waits on the test
# host: the run is never idle meanwhile, so it must never fire. Once, the
# moment between the kernel's wake-up of the waiting thread and the end of
# its wait looked idle to the keeper (daemon/quiesce.c, still_idle), and the
# clock jumped 10 s: 1 run in 50 said ERR TIMEOUT.
bad=0 first=
for i in $(seq 200); do
	en --network off -- "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
	if [[ $EN_OUT != "OK hermetic-tcp-ok "* ]]; then
		bad=$((bad + 1))
		[ -n "$first" ] || first=$(ctx)
	fi
done
if ((bad == 0)); then
	pass "--network off: 200 runs over IPv6 with alarm(10) armed: the alarm never fires"
else
	fail "--network off: 200 runs over IPv6 with alarm(10) armed: the alarm never fires" \
		"$bad runs failed, the first: $first"
fi
en --network off -- "$PY" "$T/probe.py" udp "$H" "$UDPP" "off-$$"
sleep 0.3
expect "--network off: UDP reaches the host" '[[ $EN_OUT == "OK sent "* ]] && grep -q "^off-$$ from" "$NH_UDPLOG"'
en --network block -- "$PY" "$T/probe.py" tcp "$H" "$TCPP"
expect "--network block (explicit) refuses" "$refused_fast"
en --network off -- "$PY" "$T/probe.py" tcp "$H" "$TCPP"
expect "--network off: no refusal summary printed" '((EN_RC == 0)) && [[ $EN_OUT == OK* ]] && [[ $EN_ERR != *"hermetic: refused"* ]]'

# --- static binaries: Go (CGO_ENABLED=0) and C (cc -static) ----------------------------
mkdir -p "$T/godial"
cat >"$T/godial/main.go" <<'EOF'
package main

import (
	"fmt"
	"net"
	"os"
	"time"
)

func main() {
	c, err := net.DialTimeout("tcp", os.Args[1], 5*time.Second)
	if err != nil {
		fmt.Println("ERR", err)
		os.Exit(1)
	}
	buf := make([]byte, 64)
	n, _ := c.Read(buf)
	fmt.Printf("OK %s", buf[:n])
}
EOF
cat >"$T/cdial.c" <<'EOF'
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
/* cdial tcp|udp IPV4 PORT: raw connect()/sendto() syscalls, no libc resolver. */
int main(int argc, char **argv)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(atoi(argv[3])) };
	char buf[64];
	int udp = !strcmp(argv[1], "udp");
	int s = socket(AF_INET, udp ? SOCK_DGRAM : SOCK_STREAM, 0);
	inet_pton(AF_INET, argv[2], &a.sin_addr);
	if (udp) {
		if (syscall(SYS_sendto, s, "static-udp", 10, 0, &a, sizeof a) < 0) {
			printf("ERR %s\n", strerrorname_np(errno));
			return 1;
		}
		printf("OK sent\n");
		return 0;
	}
	if (syscall(SYS_connect, s, &a, sizeof a) < 0) {
		printf("ERR %s\n", strerrorname_np(errno));
		return 1;
	}
	ssize_t n = read(s, buf, sizeof buf - 1);
	printf("OK %.*s", n > 0 ? (int)n : 0, buf);
	return 0;
}
EOF
is_static() { ! readelf -l "$1" 2>/dev/null | grep -q 'program interpreter'; }
if go_static "$T/godial" "$T/godial.bin" && is_static "$T/godial.bin"; then
	en bare "$T/godial.bin" "$H:$TCPP"
	expect "static Go: reaches the host outside a run" '[[ $EN_OUT == "OK hermetic-tcp-ok"* ]]'
	en -- "$T/godial.bin" "$H:$TCPP"
	expect "static Go: refused inside a run (network is unreachable)" \
		'[[ $EN_OUT == "ERR "*"network is unreachable"* ]] && ((EN_MS < 5000))'
else
	fail "static Go program builds" "$(tail -n 5 "$T/go.log" | tr '\n' '|')"
fi
CC=${CC:-cc}
command -v "$CC" >/dev/null || CC=gcc
if "$CC" -static -O2 -o "$T/cdial" "$T/cdial.c" >"$T/cc.log" 2>&1 && is_static "$T/cdial"; then
	en bare "$T/cdial" tcp "$H" "$TCPP"
	expect "static C: reaches the host outside a run" '[[ $EN_OUT == "OK hermetic-tcp-ok"* ]]'
	en -- "$T/cdial" tcp "$H" "$TCPP"
	expect "static C: connect refused inside a run (ENETUNREACH)" '[[ $EN_OUT == "ERR ENETUNREACH"* ]] && ((EN_MS < 5000))'
	en -- "$T/cdial" udp "$H" "$UDPP"
	expect "static C: UDP sendto refused inside a run (ENETUNREACH)" '[[ $EN_OUT == "ERR ENETUNREACH"* ]]'
else
	fail "static C program builds (cc -static)" "$(tail -n 5 "$T/cc.log" | tr '\n' '|')"
fi

# --- a daemonizing grandchild (setsid + double fork) ----------------------------------
cat >"$T/daemonize.py" <<'EOF'
import errno, os, signal, socket, sys
host, port, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def cgroup2():
    with open("/proc/self/cgroup") as f:
        return [l[3:] for l in f.read().splitlines() if l.startswith("0::")][0]
r, w = os.pipe()
pid = os.fork()
if pid == 0:
    os.close(r)
    os.setsid()
    if os.fork() != 0:
        os._exit(0)
    os.chdir("/")
    fd = os.open("/dev/null", os.O_RDWR)
    for i in (0, 1, 2):
        os.dup2(fd, i)
    try:
        socket.create_connection((host, port)).close()
        res = "OK"
    except OSError as e:
        res = "ERR " + errno.errorcode.get(e.errno, str(e.errno))
    with open(out + ".tmp", "w") as f:
        f.write("%d\n%s\n%s\n" % (os.getpid(), cgroup2(), res))
    os.rename(out + ".tmp", out)
    os.write(w, b"x")
    os.close(w)
    while True:      # a daemon: lives until killed (no timer: the shim
        signal.pause()  # makes sleeps return at once)
os.close(w)
os.waitpid(pid, 0)
os.read(r, 1)        # the grandchild has reported
print(cgroup2(), os.environ["HERMETIC_RUN"])
EOF
subtree=$("$HERMETIC" status --json | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["subtree"])')
en -- "$PY" "$T/daemonize.py" "$H" "$TCPP" "$T/gc"
gc_pid=$(sed -n 1p "$T/gc" 2>/dev/null)
gc_cg=$(sed -n 2p "$T/gc" 2>/dev/null)
gc_res=$(sed -n 3p "$T/gc" 2>/dev/null)
# A root run sees its own cgroup as the root of its cgroup namespace.
run_dir=$subtree/run-${EN_OUT#* }
expect "daemonized grandchild: in the run's cgroup (its namespace's root, /)" \
	'[ -n "$gc_pid" ] && [ "$gc_cg" = / ] && [ "$EN_OUT" = "/ ${EN_OUT#* }" ]'
expect "daemonized grandchild: still refused" '[ "$gc_res" = "ERR ENETUNREACH" ]'
expect "daemonized grandchild: gone (killed and reaped) when enroll returns" \
	'[ -n "$gc_pid" ] && [ ! -e "/proc/$gc_pid" ] && ((EN_RC == 0)) && ((EN_MS < 10000))'
expect "daemonized grandchild: named as a straggler on stderr" \
	'[[ $EN_ERR == *"hermetic: killed 1 straggler"*"$gc_pid (python3"* ]]'
gone=no
for _ in $(seq 40); do
	[ -n "$subtree" ] && [ ! -d "$run_dir" ] && { gone=yes; break; }
	sleep 0.05
done
expect "the run's cgroup directory is removed after the run" '[ $gone = yes ]'

# --- the refusal summary ------------------------------------------------------------
en -- "${CURL[@]}" "http://$H:$TCPP/"
expect "summary: 'hermetic: refused N connection' names destination and comm" \
	'[[ $EN_ERR =~ hermetic:\ refused\ [0-9]+\ connection ]] && [[ $EN_ERR == *"$H:$TCPP (curl)"* ]]'
en -- "$PY" "$T/probe.py" tcp "$H6" "$TCPP"
expect "summary: names an IPv6 destination" \
	'[[ $EN_ERR =~ hermetic:\ refused\ [0-9]+\ connection ]] && [[ $EN_ERR == *"$H6"*"$TCPP (python3"* ]]'
en -- "$PY" "$T/probe.py" udp "$H" "$UDPP" "summary-$$"
expect "summary: counts a refused UDP sendto" \
	'[[ $EN_ERR =~ hermetic:\ refused\ [0-9]+\ connection ]] && [[ $EN_ERR == *"$H:$UDPP (python3"* ]]'
en -- "$PY" "$T/probe.py" tcp 127.0.0.1 "$LP1"
expect "summary: none when nothing was refused" '((EN_RC == 0)) && [[ $EN_ERR != *"hermetic: refused"* ]]'

# --- exit status, signals -------------------------------------------------------------
en -- true
expect "exit status: 0 passes through" '((EN_RC == 0))'
en -- sh -c 'exit 3'
expect "exit status: 3 passes through" '((EN_RC == 3))'
en -- sh -c 'kill -KILL $$'
expect "exit status: killed by SIGKILL gives 137" '((EN_RC == 137))'

# sig_case NAME SIG WANT: SIG sent to the hermetic process ends CMD.
sig_case() {
	local name=$1 sig=$2 want=$3 hpid kid="" i rc t0
	rm -f "$T/sig.fifo"
	mkfifo "$T/sig.fifo"
	# cat blocks opening a FIFO nobody writes: a real wait, whatever the clock.
	"$HERMETIC" enroll -- cat "$T/sig.fifo" >"$T/sig.out" 2>"$T/sig.err" &
	hpid=$!
	for i in $(seq 100); do
		kid=$(cat /proc/$hpid/task/*/children 2>/dev/null | tr -s ' ' '\n' | head -n1)
		[ -n "$kid" ] && [ "$(cat /proc/$kid/comm 2>/dev/null)" = cat ] && break
		kid=""
		sleep 0.05
	done
	t0=$(now_ms)
	kill -"$sig" $hpid
	for i in $(seq 100); do kill -0 $hpid 2>/dev/null || break; sleep 0.05; done
	if kill -0 $hpid 2>/dev/null; then
		kill -KILL $hpid
		[ -n "$kid" ] && kill -KILL "$kid"
		wait $hpid
		fail "$name" "hermetic still running 5 s after SIG$sig"
		return
	fi
	wait $hpid
	rc=$?
	if [ -z "$kid" ]; then
		fail "$name" "CMD (cat FIFO) never started; rc=$rc err=$(tr '\n' '|' <"$T/sig.err")"
	elif [ "$rc" != "$want" ]; then
		fail "$name" "exit $rc, want $want; err=$(tr '\n' '|' <"$T/sig.err")"
	elif [ -e /proc/$kid ]; then
		fail "$name" "CMD pid $kid still exists"
	else
		pass "$name"
	fi
}
sig_case "SIGTERM to hermetic ends CMD, exit 143" TERM 143
sig_case "SIGHUP to hermetic ends CMD, exit 129" HUP 129

# --- CLI errors -------------------------------------------------------------------------
en --no-such-option -- true
expect "bad option: exit 2, names the option, shows usage or points to --help" \
	'((EN_RC == 2)) && [[ $EN_ERR == *--no-such-option* ]] && [[ ${EN_ERR,,} == *usage* || $EN_ERR == *--help* ]]'
en --network sideways -- true
expect "bad --network value: exit 2" '((EN_RC == 2))'
en
expect "enroll without a command: exit 2" '((EN_RC == 2))'
HERMETIC_SOCKET=$T/no-such-dir/none.sock en -- true
expect "no daemon: exit 69 and the message names the socket" \
	'((EN_RC == 69)) && [[ $EN_ERR == *"$T/no-such-dir/none.sock"* ]] && [[ ${EN_ERR,,} == *hermeticd* ]]'
# A name is the run's resolver's to answer (net_dns.sh), not resolved at
# enrollment: one the host cannot resolve enrolls; one that is no DNS name
# is bad usage.
en --allow no-such-host.invalid -- true
expect "--allow NAME is not resolved at enrollment: an unresolvable name enrolls" '((EN_RC == 0))'
en --allow 'bad name!:80' -- true
expect "--allow with neither an address nor a DNS name: exit 2, names it" '((EN_RC == 2)) && [[ $EN_ERR == *"bad name!"* ]]'
rm -f "$T/curl.body"
en -- "$HERMETIC" enroll --network off -- "${CURL[@]}" "http://$H:$HTTP/"
expect "nested enroll inside a run is refused (exit 77), the host stays unreachable" \
	'((EN_RC == 77)) && [ ! -s "$T/curl.body" ]'
en -- /nonexistent/command-$$
expect "command not found: exit 127" '((EN_RC == 127))'
printf 'not a program\n' >"$T/noexec"
chmod 644 "$T/noexec"
en -- "$T/noexec"
expect "command not executable: exit 126" '((EN_RC == 126))'

kill -0 "$HMD_PID" 2>/dev/null && pass "daemon still running after the net tests" ||
	fail "daemon still running after the net tests" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"

#!/usr/bin/env bash
# What a lookup costs through a run's resolver (docs/network.md), printed,
# never asserted: N sequential UDP queries (and TCP, one connection each)
#  - outside a run, straight to the test's dnsmasq;
#  - in a run with --allow NAME, redirected to hermeticd's resolver, which
#    forwards to the same dnsmasq and opens the answer's address;
#  - in that run, a name not allowed (answered by hermeticd alone);
#  - in a run without --allow NAME: the shared resolver, SERVFAIL.
# Needs root. Knob: BENCH_DNS_N (queries, default 500).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/../integration/nethost.sh"
N=${BENCH_DNS_N:-500}
if [ "$(id -u)" != 0 ] || ! command -v dnsmasq >/dev/null; then
	echo "dns-bench: needs root and dnsmasq" >&2
	exit 1
fi
nethost_up || { echo "dns-bench: nethost_up failed" >&2; exit 1; }
echo "$NH_HOST www.hm.test" >"$T/hosts"
ip netns exec "$NH_NS" dnsmasq -k --conf-file=/dev/null --no-resolv --no-hosts --no-poll \
	--listen-address="$NH_HOST" --bind-interfaces --port=53 --user=root --group=root \
	--addn-hosts="$T/hosts" --local-ttl=60 --pid-file="$T/dnsmasq.pid" >/dev/null 2>&1 &
at_exit "kill $!"
start_daemon --dns-upstream "$NH_HOST" || exit 1
cat >"$T/loop.py" <<'PYEOF'
import os, socket, struct, sys, time
server, name, n, tcp = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4] == "tcp"
q = struct.pack(">HHHHHH", 1, 0x0100, 1, 0, 0, 0)
for l in name.split("."):
    q += bytes([len(l)]) + l.encode()
q += b"\0\0\1\0\1"
def real():
    return time.clock_gettime(time.CLOCK_MONOTONIC_RAW)
t = real()
for i in range(n):
    if tcp:
        s = socket.create_connection((server, 53))
        s.sendall(struct.pack(">H", len(q)) + q)
        s.recv(4096)
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.sendto(q, (server, 53))
        s.recv(4096)
    s.close()
print("%.0f" % ((real() - t) / n * 1e6))
PYEOF
for t in udp tcp; do
	for _ in $(seq 50); do timeout 5 "$PY" "$T/loop.py" "$NH_HOST" www.hm.test 1 udp >/dev/null && break; sleep 0.1; done
	out=$("$PY" "$T/loop.py" "$NH_HOST" www.hm.test "$N" $t)
	run=$("$HERMETIC" enroll --clock off --allow www.hm.test -- "$PY" "$T/loop.py" "$NH_HOST" www.hm.test "$N" $t 2>/dev/null)
	no=$("$HERMETIC" enroll --clock off --allow www.hm.test -- "$PY" "$T/loop.py" "$NH_HOST" other.hm.test "$N" $t 2>/dev/null)
	sh=$("$HERMETIC" enroll --clock off -- "$PY" "$T/loop.py" "$NH_HOST" www.hm.test "$N" $t 2>/dev/null)
	echo "dns $t: $N lookups, us each: outside a run ${out:-?}, through the run's resolver ${run:-?}, a name not allowed ${no:-?}, a run without names (shared resolver) ${sh:-?} (load: $(cut -d' ' -f1-3 /proc/loadavg))"
done

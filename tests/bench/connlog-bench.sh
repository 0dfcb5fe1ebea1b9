#!/usr/bin/env bash
# What enroll --connections costs (numbers are printed, never asserted): a
# Python loop of BENCH_CONNS (default 2000) loopback TCP connects and as many
# unconnected UDP sendto, timed inside the run (--clock off: real time), with
# and without the log, in alternating repetitions (BENCH_REPS, default 5).
# Loopback only. Needs root and a built tree.
source "$(dirname "$0")/../lib.sh"
if [ -x /usr/bin/python3 ]; then PY=/usr/bin/python3; else PY=python3; fi
N=${BENCH_CONNS:-2000}
REPS=${BENCH_REPS:-5}
if [ "$(id -u)" != 0 ] || [ ! -x "$HERMETICD" ] || [ ! -x "$HERMETIC" ]; then
	echo "connlog-bench: needs root and build/hermeticd, build/hermetic (run make)" >&2
	exit 1
fi
start_daemon >/dev/null 2>&1 || { echo "connlog-bench: daemon did not start" >&2; exit 1; }
cat >"$T/loop.py" <<'PYEOF'
import socket, sys, time
n = int(sys.argv[1])
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4096)
port = srv.getsockname()[1]
t = time.perf_counter()
for _ in range(n):
    c = socket.socket(); c.connect(("127.0.0.1", port)); c.close()
    srv.accept()[0].close()
tcp = (time.perf_counter() - t) / n * 1e6
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
t = time.perf_counter()
for i in range(n):
    u.sendto(b"x", ("127.0.0.1", port))
udp = (time.perf_counter() - t) / n * 1e6
print("%.1f %.1f" % (tcp, udp))
PYEOF
for _ in $(seq "$REPS"); do
	"$HERMETIC" enroll --clock off -- "$PY" "$T/loop.py" "$N" 2>/dev/null >>"$T/without"
	"$HERMETIC" enroll --clock off --connections "$T/log.jsonl" -- "$PY" "$T/loop.py" "$N" 2>/dev/null >>"$T/with"
done
med() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
printf 'connlog: %d loopback connects and sendto per run, %d runs each, median us per call\n' "$N" "$REPS"
printf '  without --connections: connect+accept %s us, sendto %s us\n' "$(cut -d' ' -f1 "$T/without" | med)" "$(cut -d' ' -f2 "$T/without" | med)"
printf '  with --connections:    connect+accept %s us, sendto %s us (last log: %s lines)\n' "$(cut -d' ' -f1 "$T/with" | med)" "$(cut -d' ' -f2 "$T/with" | med)" "$(wc -l <"$T/log.jsonl")"

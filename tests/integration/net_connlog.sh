#!/usr/bin/env bash
# Issue 20, items 3 and 4: enroll --connections FILE (one JSON line per
# connection attempt: allowed, refused, audited) and the per-run network
# counts of `hermetic status`. The log's refused (audited) lines must match
# the kernel's refusals one for one: the --report list and the kernel's own
# count. Traffic goes only to a test host in a network namespace the test
# creates and to loopback.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "connection log" || exit 0
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
lo_server LP || { fail "loopback server" "lo_server failed"; exit 1; }
H=$NH_HOST

# Five datagrams from one process to one destination: the log may merge them.
cat >"$T/dgrams.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
ok = 0
for i in range(int(sys.argv[3])):
    try:
        s.sendto(b"%s-%d" % (sys.argv[4].encode(), i), (sys.argv[1], int(sys.argv[2])))
        ok += 1
    except OSError:
        pass
print("DGRAMS %d" % ok)
EOF
# The job: TCP to the test host twice, five datagrams to it, TCP over IPv6,
# TCP to loopback (allowed), a datagram to loopback (allowed).
job() {
	{
		printf '%s\n' "probe tcp $H $NH_TCP" "probe tcp $H $NH_TCP" "probe tcp $NH_HOST6 $NH_HTTP" \
			"probe tcp 127.0.0.1 $LP" | sed "s#^probe#'$PY' '$T/probe.py'#"
		echo "'$PY' '$T/dgrams.py' $H $NH_UDP 5 $1"
		echo "'$PY' '$T/dgrams.py' 127.0.0.1 $LP 1 $1"
	} >"$T/job.$1.sh"
	echo "sh $T/job.$1.sh"
}
run() { # run MODE: the job enrolled with a log and a report
	timeout 120 "$HERMETIC" enroll --clock off --network "$1" --report "$T/$1.json" \
		--connections "$T/$1.jsonl" -- sh -c "$(job "$1-$$")" >"$T/$1.out" 2>"$T/$1.err"
}
run block
run audit

# check_log LOG REPORT VERDICT: compares the log with the kernel's refusals
# (the --report list and count); prints "ok ..." or what differs.
cat >"$T/check.py" <<'EOF'
import collections, json, sys
log, report, verdict, lo = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
lines = [json.loads(l) for l in open(log)]
end = lines[-1]
conns = lines[:-1]
rep = json.loads(open(report).readlines()[-1])
errs = []
if not end.get("end"):
    errs.append("no end line")
if any(c.get("end") for c in conns):
    errs.append("end line not last")
need = ("time", "clock", "pid", "comm", "process_key", "destination", "address", "port",
        "protocol", "op", "verdict", "count")
for c in conns:
    miss = [k for k in need if k not in c]
    if miss:
        errs.append("missing %s in %s" % (miss, c))
    if c.get("clock") != "real":
        errs.append("clock not real: %s" % c)
# The log's refusals, as (destination, op, process) -> count, and the report's.
got = collections.Counter()
for c in conns:
    if c["verdict"] == verdict:
        got[(c["destination"], c["op"], c["comm"])] += c["count"]
    elif c["verdict"] != "allowed":
        errs.append("verdict %s in a %s run" % (c["verdict"], verdict))
want = collections.Counter()
for r in rep["refusals"]["first"]:
    want[(r["destination"], r["op"], r["process"])] += r["count"]
if got != want:
    errs.append("log %s != report %s" % (sorted(got.items()), sorted(want.items())))
total = sum(got.values())
if total != rep["refusals"]["count"] or total != end["kernel_refused"] or end[verdict] != total:
    errs.append("count: log %d, report %s, end %s" % (total, rep["refusals"]["count"], end))
if not end["complete"] or end["dropped_events"]:
    errs.append("incomplete: %s" % end)
allowed = [c for c in conns if c["verdict"] == "allowed"]
tcp_lo = [c for c in allowed if c["destination"] == "127.0.0.1:" + lo and c["protocol"] == "tcp"
          and c["op"] == "connect" and c["comm"] and c["pid"]]
udp_lo = [c for c in allowed if c["destination"] == "127.0.0.1:" + lo and c["protocol"] == "udp"]
if not tcp_lo or not udp_lo:
    errs.append("allowed loopback connect/datagram missing: %s" % allowed)
# The processes by their lineage keys, as their shims announced them: sh -c
# is 1, the job's sh 1.1, and each python3 it starts 1.1.N, in order.
keys = []
for c in conns:
    if c["process_key"] not in keys:
        keys.append(c["process_key"])
if keys != ["1.1.%d" % i for i in range(1, 7)]:
    errs.append("process keys %s" % keys)
if errs:
    print("; ".join(errs))
else:
    print("ok %d refusals in %d lines; %s" % (total, len(conns), sorted(got.items())))
EOF
for m in block:refused audit:audited; do
	mode=${m%%:*} verdict=${m#*:}
	res=$("$PY" "$T/check.py" "$T/$mode.jsonl" "$T/$mode.json" "$verdict" "$LP" 2>&1)
	# 2 TCP + 5 datagrams (one line or more) + 1 IPv6 TCP
	if [[ $res == "ok 8 refusals"* ]]; then
		pass "--network $mode: the log's $verdict lines match the kernel's refusals one for one, allowed loopback lines present, each process named by its lineage key (${res#ok })"
	else
		fail "--network $mode: the log matches the kernel's refusals" "$res | $(tr '\n' '|' <"$T/$mode.err")"
	fi
done
# Audit and block list the same attempts (the verdict aside).
same() { "$PY" -c '
import json, sys
print(sorted((c["destination"], c["op"], c["comm"], c["count"] if c["op"] == "connect" else 0, c["verdict"] != "allowed")
             for c in map(json.loads, open(sys.argv[1])) if not c.get("end")))' "$1"; }
if [ -s "$T/block.jsonl" ] && [ "$(same "$T/block.jsonl")" = "$(same "$T/audit.jsonl")" ]; then
	pass "audit's log lists the same attempts as block's, audited where block refused"
else
	fail "audit's log lists the same attempts as block's" "$(same "$T/block.jsonl") vs $(same "$T/audit.jsonl")"
fi

# --network off: nothing refused, every attempt logged as allowed, the test
# host reached.
timeout 120 "$HERMETIC" enroll --clock off --network off --connections "$T/off.jsonl" -- \
	"$PY" "$T/probe.py" tcp "$H" "$NH_TCP" >"$T/off.out" 2>"$T/off.err"
res=$("$PY" -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
hit = [l for l in ls[:-1] if l["destination"] == sys.argv[2] and l["verdict"] == "allowed" and l["protocol"] == "tcp"]
print(len(hit), ls[-1]["allowed"] >= 1, ls[-1]["refused"], ls[-1]["network"])' "$T/off.jsonl" "$H:$NH_TCP" 2>&1)
if [ "$res" = "1 True 0 off" ] && grep -q '^OK hermetic-tcp-ok' "$T/off.out"; then
	pass "--network off: the connection to the test host is made and logged as allowed"
else
	fail "--network off: allowed connection logged" "$res $(cat "$T/off.out") $(tr '\n' '|' <"$T/off.err")"
fi

# A fork child that does not exec announces no key: null, never its parent's.
cat >"$T/forked.py" <<'EOF'
import os, socket, sys
pid = os.fork()
if pid == 0:
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1]))).close()
    finally:
        os._exit(0)
os.waitpid(pid, 0)
socket.create_connection(("127.0.0.1", int(sys.argv[1]))).close()
EOF
timeout 120 "$HERMETIC" enroll --clock off --connections "$T/fork.jsonl" -- "$PY" "$T/forked.py" "$LP" >/dev/null 2>&1
res=$("$PY" -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])][:-1]
print(sorted(str(l["process_key"]) for l in ls), len({l["pid"] for l in ls}))' "$T/fork.jsonl" 2>&1)
if [ "$res" = "['1', 'None'] 2" ]; then
	pass "a fork child that did not exec has process_key null; its parent has its key"
else
	fail "process_key of a fork child" "$res"
fi

# --- FILE that cannot be written: a clear error, before CMD starts ----------
for case in "a missing directory:$T/no/such/dir/log.jsonl" "a directory:$T"; do
	what=${case%%:*} bad=${case#*:}
	rm -f "$T/ran"
	out=$("$HERMETIC" enroll --clock off --connections "$bad" -- touch "$T/ran" 2>&1)
	rc=$?
	if [ "$rc" = 73 ] && [[ $out == *"--connections: cannot open '$bad' for writing"* ]] && [ ! -e "$T/ran" ]; then
		pass "--connections into $what: exit 73 with a clear error, CMD never started"
	else
		fail "--connections into $what: exit 73 before CMD" "rc=$rc ran=$([ -e "$T/ran" ] && echo yes) $out"
	fi
done
out=$("$HERMETIC" enroll --connections "" -- true 2>&1)
rc=$?
if [ "$rc" = 2 ] && [[ $out == *"--connections FILE: empty file name"* ]]; then pass "--connections with an empty name: usage error (2)"; else fail "--connections ''" "rc=$rc $out"; fi
echo '{"earlier": "run"}' >"$T/both.jsonl"
out=$("$HERMETIC" enroll --report "$T/both.jsonl" --connections "$T/./both.jsonl" -- true 2>&1)
rc=$?
if [ "$rc" = 2 ] && [[ $out == *"--connections and --report name the same file"* ]] && [ "$(cat "$T/both.jsonl")" = '{"earlier": "run"}' ]; then
	pass "--connections naming the --report file: usage error (2), the report's lines kept"
else
	fail "--connections = --report" "rc=$rc $out $(cat "$T/both.jsonl")"
fi
out=$("$HERMETIC" enroll --no-daemon --connections "$T/nd.jsonl" -- true 2>&1)
rc=$?
if [ "$rc" = 2 ] && [[ $out == *"--connections needs the daemon"* ]]; then pass "--connections with --no-daemon: usage error (2)"; else fail "--connections --no-daemon" "rc=$rc $out"; fi

# --- status: mode and counts of a live run ------------------------------------
rm -f "$T/in" "$T/done"
timeout 120 "$HERMETIC" enroll --clock off --network audit --connections "$T/live.jsonl" -- sh -c \
	"'$PY' '$T/probe.py' tcp $H $NH_TCP >/dev/null; '$PY' '$T/probe.py' tcp 127.0.0.1 $LP >/dev/null; touch $T/in; while [ ! -e $T/done ]; do sleep 0.05; done" \
	>/dev/null 2>"$T/live.err" &
EP=$!
for _ in $(seq 600); do [ -e "$T/in" ] && break; sleep 0.05; done
st=$("$HERMETIC" status --json 2>&1)
txt=$("$HERMETIC" status 2>&1)
# A line is written within a second or two while the run goes on (the log
# is appended as the run goes, not at its end).
for _ in $(seq 200); do [ -s "$T/live.jsonl" ] && break; sleep 0.05; done
live_lines=$(wc -l <"$T/live.jsonl")
touch "$T/done"
wait "$EP"
res=$("$PY" -c '
import json, sys
runs = [r for r in json.loads(sys.argv[1])["runs"] if r.get("connection_log") and not r["ending"]]
r = runs[0] if runs else {}
print(r.get("network"), r.get("audited"), r.get("refused"), r.get("allowed"), r.get("dropped_events"))' "$st" 2>&1)
if [ "$res" = "audit 1 1 1 0" ]; then
	pass "status --json of a live run: network audit, audited 1, allowed 1, dropped 0"
else
	fail "status --json of a live run" "$res $(tr '\n' ' ' <<<"$st" | tail -c 600)"
fi
if [[ $txt == *"network audit audited 1 allowed 1 dropped 0"* ]]; then
	pass "status shows the live run's mode and counts"
else
	fail "status shows the live run's counts" "$(tr '\n' '|' <<<"$txt")"
fi
if [ "$live_lines" -ge 1 ] && tail -n 1 "$T/live.jsonl" | grep -q '"end": *true'; then
	pass "the log has lines while the run goes on, and its end line after"
else
	fail "the log is written while the run goes on" "lines while running: $live_lines; $(tail -n 2 "$T/live.jsonl")"
fi
# A run without --connections: no allowed count (the kernel reports none).
rm -f "$T/in" "$T/done"
timeout 120 "$HERMETIC" enroll --clock off -- sh -c \
	"'$PY' '$T/probe.py' tcp 127.0.0.1 $LP >/dev/null; touch $T/in; while [ ! -e $T/done ]; do sleep 0.05; done" >/dev/null 2>&1 &
EP=$!
for _ in $(seq 600); do [ -e "$T/in" ] && break; sleep 0.05; done
st=$("$HERMETIC" status --json 2>&1)
touch "$T/done"
wait "$EP"
res=$("$PY" -c '
import json, sys
r = [r for r in json.loads(sys.argv[1])["runs"] if not r["ending"]][0]
print(r.get("network"), r.get("connection_log"), r.get("allowed"), r.get("audited"))' "$st" 2>&1)
if [ "$res" = "block False None 0" ]; then
	pass "status of a run without a log: network block, no allowed count"
else
	fail "status of a run without a log" "$res"
fi

# --- a job killed mid-run leaves a file of valid lines ------------------------
rm -f "$T/in" "$T/done"
# (enroll itself, not a timeout(1) around it, is what gets the SIGKILL)
"$HERMETIC" enroll --clock off --connections "$T/killed.jsonl" -- sh -c \
	"'$PY' '$T/probe.py' tcp $H $NH_TCP >/dev/null; touch $T/in; while [ ! -e $T/done ]; do sleep 0.05; done" >/dev/null 2>&1 &
EP=$!
for _ in $(seq 600); do [ -e "$T/in" ] && [ -s "$T/killed.jsonl" ] && break; sleep 0.05; done
kill -9 "$EP"
wait "$EP" 2>/dev/null
touch "$T/done"
res=$("$PY" -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
print(len(ls), ls[0]["verdict"], any(l.get("end") for l in ls))' "$T/killed.jsonl" 2>&1)
if [ "$res" = "1 refused False" ]; then
	pass "enroll killed with SIGKILL: the log holds the refusal as a valid line, and no end line (cut short)"
else
	fail "enroll killed: valid lines" "$res"
fi

# --- events the ring could not take: said in the log and on stderr -------------
# A daemon with a small ring, stopped (SIGSTOP) while the run sends 3000
# datagrams to loopback: the ring fills, the kernel counts the rest.
stop_daemon
start_daemon --ringbuf-size 65536 || { fail "second daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
rm -f "$T/in" "$T/go" "$T/flooded"
timeout 120 "$HERMETIC" enroll --clock off --connections "$T/flood.jsonl" -- sh -c \
	"touch $T/in; while [ ! -e $T/go ]; do sleep 0.05; done; '$PY' '$T/dgrams.py' 127.0.0.1 $LP 3000 f >$T/flood.out; touch $T/flooded" \
	>/dev/null 2>"$T/flood.err" &
EP=$!
for _ in $(seq 600); do [ -e "$T/in" ] && break; sleep 0.05; done
kill -STOP "$HMD_PID"
touch "$T/go"
for _ in $(seq 1200); do [ -e "$T/flooded" ] && break; sleep 0.05; done
kill -CONT "$HMD_PID"
wait "$EP"
res=$("$PY" -c '
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1])]
end = ls[-1]
sent = int(open(sys.argv[2]).read().split()[1])
print(end.get("end"), end["complete"], end["dropped_events"] > 0, end["allowed"] + end["kernel_dropped"] >= sent, sent)' \
	"$T/flood.jsonl" "$T/flood.out" 2>&1)
if [ "$res" = "True False True True 3000" ] && grep -q -- "--connections: the log is incomplete: [0-9]* kernel event" "$T/flood.err"; then
	pass "a full ring: the end line counts the dropped events (complete false) and enroll says so on stderr"
else
	fail "a full ring is reported" "$res $(tr '\n' '|' <"$T/flood.err") $(tail -n 1 "$T/flood.jsonl")"
fi

#!/usr/bin/env bash
# Issue 20, item 1: --network audit refuses nothing and reports exactly what
# --network block refuses on the same command: the same destinations, ops,
# processes and counts (the kernel hooks count both), in the summary line,
# in --report and in `hermetic status`. Traffic goes only to a test host in
# a network namespace the test creates and to loopback.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "network audit" || exit 0
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
lo_server LP || { fail "loopback server" "lo_server failed"; exit 1; }
H=$NH_HOST

# The same command under each mode: TCP to the test host twice, a datagram
# to it, TCP over IPv6, and loopback (never refused).
job() {
	printf '%s\n' "probe tcp $H $NH_TCP" "probe tcp $H $NH_TCP" "probe udp $H $NH_UDP $1" \
		"probe tcp $NH_HOST6 $NH_HTTP" "probe tcp 127.0.0.1 $LP" |
		sed "s#^probe#'$PY' '$T/probe.py'#" >"$T/job.$1.sh"
	echo "sh $T/job.$1.sh"
}
run() { # run MODE MARK: the job enrolled, its output in $T/MODE.out, report in $T/MODE.json
	timeout 120 "$HERMETIC" enroll --clock off --network "$1" --report "$T/$1.json" -- sh -c "$(job "$2")" >"$T/$1.out" 2>&1
}
run block "block-$$"
run audit "audit-$$"
# The refusals of each, as (destination, op, process, count), sorted.
refusals() {
	"$PY" -c '
import json, sys
d = json.loads(open(sys.argv[1]).readlines()[-1])
print(d["network"], d["refusals"]["count"])
for r in sorted((r["destination"], r["op"], r["process"], r["count"]) for r in d["refusals"]["first"]):
    print(*r)
' "$1"
}
B=$(refusals "$T/block.json" 2>&1)
A=$(refusals "$T/audit.json" 2>&1)
if [ "$(grep -c '^OK' "$T/audit.out")" = 5 ] && grep -q "^audit-$$ from" "$NH_UDPLOG"; then
	pass "--network audit refuses nothing: both connections, the datagram and IPv6 reach the test host, loopback works"
else
	fail "--network audit refuses nothing" "$(tr '\n' '|' <"$T/audit.out")"
fi
if [ "$(grep -c '^ERR ENETUNREACH' "$T/block.out")" = 4 ] && ! grep -q "^block-$$ from" "$NH_UDPLOG"; then
	pass "the same command under --network block: four refusals (ENETUNREACH), nothing reaches the test host"
else
	fail "the same command under --network block" "$(tr '\n' '|' <"$T/block.out")"
fi
if [ -n "$B" ] && [ "${B#block 4}" != "$B" ] && [ "${A#audit 4}" != "$A" ] && [ "${B#block}" = "${A#audit}" ]; then
	pass "audit lists exactly what block refuses: the same destinations, ops, processes and counts ($(sed -n 2,9p <<<"$A" | tr '\n' ';'))"
else
	fail "audit lists what block refuses" "block: $(tr '\n' '|' <<<"$B") audit: $(tr '\n' '|' <<<"$A")"
fi
if grep -q "hermetic: audit: --network block would have refused 4 connections: " "$T/audit.out"; then
	pass "audit's summary line says what block would have refused"
else
	fail "audit's summary line" "$(tr '\n' '|' <"$T/audit.out")"
fi
# No other run flag reads as audit: a recorded run (--record, the flag
# audit's bit once collided with) still refuses.
timeout 120 "$HERMETIC" enroll --clock off --record "$T/rec" -- sh -c "$(job "rec-$$")" >"$T/rec.out" 2>&1
if [ "$(grep -c '^ERR ENETUNREACH' "$T/rec.out")" = 4 ] && ! grep -q "^rec-$$ from" "$NH_UDPLOG"; then
	pass "--record with --network block still refuses: four refusals, nothing reaches the test host"
else
	fail "--record with --network block still refuses" "$(tr '\n' '|' <"$T/rec.out")"
fi
# status shows the run's mode while it runs.
timeout 120 "$HERMETIC" enroll --clock off --network audit -- sh -c "touch $T/in; while [ ! -e $T/done ]; do sleep 0.05; done" >/dev/null 2>&1 &
EP=$!
for _ in $(seq 200); do [ -e "$T/in" ] && break; sleep 0.05; done
st=$("$HERMETIC" status 2>&1)
touch "$T/done"
wait "$EP"
if [[ $st == *"network audit"* ]]; then pass "hermetic status shows an audited run's network as audit"; else fail "status shows audit" "$(tr '\n' '|' <<<"$st")"; fi
out=$("$HERMETIC" enroll --network bogus -- true 2>&1)
rc=$?
if [ "$rc" = 2 ] && [[ $out == *"block"*"audit"*"off"* ]]; then pass "--network with another word: usage error naming block, audit and off"; else fail "--network bogus" "rc=$rc $out"; fi

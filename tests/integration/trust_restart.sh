#!/usr/bin/env bash
# Issue 10, "enforcement that outlives the process": a run goes on, still
# refused, when hermeticd dies or restarts under it.
#   - kill -9 of the daemon while a run keeps connecting (TCP) and sending
#     (UDP) to a test host in a network namespace the test creates: zero
#     connections and zero datagrams get through, before, during and after;
#     a new daemon adopts the run, enroll reconnects and the run finishes
#     with the command's own exit status and a note in its summary, --report
#     JSON and journal ("daemon restarted at ..., N kernel events lost")
#   - SIGTERM and a new start (an upgrade) in the middle of a run: the same
#   - kill -9 twice in one run (the second daemon adopts what the first
#     adopted): the same
#   - kill -9 after the command ended, while enroll reads the report, or
#     before the journal and the end: enroll asks the new daemon, nothing
#     is lost, the command's exit status stands
#   - a run on the virtual clock across a kill -9: the new daemon's keeper
#     takes the clock over (it moves it again), the run ends normally
#   - a clean stop with no runs leaves no pin, no record, no bpffs mount
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "daemon restart" || exit 0
need_build "daemon restart" || exit 1
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }

# The run's command: N attempts, one every 20 ms (real time: --clock off),
# each a TCP connect to the test host and a UDP datagram marked with the
# attempt's number. It prints the counts and exits 7 when nothing got
# through (an exit status of its own, that enroll must keep), 3 otherwise.
cat >"$T/keep.py" <<'EOF'
import errno, os, socket, sys, time
host, tcp, udp, n, mark, progress = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
through = refused = other = sent = 0
i = 0
# At least N attempts, and on until the test says (PROGRESS.stop): its
# restarts then all fall in the run, however slow the machine.
while i < n or not os.path.exists(progress + ".stop"):
    try:
        s = socket.create_connection((host, tcp), timeout=2)
        through += 1
        s.close()
    except OSError as e:  # refused: as on an offline machine
        if e.errno == errno.ENETUNREACH:
            refused += 1
        else:
            other += 1
    try:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.sendto(("%s-%d" % (mark, i)).encode(), (host, udp))
        sent += 1
        u.close()
    except OSError:
        pass
    with open(progress + ".tmp", "w") as f:
        f.write("%d\n" % (i + 1))
    os.replace(progress + ".tmp", progress)  # never seen half-written
    i += 1
    time.sleep(0.02)
print("through=%d refused=%d other=%d udp_sent=%d" % (through, refused, other, sent))
sys.exit(3 if through or sent else 7)
EOF
chmod 644 "$T/keep.py"

# progress FILE: the attempts the run has made so far (0 before the first).
progress() {
	local v
	v=$(cat "$1" 2>/dev/null)
	[[ $v =~ ^[0-9]+$ ]] && echo "$v" || echo 0
}
# wait_progress FILE N: until the run has made N attempts (real time, 60 s).
wait_progress() {
	for _ in $(seq 600); do
		[ "$(progress "$1")" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
udp_marks() { grep -c "^$1-" "$NH_UDPLOG" 2>/dev/null || true; }

# restart_case NAME SIGNAL [TWICE]: a run of N attempts; after 30, the
# daemon gets SIGNAL; GAP s later (the run without a daemon) a new one
# starts. TWICE: once enroll has reconnected, the same again. For
# figures (docs/reliability.md) HM_RESTART_ATTEMPTS and HM_RESTART_GAP make
# it longer.
N=${HM_RESTART_ATTEMPTS:-150}
GAP=${HM_RESTART_GAP:-1}
restart_case() {
	local name=$1 sig=$2 twice=${3:-} mark=m$$$RANDOM rc prog=$T/progress.$1
	rm -f "$prog" "$prog.stop"
	HERMETIC_RECONNECT_WAIT=60 timeout 300 "$HERMETIC" enroll --clock off --rng off \
		--report "$T/$name.json" --record "$T/j.$name" -- \
		"$PY" "$T/keep.py" "$NH_HOST" "$NH_TCP" "$NH_UDP" "$N" "$mark" "$prog" \
		>"$T/$name.out" 2>"$T/$name.err" &
	local epid=$!
	if ! wait_progress "$prog" 30; then
		fail "$name: the run starts" "$(tr '\n' '|' <"$T/$name.err")"
		kill "$epid"
		return
	fi
	stop_daemon "$sig"
	local at=$(progress "$prog")
	sleep "$GAP"
	local during=$(($(progress "$prog") - at))
	start_daemon_again || { fail "$name: a new daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; return; }
	# Another process (root, as the run's owner) cannot take the run.
	local id wout
	id=$("$HERMETIC" status --json | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["runs"][0]["id"])' 2>/dev/null)
	wout=$(timeout 20 "$PY" "$TOP/tests/integration/wire.py" "$HERMETIC_SOCKET" reclaim "${id:-0}" 2>&1)
	if [[ $wout == ok* ]]; then pass "$name: RUN_RECLAIM by a process that did not create the run is refused"; else
		fail "$name: RUN_RECLAIM by another process" "$wout"; fi
	if [ -n "$twice" ]; then
		for _ in $(seq 300); do grep -q "reconnected to hermeticd" "$T/$name.err" && break; sleep 0.1; done
		stop_daemon "$sig"
		at=$(progress "$prog")
		sleep "$GAP"
		during=$((during + $(progress "$prog") - at))
		start_daemon_again || { fail "$name: a new daemon starts again" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; return; }
	fi
	touch "$prog.stop"
	wait "$epid"
	rc=$?
	sleep 0.3 # the UDP server's log
	local out err marks
	out=$(cat "$T/$name.out")
	err=$(tr '\n' '|' <"$T/$name.err")
	marks=$(udp_marks "$mark")
	echo "  ($name: $out; $during attempts while no daemon ran; $marks datagrams at the host)"
	local made=$(progress "$prog")
	if [[ $out == "through=0 refused=$made other=0 udp_sent=0" ]] && ((made >= N)) && [ "$marks" = 0 ] && ((during > 0)); then
		pass "$name: $made connects and $made datagrams, $during of each while no daemon ran: none got through"
	else
		fail "$name: connections through" "$out; $marks datagrams at the test host; $during attempts without a daemon; $err"
	fi
	if [ "$rc" = 7 ]; then
		pass "$name: the run finished normally, with the command's exit status (7)"
	else
		fail "$name: the run finished normally" "enroll exited $rc: $err"
	fi
	restart_noted "$name"
}

# restart_noted NAME: enroll's summary, --report JSON and journal say the
# daemon restarted and enroll reconnected.
restart_noted() {
	local name=$1 err
	err=$(tr '\n' '|' <"$T/$name.err")
	if grep -q "reconnected to hermeticd: daemon restarted at [0-9T:-]*Z, [0-9]* kernel events lost" "$T/$name.err" &&
		grep -q "note: daemon restarted at" "$T/$name.err"; then
		pass "$name: enroll reconnected and its summary says so ($(grep -o 'note: .*' "$T/$name.err" | head -n1))"
	else
		fail "$name: enroll's note" "$err"
	fi
	if "$PY" - "$T/$name.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d["daemon_restart"]
assert r and r["reconnected"] and "daemon restarted at" in r["note"], r
assert d["exit_status"] == 7, d["exit_status"]
assert d["refusals"]["total"] >= 1 if isinstance(d["refusals"], dict) and "total" in d["refusals"] else True
EOF
	then
		pass "$name: --report JSON has daemon_restart"
	else
		fail "$name: --report JSON" "$(head -c 400 "$T/$name.json")"
	fi
	local jf
	jf=$(ls "$T/j.$name"/*.hjournal 2>/dev/null | head -n1)
	if [ -n "$jf" ] && "$HERMETIC" journals show "$jf" 2>&1 | grep -q "daemon_restart.*daemon restarted at"; then
		pass "$name: the journal carries the note"
	else
		fail "$name: the journal carries the note" "journal '$jf': $("$HERMETIC" journals show "$jf" 2>&1 | head -n 20 | tr '\n' '|')"
	fi
}

# after_case NAME PHASE: the command has ended; enroll is stopped as PHASE
# ends (HERMETIC_TEST_PAUSE_AT) while the daemon is killed and a new one
# starts. enroll then asks the new daemon for what is left: the report and
# audit (PHASE reap), the kernel stream, the journal's hand-over and the end
# (PHASE audit). Before, a daemon lost there made enroll exit 70.
after_case() {
	local name=$1 phase=$2 prog=$T/progress.$1 mark=m$$$RANDOM epid rc i
	rm -f "$prog"
	touch "$prog.stop"
	env HERMETIC_TEST_PAUSE_AT="$phase" HERMETIC_RECONNECT_WAIT=60 "$HERMETIC" enroll --clock off \
		--rng off --report "$T/$name.json" --record "$T/j.$name" -- \
		"$PY" "$T/keep.py" "$NH_HOST" "$NH_TCP" "$NH_UDP" 5 "$mark" "$prog" \
		>"$T/$name.out" 2>"$T/$name.err" &
	epid=$!
	for i in $(seq 600); do
		[ "$(cut -d' ' -f3 /proc/$epid/stat 2>/dev/null)" = T ] && break
		[ -e /proc/$epid ] || break
		sleep 0.05
	done
	if [ "$(cut -d' ' -f3 /proc/$epid/stat 2>/dev/null)" != T ]; then
		kill -KILL $epid 2>/dev/null
		wait $epid
		fail "$name: enroll stops at '$phase'" "$(tr '\n' '|' <"$T/$name.err")"
		return
	fi
	stop_daemon -KILL
	start_daemon_again || { kill -KILL $epid; fail "$name: a new daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; return; }
	kill -CONT $epid
	wait $epid
	rc=$?
	if [ "$rc" = 7 ] && [ "$(cat "$T/$name.out")" = "through=0 refused=5 other=0 udp_sent=0" ]; then
		pass "$name: enroll went on with the new daemon and exited with the command's status (7)"
	else
		fail "$name: enroll exits with the command's status" "enroll exited $rc: $(cat "$T/$name.out") $(tr '\n' '|' <"$T/$name.err")"
	fi
	if grep -q "cannot read\|could not end\|did not keep" "$T/$name.err"; then
		fail "$name: nothing the daemon keeps of the run is lost" "$(tr '\n' '|' <"$T/$name.err")"
	else
		pass "$name: nothing the daemon keeps of the run is lost (report, audit, kernel stream, journal, end)"
	fi
	restart_noted "$name"
}

restart_case "kill -9" -KILL
restart_case "SIGTERM and a new start (upgrade)" -TERM
restart_case "kill -9 twice in one run" -KILL twice
after_case "kill -9 after the command, before its report" reap
after_case "kill -9 after the report, before the journal and the end" audit

# --- the virtual clock across a kill -9 ------------------------------------------------------
# The run sleeps in virtual time until it is told to go on; then it sleeps
# an hour (virtual), which only a keeper that moves the clock ends at once.
cat >"$T/clock.py" <<'EOF'
import os, sys, time
go = sys.argv[1]
while not os.path.exists(go):
    time.sleep(0.2)
t = time.monotonic()
time.sleep(3600)
print("slept %.0f" % (time.monotonic() - t))
EOF
chmod 644 "$T/clock.py"
timeout 300 "$HERMETIC" enroll --rng off -- "$PY" "$T/clock.py" "$T/go" >"$T/clock.out" 2>"$T/clock.err" &
cpid=$!
sleep 1
stop_daemon -KILL
sleep 4 # longer than the shim's 3 s: its waiters keep the clock themselves
start_daemon_again || fail "clock: a new daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"
# Wakes are counted by the keeper alone (waiters keeping the clock
# themselves count moves, not wakes).
wakes() { "$HERMETIC" status --json | "$PY" -c 'import json,sys; r=[x for x in json.load(sys.stdin).get("runs",[]) if x.get("adopted")]; print(r[0]["clock"]["wakes"] if r and "clock" in r[0] else -1)'; }
m1=$(wakes)
sleep 1
m2=$(wakes)
touch "$T/go"
wait "$cpid"
crc=$?
if [ "$m1" -ge 0 ] 2>/dev/null && [ "$m2" -gt "$m1" ] && [ "$crc" = 0 ] && grep -q "slept 3600" "$T/clock.out"; then
	pass "virtual clock: the new daemon's keeper took the run's clock over (its wakes $m1 -> $m2) and the run ended normally"
else
	fail "virtual clock across kill -9" "keeper wakes $m1 -> $m2, rc $crc, out $(cat "$T/clock.out"), err $(tr '\n' '|' <"$T/clock.err"), log $(tail -n 5 "$T/daemon.log" | tr '\n' '|')"
fi

# --- a clean stop with no runs leaves nothing ---------------------------------------------------
pins=$(sed -n 's/^hermeticd: BPF objects pinned in \(.*\)$/\1/p' "$T/daemon.log" | tail -n1)
stop_daemon -TERM
left=""
[ -n "$pins" ] && [ -e "$pins" ] && left+=" pins:$pins"
[ -e "$T/run/$HMD_NAME.runs" ] && left+=" records"
mountpoint -q "$T/run/bpf" && left+=" bpffs-mount"
if [ -n "$pins" ] && [ -z "$left" ]; then
	pass "a clean stop with no runs unpins everything (no pin, record or bpffs mount left)"
else
	fail "a clean stop with no runs" "left:$left (pins '$pins')"
fi

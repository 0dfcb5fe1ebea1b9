#!/usr/bin/env bash
# The clock pages and run records are kept in memory (daemon/tmpfs.c,
# docs/performance.md): where <runtime-dir>/clock and <runtime-dir>/<subtree>.runs
# are not on a tmpfs, hermeticd mounts one there; a run's page and record
# survive a daemon killed with the run alive (the next daemon adopts the run
# and finds both), and the daemon that stops with no run left leaves no
# mount behind.
source "$(dirname "$0")/../lib.sh"

need_root "runtime directory in memory" || exit 0
need_build "runtime directory in memory" || exit 1
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
RECORDS=$T/run/$HMD_NAME.runs

fstype() { stat -f -c %T "$1" 2>/dev/null; }
# ours: mounts of our tmpfs (source "hermetic") under $T
ours() {
	awk -v t="$T/" '{ for (i = 7; $i != "-"; i++); if (index($5, t) == 1 && $(i + 1) == "tmpfs" && $(i + 2) == "hermetic") print $5 }' /proc/self/mountinfo
}

t=$(fstype "$T/run/clock")
[ "$t" = tmpfs ] && pass "clock pages on a tmpfs" || fail "clock pages on a tmpfs" "$T/run/clock is on ${t:-nothing}"
t=$(fstype "$RECORDS")
[ "$t" = tmpfs ] && pass "run records on a tmpfs" || fail "run records on a tmpfs" "$RECORDS is on ${t:-nothing}"
st=$(stat -c '%a %u' "$T/run/clock" 2>/dev/null)
[ "$st" = "700 0" ] && pass "clock directory root's, 0700" || fail "clock directory root's, 0700" "mode and owner: ${st:-none}"

# A run alive across a SIGKILL of the daemon: its page and record stay, the
# next daemon adopts it, its clock goes on (a sleep of an hour of virtual
# time ends), and it ends normally.
# (the daemon is killed once the command runs: before that, enroll is still
# setting the run up and gives up with the daemon)
mkfifo "$T/go"
"$HERMETIC" enroll -- sh -c ": >'$T/started'; cat '$T/go' >/dev/null; python3 -c 'import time; time.sleep(3600)'; echo slept" \
	>"$T/run.out" 2>"$T/run.err" &
RUN=$!
for _ in $(seq 600); do
	[ -e "$T/started" ] && break
	kill -0 "$RUN" 2>/dev/null || break
	sleep 0.05
done
restart_daemon -9
n=$(find "$T/run/clock" -maxdepth 1 -type f -name 'run-*' | wc -l)
r=$(find "$RECORDS" -maxdepth 1 -type f -name 'run-*' | wc -l)
[ "$n" = 1 ] && [ "$r" = 1 ] && pass "page and record survive the daemon" ||
	fail "page and record survive the daemon" "$n pages, $r records after restart"
# (never blocks: a run that is gone has no reader on the fifo)
timeout 30 sh -c "echo >'$T/go'"
if timeout 120 tail --pid="$RUN" -f /dev/null && wait "$RUN" && grep -q slept "$T/run.out"; then
	pass "adopted run keeps its clock"
else
	fail "adopted run keeps its clock" "$(tr '\n' ' ' <"$T/run.err" | tail -c 300)"
fi

# A clean stop with no run left: no tmpfs of ours under $T.
stop_daemon
left=$(ours)
[ -z "$left" ] && pass "no mount left after a clean stop" || fail "no mount left after a clean stop" "still mounted: $left"

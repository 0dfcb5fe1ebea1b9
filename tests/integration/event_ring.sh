# timeout: 300
# The event ring's wake-ups (bpf/trace.bpf.c, docs/performance.md): the
# tracers' records wake hermeticd only when one finds the ring over half
# full; otherwise it drains before it answers about a run and on its tick.
# 300 process starts (four records each, 344 bytes a record: 1,200 records,
# 25 times what the ring holds) through a 16 KiB ring: with the half-full
# wake-up none is dropped, and the run's journal has every start; with it
# disabled (--ring-wakeup never, testing only) the same run loses records,
# counted as dropped: the wake-up is what keeps them.
source "$(dirname "$0")/../lib.sh"
need_root event_ring || exit 0

N=300
H() { timeout 120 "$HERMETIC" "$@"; }
journal_in() { ls "$1"/*.hjournal 2>/dev/null | head -n 1; }

# starts WAKEUP: a daemon with a 16 KiB ring and that wake-up, one recorded
# run of N /bin/true; prints "dropped processes records" of its journal.
starts() {
	local dir=$T/j-$1 j
	start_daemon --ringbuf-size 16384 --ring-wakeup "$1" || {
		echo "daemon did not start: $(tail -n 3 "$T/daemon.log" | tr '\n' '|')"
		return
	}
	mkdir -p "$dir"
	if ! H enroll --clock off --record="$dir" --keep-passing -- \
		sh -c "i=0; while [ \$i -lt $N ]; do /bin/true; i=\$((i + 1)); done" \
		>"$T/$1.out" 2>"$T/$1.err"; then
		echo "enroll failed: $(tail -n 3 "$T/$1.err" | tr '\n' '|')"
		stop_daemon
		return
	fi
	stop_daemon
	j=$(journal_in "$dir")
	[ -n "$j" ] || { echo "no journal: $(tail -n 3 "$T/$1.err" | tr '\n' '|')"; return; }
	H journals show --json "$j" 2>&1 | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["kernel"]["dropped"], d["audit"]["processes"], d["kernel"]["records"])'
}

read -r dropped procs records rest <<<"$(starts half)"
if [ "$dropped" = 0 ] && [ "$procs" -ge $((N + 1)) ] 2>/dev/null &&
	[ "$records" -ge $((4 * N)) ] 2>/dev/null; then
	pass "16 KiB ring, half-full wake-up: $N process starts, none dropped ($procs processes, $records records)"
else
	fail "16 KiB ring, half-full wake-up: $N process starts, none dropped" \
		"dropped=$dropped processes=$procs records=$records $rest"
fi

read -r dropped procs records rest <<<"$(starts never)"
if [ "$dropped" -gt 0 ] 2>/dev/null; then
	pass "16 KiB ring, no wake-up at all (--ring-wakeup never): records are dropped and counted ($dropped dropped, $records kept)"
else
	fail "16 KiB ring, no wake-up at all: records are dropped" \
		"dropped=$dropped processes=$procs records=$records $rest"
fi

if out=$("$HERMETICD" --ring-wakeup sometimes 2>&1); [ $? = 2 ] && [[ $out == *"expected half, each or never"* ]]; then
	pass "--ring-wakeup refuses an unknown mode (exit 2)"
else
	fail "--ring-wakeup refuses an unknown mode" "$out"
fi

#!/usr/bin/env bash
# timeout: 300
# The lag bound on a busy supervised Go program (daemon/quiesce.c,
# docs/virtual-time.md "Time always ends"): a program streaming to itself
# until a 100 ms socket deadline (net/http's TestIssue4191_InfiniteGet-
# Timeout) keeps its run busy, and its system monitor's sleeps, ended by the
# bound, are what move the run's clock. They are one series: the bound's
# one-second floor is waited out once, by the first of them. Before, a
# series began anew when the monitor's thread waited in another slot, or
# when a futex wait the bound fired was woken by its event first, and
# waited out the floor again; and the sleeps due as they began waited for
# the keeper's next tick.
source "$(dirname "$0")/../lib.sh"
need_root "static lag" || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
SRC=$TOP/tests/integration/static
mkdir -p "$T/gs.d" && cp "$SRC/gostream.go" "$T/gs.d/main.go"
if ! (cd "$T/gs.d" && GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local \
	GOCACHE="$T/gocache" GOPATH="$T/gopath" timeout 300 go build -o "$T/gostream" main.go) >"$T/go.log" 2>&1; then
	fail "build the Go program" "$(tail -n 3 "$T/go.log" | tr '\n' '|')"
	exit 0
fi

runs=4
for ((i = 0; i < runs; i++)); do
	HERMETIC_DEBUG=waits timeout 60 "$HERMETIC" enroll -- "$T/gostream" >"$T/out.$i" 2>"$T/err.$i"
	echo $? >"$T/rc.$i"
done

bad=
for ((i = 0; i < runs; i++)); do
	ms=$(sed -n 's/^deadline true after \([0-9]*\) ms$/\1/p' "$T/out.$i")
	if [ "$(cat "$T/rc.$i")" != 0 ] || [ -z "$ms" ] || [ "$ms" -lt 100 ] || [ "$ms" -gt 125 ]; then
		bad+="run $i: rc=$(cat "$T/rc.$i") $(tr '\n' '|' <"$T/out.$i") "
	fi
done
if [ -z "$bad" ]; then
	pass "Go: streaming to itself, a 100 ms socket deadline comes at 100-125 ms of the program's clock ($runs runs)"
else
	fail "Go: a 100 ms socket deadline while streaming comes at 100-125 ms of its clock" "$bad"
fi

# The sleeps the bound ended (HERMETIC_DEBUG=waits: "wait 35 of TID" and
# "end 35 of TID: ... (lag bound)", stamped in real microseconds): the
# floor is 1 s of real time since the wait began; a sleep of a series that
# goes on ends once the run has computed K = 10 times what the series gave,
# and the monitor sleeps at most 10 ms: about 0.1 s after it began.
bad=
for ((i = 0; i < runs; i++)); do
	if ! python3 -c '
import re, sys
begun, lagged = {}, []
for line in open(sys.argv[1]):
    m = re.match(r"hermetic: supervisor: (\d+) (wait|end) 35 of (\d+)", line)
    if not m:
        continue
    t, kind, tid = int(m.group(1)), m.group(2), m.group(3)
    if kind == "wait":
        begun[tid] = t
    elif tid in begun:
        if line.rstrip().endswith("(lag bound)"):
            lagged.append((t - begun[tid]) / 1e6)
        del begun[tid]
floors = [x for x in lagged if x >= 0.95]
assert len(lagged) >= 5 and len(floors) == 1 and lagged[0] >= 0.95, ["%.3f" % x for x in lagged]
' "$T/err.$i" 2>"$T/py.$i"; then
		bad+="run $i: $(tail -n 1 "$T/py.$i" | cut -c1-300) "
	fi
done
if [ -z "$bad" ]; then
	pass "Go: the system monitor's sleeps the bound ends are one series: the floor waited out once ($runs runs)"
else
	fail "Go: the monitor's sleeps the bound ends are one series, the floor waited out once" "$bad"
fi

# The sleeps that follow the floor's are behind the series' credit: each is
# due as it begins, and the keeper fires it as the supervisor publishes it
# (its poke), not at its next 50 ms tick (ten such sleeps waited up to
# 50 ms each: 1.7 s for the program, now 1.0-1.3 s, bare 0.1 s).
bad=
for ((i = 0; i < runs; i++)); do
	n=$(sed -n 's/.* lag fires (\([0-9]*\) as the wait began)$/\1/p' "$T/err.$i")
	[ -n "$n" ] && [ "$n" -ge 3 ] || bad+="run $i: $(grep -o '[0-9]* lag fires.*' "$T/err.$i" | head -n 1) "
done
if [ -z "$bad" ]; then
	pass "Go: sleeps due as they begin are fired then, not at the keeper's next tick ($runs runs)"
else
	fail "Go: sleeps due as they begin are fired then" "${bad:-no summary}"
fi

#!/usr/bin/env bash
# timeout: 400
# Waits of supervised processes on sockets (engine/supervise_peers.c,
# docs/static.md): a static Go program's loopback server and client in one
# process, and a unix socket pair, are the run's: their waits are on the
# run's clock (the server's 5 s sleep is virtual, no lag bound fires, two
# runs of one seed agree); a client of a server outside the run waits on
# the world: the run's clock does not jump past its answer. And Go's
# sysmon, whose sleeps end after their real length while the run is busy,
# takes the processor back from a thread blocked in a system call.
source "$(dirname "$0")/../lib.sh"
need_root "static peers" || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
SRC=$TOP/tests/integration/static
gobuild() { # SRC OUT
	mkdir -p "$T/$2.d" && cp "$SRC/$1" "$T/$2.d/main.go" &&
		(cd "$T/$2.d" && GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local \
			GOCACHE="$T/gocache" GOPATH="$T/gopath" timeout 300 go build -o "$T/$2" main.go) >>"$T/go.log" 2>&1
}
if ! gobuild gopeers.go gopeers || ! gobuild goretake.go goretake; then
	fail "build the Go programs" "$(tail -n 3 "$T/go.log" | tr '\n' '|')"
	exit 0
fi
flat() { tr '\n' '|' <"$1" | cut -c1-600; }

# --- one process: server and client --------------------------------------------
for r in a b; do
	HERMETIC_DEBUG=supervise timeout 120 "$HERMETIC" enroll --seed 3 -- "$T/gopeers" inproc \
		>"$T/in.$r" 2>"$T/in.$r.err"
	echo $? >"$T/in.$r.rc"
done
if [ "$(cat "$T/in.a.rc")" = 0 ] && grep -q "^tcp answer after 5\.00" "$T/in.a" &&
	grep -q "^unix answer after 3\.00" "$T/in.a"; then
	pass "Go: a loopback server and client in one process, and a unix pair, answer after their virtual sleeps"
else
	fail "Go: loopback server and client answer" "rc=$(cat "$T/in.a.rc") $(flat "$T/in.a") $(flat "$T/in.a.err")"
fi
# Every epoll wait was on the run's clock (the sets held the run's sockets
# and a /proc/sys file), and no lag bound ended a wait.
if grep -q "epoll wait of .* on the run's clock: eventfds, the run's pipes and sockets" "$T/in.a.err" &&
	! grep -q "epoll wait of .* on real time" "$T/in.a.err" &&
	! grep -q "lag bound" "$T/in.a.err"; then
	pass "Go: waits on the run's own sockets are on the run's clock (no wait on real time, no lag bound)"
else
	fail "Go: waits on the run's own sockets are on the run's clock" \
		"$(grep -E "on real time|lag bound" "$T/in.a.err" | head -n 5 | tr '\n' '|')"
fi
if cmp -s "$T/in.a" "$T/in.b"; then
	pass "Go: two runs of one seed print the same durations"
else
	fail "Go: two runs of one seed print the same durations" "$(flat "$T/in.a") vs $(flat "$T/in.b")"
fi

# --- a server outside the run ------------------------------------------------------
# On loopback, started here: it answers 1.5 s of real time after the question.
/usr/bin/python3 - "$T/port" >"$T/srv.log" 2>&1 <<'PY' &
import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
s.settimeout(120)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
c, _ = s.accept()
c.settimeout(60)
f = c.makefile("rb")
f.readline()
time.sleep(1.5)
c.sendall(b"late\n")
time.sleep(1)
PY
SRV=$!
at_exit "kill $SRV"
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
HERMETIC_DEBUG=supervise timeout 120 "$HERMETIC" enroll --seed 3 -- "$T/gopeers" outside "127.0.0.1:$(cat "$T/port")" \
	>"$T/out" 2>"$T/out.err"
rc=$?
if [ $rc = 0 ] && [ "$(head -n 1 "$T/out")" = "reply late" ] && [ "$(sed -n 2p "$T/out")" = slept ]; then
	pass "Go: a client of a server outside the run gets its answer before a 10 s sleep ends (the clock waits for the world)"
else
	fail "Go: the clock waits for the world's answer" "rc=$rc $(flat "$T/out") $(flat "$T/out.err")"
fi
if grep -q "epoll wait of .* on real time: descriptor [0-9]*: loopback port $(cat "$T/port"), which no process of the run bound" "$T/out.err"; then
	pass "Go: the wait on the outside server is on real time, and says why"
else
	fail "Go: the wait on the outside server is on real time" "$(grep "epoll wait" "$T/out.err" | head -n 5 | tr '\n' '|')"
fi

# --- sysmon's back-off --------------------------------------------------------------
# GOMAXPROCS 1: main blocks in read(2) while a child computes 0.3 s of CPU
# time before it writes; goroutine B, ready meanwhile, runs once sysmon
# takes the processor back (after a sleep of at most 10 ms: bare, always
# "B" first). Held for the run's clock, sysmon slept until the lag bound
# (1 s) and "A" came first. Three runs: each must be B, A.
ok=y
for i in 1 2 3; do
	timeout 60 "$HERMETIC" enroll --seed 3 -- "$T/goretake" >"$T/rt.$i" 2>"$T/rt.$i.err" || ok=n
	[ "$(tr '\n' ' ' <"$T/rt.$i")" = "B A " ] || ok=n
done
if [ $ok = y ]; then
	pass "Go: sysmon takes the processor back from a blocking system call while the run is busy"
else
	fail "Go: sysmon takes the processor back while the run is busy" "$(cat "$T"/rt.? | tr '\n' ' ') $(flat "$T/rt.1.err")"
fi

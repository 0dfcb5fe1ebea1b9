#!/usr/bin/env bash
# timeout: 400
# Timed waits of supervised processes (engine/supervise_fds.c,
# supervise_wait.c, docs/static.md): a static Go program's sleep with a
# /proc/sys file in its poller's set is on the run's clock (a file is
# always ready: net.Listen's read of one held net/http's
# TestLinuxSendfile's run for a second); a client of a server outside the
# run waits on the world: the run's clock does not jump past its answer.
source "$(dirname "$0")/../lib.sh"
need_root "static waits" || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
SRC=$TOP/tests/integration/static
gobuild() { # SRC OUT
	mkdir -p "$T/$2.d" && cp "$SRC/$1" "$T/$2.d/main.go" &&
		(cd "$T/$2.d" && GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local \
			GOCACHE="$T/gocache" GOPATH="$T/gopath" timeout 300 go build -o "$T/$2" main.go) >>"$T/go.log" 2>&1
}
if ! gobuild gowaits.go gowaits; then
	fail "build the Go programs" "$(tail -n 3 "$T/go.log" | tr '\n' '|')"
	exit 0
fi
flat() { tr '\n' '|' <"$1" | cut -c1-600; }

# --- a file in the poller's set --------------------------------------------------
for r in a b; do
	HERMETIC_DEBUG=supervise timeout 120 "$HERMETIC" enroll --seed 3 -- "$T/gowaits" file \
		>"$T/f.$r" 2>"$T/f.$r.err"
	echo $? >"$T/f.$r.rc"
done
if [ "$(cat "$T/f.a.rc")" = 0 ] && grep -q "^slept 5\.00" "$T/f.a" &&
	grep -q "epoll wait of .* on the run's clock: eventfds, files and the run's pipes" "$T/f.a.err" &&
	! grep -q "epoll wait of .* on real time" "$T/f.a.err" && ! grep -q "lag bound" "$T/f.a.err"; then
	pass "Go: a sleep with a /proc/sys file in the poller's set is on the run's clock"
else
	fail "Go: a sleep with a file in the poller's set is on the run's clock" \
		"rc=$(cat "$T/f.a.rc") $(flat "$T/f.a") $(grep -E "on real time|lag bound" "$T/f.a.err" | head -n 3 | tr '\n' '|')"
fi
if cmp -s "$T/f.a" "$T/f.b"; then
	pass "Go: two runs of one seed print the same duration"
else
	fail "Go: two runs of one seed print the same duration" "$(flat "$T/f.a") vs $(flat "$T/f.b")"
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
HERMETIC_DEBUG=supervise timeout 120 "$HERMETIC" enroll --seed 3 -- "$T/gowaits" outside "127.0.0.1:$(cat "$T/port")" \
	>"$T/out" 2>"$T/out.err"
rc=$?
if [ $rc = 0 ] && [ "$(head -n 1 "$T/out")" = "reply late" ] && [ "$(sed -n 2p "$T/out")" = slept ]; then
	pass "Go: a client of a server outside the run gets its answer before a 10 s sleep ends (the clock waits for the world)"
else
	fail "Go: the clock waits for the world's answer" "rc=$rc $(flat "$T/out") $(flat "$T/out.err")"
fi
if grep -q "epoll wait of .* on real time: descriptor [0-9]*: socket:" "$T/out.err"; then
	pass "Go: the wait on the outside server is on real time, and says why"
else
	fail "Go: the wait on the outside server is on real time" "$(grep "epoll wait" "$T/out.err" | head -n 5 | tr '\n' '|')"
fi

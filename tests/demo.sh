#!/usr/bin/env bash
# make demo (as root): start a private daemon, show a refused connection and
# the seeded clock and entropy (the same twice), a reachable loopback server
# and --no-loopback (when python3 is there to serve), then stop the daemon.
# Needs only what building needs (make build-deps) and bash. Exits non-zero
# when a step does not show what it should, or hermetic itself failed.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=${HERMETIC_BUILD:-$TOP/build}
if [ "$(id -u)" != 0 ]; then
	echo "make demo: run as root (sudo make demo): the daemon loads BPF programs" >&2
	exit 1
fi
T=$(mktemp -d /tmp/hermetic-demo.XXXXXX)
export HERMETIC_SOCKET=$T/hermeticd.sock
"$B/hermeticd" --socket "$HERMETIC_SOCKET" --subtree "hermetic-demo-$$" --store "$T/store" \
	--runtime-dir "$T/run" 2>"$T/daemon.log" &
DPID=$!
HPID=
trap 'kill $HPID $DPID 2>/dev/null; wait $DPID 2>/dev/null; rm -rf "$T"' EXIT
failed=0
bad() {
	printf '\033[1;31mmake demo: %s\033[0m\n' "$*" >&2
	failed=$((failed + 1))
}
for _ in $(seq 200); do
	[ -S "$HERMETIC_SOCKET" ] && "$B/hermetic" status >/dev/null 2>&1 && break
	kill -0 $DPID 2>/dev/null || break
	sleep 0.05
done
if ! "$B/hermetic" status >/dev/null 2>&1; then
	bad "hermeticd did not start; its log:"
	cat "$T/daemon.log" >&2
	exit 1
fi

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
# run LABEL ARGS...: hermetic enroll ARGS, its stderr shown and kept in
# $T/err, its stdout in $T/out; a failure of hermetic's own (its --report
# line has hermetic_error) counts.
run() {
	local label=$1
	shift
	rm -f "$T/r.jsonl"
	"$B/hermetic" enroll --report "$T/r.jsonl" "$@" >"$T/out" 2>"$T/err"
	rc=$?
	cat "$T/out"
	cat "$T/err" >&2
	if ! grep -q '"hermetic_error":null' "$T/r.jsonl" 2>/dev/null; then
		bad "$label: hermetic itself failed (exit $rc)"
		return 1
	fi
	return 0
}
say hermetic status
"$B/hermetic" status || bad "hermetic status failed"

probe='date -u +"now         = %FT%TZ"; printf "random      = "; od -An -N8 -tx1 /dev/urandom
exec 3<>/dev/tcp/192.0.2.1/80 && echo "connect     = connected?!" || echo "connect     = refused"'
say "hermetic enroll --seed 42 -- bash -c 'date; od /dev/urandom; connect to 192.0.2.1:80'"
if run "the first run" --seed 42 -- bash -c "$probe"; then
	grep -q '^connect     = refused' "$T/out" && grep -q 'refused 1 connection: 192.0.2.1:80 (bash)' "$T/err" ||
		bad "the connection to 192.0.2.1:80 was not refused"
	cp "$T/out" "$T/first"
fi
say "hermetic enroll --seed 42 -- (the same again: the same time and bytes)"
if run "the second run" --seed 42 -- bash -c "$probe"; then
	cmp -s "$T/out" "$T/first" || bad "the same seed gave different values"
fi

if command -v python3 >/dev/null; then
	python3 -m http.server 0 --bind 127.0.0.1 --directory "$T" >"$T/http.log" 2>&1 &
	HPID=$!
	PORT=
	for _ in $(seq 200); do
		PORT=$(grep -o 'port [0-9]*' "$T/http.log" | grep -o '[0-9]*') && break
		sleep 0.05
	done
	get="exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && head -n 1 <&3"
	say "hermetic enroll -- GET http://127.0.0.1:$PORT/   (loopback stays open)"
	if run "the loopback run" --seed 42 -- bash -c "$get"; then
		grep -q '^HTTP/1.0 200' "$T/out" || bad "the loopback server was not reachable"
	fi
	say "hermetic enroll --no-loopback -- GET http://127.0.0.1:$PORT/"
	if run "the --no-loopback run" --seed 42 --no-loopback -- bash -c "$get"; then
		grep -q "refused 1 connection: 127.0.0.1:$PORT" "$T/err" || bad "--no-loopback did not refuse loopback"
	fi
else
	say "(python3 is not installed: no loopback server to show)"
fi
echo
if [ $failed != 0 ]; then
	echo "make demo: $failed step(s) failed" >&2
	exit 1
fi
echo "make demo: every step showed what it should"

#!/usr/bin/env bash
# sudo make demo: start a private daemon, show a refused connection, a
# reachable loopback server and the seeded clock, then stop the daemon.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
B=$TOP/build
if [ "$(id -u)" != 0 ]; then
	echo "make demo: run as root (sudo make demo): the daemon loads BPF programs" >&2
	exit 1
fi
T=$(mktemp -d /tmp/hermetic-demo.XXXXXX)
export HERMETIC_SOCKET=$T/hermeticd.sock
"$B/hermeticd" --socket "$HERMETIC_SOCKET" --subtree "hermetic-demo-$$" --store "$T/store" \
	--runtime-dir "$T/run" 2>"$T/daemon.log" &
DPID=$!
trap 'kill $DPID 2>/dev/null; wait $DPID 2>/dev/null; rm -rf "$T"' EXIT
for _ in $(seq 100); do [ -S "$HERMETIC_SOCKET" ] && break; sleep 0.05; done

say() { printf '\n\033[1m$ %s\033[0m\n' "$*"; }
say hermetic status
"$B/hermetic" status
say hermetic enroll --seed 42 -- python3 -c '...time, uuid4, connect to 192.0.2.1:80...'
"$B/hermetic" enroll --seed 42 -- python3 -c '
import socket, time, uuid
print("time.time() =", time.time())
print("uuid4()     =", uuid.uuid4())
try:
    socket.create_connection(("192.0.2.1", 80), timeout=5)
    print("connected?!")
except OSError as e:
    print("connect     =", e)
' || true
say "hermetic enroll -- curl http://127.0.0.1:PORT/   (loopback stays open)"
python3 -m http.server 0 --bind 127.0.0.1 --directory "$T" >"$T/http.log" 2>&1 &
HPID=$!
for _ in $(seq 100); do PORT=$(grep -o 'port [0-9]*' "$T/http.log" | grep -o '[0-9]*') && break; sleep 0.05; done
"$B/hermetic" enroll --seed 42 -- curl -s -o /dev/null -w 'HTTP %{http_code}\n' "http://127.0.0.1:$PORT/" || true
say "hermetic enroll --no-loopback -- curl http://127.0.0.1:PORT/"
"$B/hermetic" enroll --seed 42 --no-loopback -- curl -sS -o /dev/null "http://127.0.0.1:$PORT/" || true
kill $HPID

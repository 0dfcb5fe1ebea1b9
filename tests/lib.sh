# Sourced by every integration test. Each test prints one line per case:
#   PASS name | FAIL name: why | SKIP name: why
# tests/run.sh counts them; on CI (CI=true) a SKIP counts as a failure,
# because CI machines support everything these tests need.
set -u
TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
B=$TOP/build
HERMETIC=$B/hermetic
HERMETICD=$B/hermeticd
export PATH="$B:$PATH"

T=$(mktemp -d /tmp/hmtest.XXXXXX)
chmod 755 "$T"
_cleanups=()
at_exit() { _cleanups+=("$*"); }
_run_cleanups() {
	local i
	for ((i = ${#_cleanups[@]} - 1; i >= 0; i--)); do eval "${_cleanups[i]}" >/dev/null 2>&1; done
	rm -rf "$T"
}
trap _run_cleanups EXIT

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: ${2:-}"; }
skip() { echo "SKIP $1: $2"; }

# check NAME CMD...: PASS when CMD exits 0; on failure show its output.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		pass "$name"
	else
		fail "$name" "$(printf '%s' "$out" | tail -n 5 | tr '\n' '|')"
	fi
}

need_root() {
	if [ "$(id -u)" != 0 ]; then
		skip "$1" "needs root (BPF, cgroups, network namespaces)"
		return 1
	fi
}

# Start a private daemon: its own socket and cgroup subtree, so a test never
# touches a production daemon. Sets HERMETIC_SOCKET.
start_daemon() {
	local name=hmtest-$$-$RANDOM store=()
	export HERMETIC_SOCKET=$T/d.sock
	# Its own journal store too, unless the test names one.
	case " $* " in *" --store "*) ;; *) store=(--store "$T/store") ;; esac
	# ... and its own runtime directory (its lock file lives there).
	case " $* " in *" --runtime-dir "*) ;; *) store+=(--runtime-dir "$T/run") ;; esac
	"$HERMETICD" --socket "$HERMETIC_SOCKET" --subtree "$name" "${store[@]}" "$@" >"$T/daemon.log" 2>&1 &
	HMD_PID=$!
	at_exit "kill $HMD_PID; wait $HMD_PID"
	for _ in $(seq 200); do
		[ -S "$HERMETIC_SOCKET" ] && "$HERMETIC" status >/dev/null 2>&1 && return 0
		kill -0 $HMD_PID 2>/dev/null || break
		sleep 0.05
	done
	echo "daemon did not start:" >&2
	cat "$T/daemon.log" >&2
	return 1
}

# go_static DIR OUT: build DIR/main.go (standard library only) into a
# statically linked OUT (CGO_ENABLED=0), caches under $T; log in $T/go.log.
go_static() {
	(cd "$1" && GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE="$T/gocache" GOPATH="$T/gopath" \
		timeout 300 go build -o "$2" main.go) >"$T/go.log" 2>&1
}

# Millisecond wall clock, for "within a second" checks.
now_ms() { date +%s%3N; }

# Sourced by the shim_*.sh integration tests (after ../lib.sh).
#
# shim_run SEED CMD...: run CMD enrolled with the given seed, through the
# real CLI and a private daemon (root) or `--no-daemon` (not root).
# SHIM_VIA_CLI=0 sets the environment contract (lib/config.h) by hand
# instead, to test the shim alone.
SHIM=$B/libhermetic-preload.so
SHIM_NOW=1577836800000000000
SHIM_TICK=${SHIM_TICK:-1000}
SHIM_SPIN_LIMIT=${SHIM_SPIN_LIMIT:-1000000}
SHIM_VIA_CLI=${SHIM_VIA_CLI:-1}
SHIM_DAEMON_OPT=--no-daemon
if [ "$SHIM_VIA_CLI" = 1 ] && [ "$(id -u)" = 0 ]; then
	if start_daemon; then
		SHIM_DAEMON_OPT=
	else
		echo "FAIL shim_lib: the daemon did not start"
	fi
fi

shim_run() {
	local seed=$1 to=()
	shift
	# A leading "timeout N" is a watchdog: it runs outside the run, on real
	# time (inside, it would run on the run's virtual clock).
	if [ "${1:-}" = timeout ]; then
		to=(timeout "$2")
		shift 2
	fi
	# (the CLI takes --allow only with the daemon: DNS allow-list tests set the
	# environment themselves)
	if [ "$SHIM_VIA_CLI" = 1 ] && [ -z "${SHIM_DNS_ALLOW:-}" ]; then
		local err rc
		err=$(mktemp "$T/.shim_run.XXXXXX")
		"${to[@]}" "$HERMETIC" enroll $SHIM_DAEMON_OPT --seed "$seed" --now @${SHIM_NOW%000000000} \
			--tick "${SHIM_TICK}ns" --spin-limit "$SHIM_SPIN_LIMIT" -- "$@" 2>"$err"
		rc=$?
		# drop the CLI's --no-daemon warning and its "lag bound:" lines (a
		# runtime's housekeeping wait, such as the JVM's 50 ms WatcherThread,
		# that a loaded machine made end by the lag bound: docs/virtual-time.md);
		# keep everything else
		grep -v -e '^hermetic: --no-daemon' -e '^  network traffic' \
			-e '^hermetic: lag bound: ' "$err" >&2
		rm -f "$err"
		return $rc
	fi
	"${to[@]}" env HERMETIC_RUN=none HERMETIC_SEED="$seed" HERMETIC_NOW=$SHIM_NOW \
		HERMETIC_TICK="$SHIM_TICK" HERMETIC_CLOCK=virtual HERMETIC_RNG=all \
		HERMETIC_SPIN_LIMIT="$SHIM_SPIN_LIMIT" HERMETIC_ASLR=off HERMETIC_NETWORK=block \
		HERMETIC_DNS_ALLOW="${SHIM_DNS_ALLOW:-}" HERMETIC_LINEAGE=1 HERMETIC_PRELOAD="$SHIM" \
		LD_PRELOAD="$SHIM" setarch "$(uname -m)" -R "$@"
}

# A C compiler for the tests' helper programs.
SHIM_CC=$(command -v cc || command -v gcc || echo cc)

# The shim and the tools it is tested with; SKIP everything when it is not built.
shim_built() {
	if [ ! -f "$SHIM" ]; then
		skip "$1" "$SHIM not built (make build/libhermetic-preload.so)"
		return 1
	fi
}

# have TOOL NAME: SKIP NAME unless TOOL is installed.
have() {
	if ! command -v "$1" >/dev/null 2>&1; then
		skip "$2" "$1 not installed"
		return 1
	fi
}

# det NAME CMD...: run CMD (a shell snippet, via shim_run) with seed 42 twice
# and seed 43 once; PASS if all three exit 0, the two seed-42 outputs match
# and (with DIFFER=1, the default) the seed-43 output differs.
det() {
	local name=$1 differ=${DIFFER:-1} a b c ra rb rc
	shift
	a=$(shim_run 42 timeout 60 "$@" 2>&1)
	ra=$?
	b=$(shim_run 42 timeout 60 "$@" 2>&1)
	rb=$?
	c=$(shim_run 43 timeout 60 "$@" 2>&1)
	rc=$?
	if [ -z "$a" ]; then
		fail "$name" "no output"
	elif [ "$ra$rb$rc" != 000 ]; then
		fail "$name" "exit status $ra, $rb, $rc: $(printf '%s' "$a" | tail -c 300 | tr '\n' '|')"
	elif [ "$a" != "$b" ]; then
		fail "$name" "differs between runs with one seed: $(printf '%s' "$a" | head -c 200 | tr '\n' '|') vs $(printf '%s' "$b" | head -c 200 | tr '\n' '|')"
	elif [ "$differ" = 1 ] && [ "$a" = "$c" ]; then
		fail "$name" "same output with another seed: $(printf '%s' "$a" | head -c 200 | tr '\n' '|')"
	else
		pass "$name"
	fi
	DET_OUT=$a
}

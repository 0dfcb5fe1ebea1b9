#!/usr/bin/env bash
# Twenty concurrent runs with different network policies in one daemon: each
# checks its own outcome against its own policy, while all twenty are alive at
# once; none sees another's policy.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "concurrent runs" || exit 0
need_build "concurrent runs" || exit 1
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
lo_server LP || { fail "loopback server" "could not start"; exit 1; }

N=20
A=$NH_HTTP B=$NH_TCP H=$NH_HOST

# Each run: announce itself and block on its FIFO until the test has seen all
# N runs alive (a barrier of real waits: under the shim, sleeps return at
# once); probe port A, port B, loopback, UDP; barrier again; probe again.
cat >"$T/conc.py" <<'EOF'
import errno, os, signal, socket, sys
idx, d, host, a, b, lp, udp = sys.argv[1], sys.argv[2], sys.argv[3], \
    int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])

def on_alarm(sig, frame):
    raise TimeoutError()
signal.signal(signal.SIGALRM, on_alarm)

# (no alarm around the FIFO: inside the run alarm() is on the run's virtual
# clock, which moves as soon as the run is idle - and a run blocked opening
# a FIFO whose writer is outside is idle. The enroll's timeout(1) outside
# the run is the watchdog.)
def barrier(tag):
    fifo = os.path.join(d, "%s.%s.fifo" % (tag, idx))
    os.mkfifo(fifo)
    open(os.path.join(d, "%s.%s" % (tag, idx)), "w").close()
    with open(fifo) as f:  # blocks until the test opens it for writing
        return f.read().strip() or "empty"

def tcp(h, p):
    signal.alarm(10)
    try:
        socket.create_connection((h, p)).close()
        return "ok"
    except TimeoutError:
        return "TIMEOUT"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno)) if e.errno else type(e).__name__
    finally:
        signal.alarm(0)

def udpsend(h, p):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"conc-" + idx.encode(), (h, p))
        return "ok"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))

res = []
res.append("start=" + barrier("start"))
for rnd in (1, 2):
    res.append("A=%s B=%s lo=%s udp=%s" % (tcp(host, a), tcp(host, b), tcp("127.0.0.1", lp), udpsend(host, udp)))
    if rnd == 1:
        res.append("mid=" + barrier("mid"))
print(" ".join(res))
EOF
mkdir -p "$T/bar"

policy() {
	case $(($1 % 5)) in
	0) echo block ;;
	1) echo allowA ;;
	2) echo allowB ;;
	3) echo off ;;
	4) echo noloop ;;
	esac
}
opts() {
	case $1 in
	block) ;;
	allowA) echo "--allow $H:$A" ;;
	allowB) echo "--allow $H:$B" ;;
	off) echo "--network off" ;;
	noloop) echo "--no-loopback" ;;
	esac
}
want() {
	case $1 in
	block) echo "A=ENETUNREACH B=ENETUNREACH lo=ok udp=ENETUNREACH" ;;
	allowA) echo "A=ok B=ENETUNREACH lo=ok udp=ENETUNREACH" ;;
	allowB) echo "A=ENETUNREACH B=ok lo=ok udp=ENETUNREACH" ;;
	off) echo "A=ok B=ok lo=ok udp=ok" ;;
	noloop) echo "A=ENETUNREACH B=ENETUNREACH lo=ENETUNREACH udp=ENETUNREACH" ;;
	esac
}

pids=()
t0=$(now_ms)
for i in $(seq 0 $((N - 1))); do
	p=$(policy "$i")
	# shellcheck disable=SC2046
	timeout -k 5 60 "$HERMETIC" enroll $(opts "$p") -- \
		"$PY" "$T/conc.py" "$i" "$T/bar" "$H" "$A" "$B" "$LP" "$NH_UDP" \
		>"$T/conc.$i.out" 2>"$T/conc.$i.err" &
	pids[i]=$!
done
# release TAG: once all N runs wait at barrier TAG (or 20 s passed), open
# every FIFO of TAG for writing, which releases them all.
release() {
	local tag=$1 n i w=()
	for _ in $(seq 400); do
		n=$(find "$T/bar" -name "$tag.*" ! -name '*.fifo' | wc -l)
		[ "$n" -ge "$N" ] && break
		sleep 0.05
	done
	[ "$n" -ge "$N" ] && echo all >"$T/bar/$tag.verdict" || echo "only $n" >"$T/bar/$tag.verdict"
	for i in $(seq 0 $((N - 1))); do
		if [ -p "$T/bar/$tag.$i.fifo" ]; then
			timeout 5 sh -c "echo all >'$T/bar/$tag.$i.fifo'" &
			w+=($!)
		fi
	done
	((${#w[@]})) && wait "${w[@]}"
}
release start
release mid
for i in $(seq 0 $((N - 1))); do
	wait "${pids[i]}"
	echo $? >"$T/conc.$i.rc"
done
elapsed=$(($(now_ms) - t0))

overlap=0
for i in $(seq 0 $((N - 1))); do
	p=$(policy "$i")
	w=$(want "$p")
	out=$(cat "$T/conc.$i.out")
	rc=$(cat "$T/conc.$i.rc")
	[[ $out == "start=all "* ]] && overlap=$((overlap + 1))
	if [ "$rc" = 0 ] && [ "$out" = "start=all $w mid=all $w" ]; then
		pass "concurrent run $i ($p): its own policy, while all $N runs are alive"
	else
		fail "concurrent run $i ($p)" "rc=$rc want [start=all $w mid=all $w] got [$out] err=$(tail -n 3 "$T/conc.$i.err" | tr '\n' '|')"
	fi
done
if [ "$overlap" = "$N" ]; then
	pass "all $N runs were alive at the same time (${elapsed} ms in all)"
else
	fail "all $N runs were alive at the same time" "only $overlap released from the start barrier ($(cat "$T/bar/start.verdict"))"
fi

# Summaries belong to their own run: a run that was refused names only its
# own refusals; an 'off' run prints none.
bad=""
for i in $(seq 0 $((N - 1))); do
	p=$(policy "$i")
	err=$(cat "$T/conc.$i.err")
	case $p in
	off) [[ $err == *"hermetic: refused"* ]] && bad+=" $i(off run has a summary)" ;;
	allowA) [[ $err == *"$H:$A "* ]] && bad+=" $i(allowA run reports port A)" ;;
	allowB) [[ $err == *"$H:$B "* ]] && bad+=" $i(allowB run reports port B)" ;;
	*) [[ $err =~ hermetic:\ refused\ [0-9]+\ connection ]] || bad+=" $i($p run has no summary)" ;;
	esac
done
if [ -z "$bad" ]; then pass "each run's refusal summary shows only its own refusals"; else fail "each run's refusal summary shows only its own refusals" "$bad"; fi

# No run is left behind in the daemon.
sleep 0.5
runs=$("$HERMETIC" status --json 2>/dev/null | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))' 2>&1)
if [ "$runs" = 0 ]; then pass "no runs left in the daemon after the $N runs ended"; else fail "no runs left in the daemon after the $N runs ended" "status --json runs: $runs"; fi

#!/usr/bin/env bash
# 200 runs at once in one daemon, all alive together: every one succeeds,
# every one is refused the test host (in a network namespace this test
# creates), and every one reads its own clock (its --now) and its own seed's
# entropy, the same bytes as when that seed runs alone. (Latency figures are
# in make bench, tests/bench/concurrent-bench.sh; nothing here is timed.)
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

N=${MANY_RUNS:-200}
need_root "$N concurrent runs" || exit 0
need_build "$N concurrent runs" || exit 1
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }

# runprobe FIFO MARK HOST TCP UDP: reads the wall clock and 16 random bytes,
# connects to HOST:TCP and sends a datagram to HOST:UDP, then opens FIFO,
# leaves MARK and reads FIFO until EOF (the test closes the last writer once
# all N have left their mark). Prints "clock=S rand=HEX tcp=R udp=R".
cat >"$T/runprobe.c" <<'EOF'
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
static const char *res(int rc)
{
	return rc == 0 ? "ok" : errno == ENETUNREACH ? "ENETUNREACH" : errno == ECONNREFUSED ? "ECONNREFUSED" : errno == EPERM ? "EPERM" : strerror(errno);
}
int main(int argc, char **argv)
{
	struct timespec ts;
	unsigned char b[16];
	char hex[33], c;
	struct sockaddr_in a = { .sin_family = AF_INET };
	if (argc != 6 || inet_pton(AF_INET, argv[3], &a.sin_addr) != 1)
		return 2;
	clock_gettime(CLOCK_REALTIME, &ts);
	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return 3;
	for (int i = 0; i < 16; i++)
		sprintf(hex + 2 * i, "%02x", b[i]);
	a.sin_port = htons(atoi(argv[4]));
	int s = socket(AF_INET, SOCK_STREAM, 0);
	const char *tcp = res(connect(s, (struct sockaddr *)&a, sizeof(a)));
	close(s);
	a.sin_port = htons(atoi(argv[5]));
	s = socket(AF_INET, SOCK_DGRAM, 0);
	const char *udp = res(sendto(s, "m", 1, 0, (struct sockaddr *)&a, sizeof(a)) == 1 ? 0 : -1);
	close(s);
	int f = open(argv[1], O_RDONLY);
	int m = open(argv[2], O_WRONLY | O_CREAT, 0644);
	if (f < 0 || m < 0)
		return 4;
	close(m);
	while (read(f, &c, 1) > 0)
		;
	printf("clock=%lld rand=%s tcp=%s udp=%s\n", (long long)ts.tv_sec, hex, tcp, udp);
	return 0;
}
EOF
cc -O1 -o "$T/runprobe" "$T/runprobe.c" >"$T/cc.log" 2>&1 || {
	fail "build the run probe" "$(tail -n 3 "$T/cc.log" | tr '\n' '|')"
	exit 1
}

E0=978307200 # 2001-01-01T00:00:00Z; run i starts at E0 + i days
mkdir -p "$T/m"
mkfifo "$T/bar"
# The test holds the FIFO's only writer (fd 9, which no run inherits).
exec 9<>"$T/bar"
pids=()
for i in $(seq 0 $((N - 1))); do
	timeout -k 5 120 "$HERMETIC" enroll --seed $((1000 + i)) --now @$((E0 + i * 86400)) -- \
		"$T/runprobe" "$T/bar" "$T/m/$i" "$NH_HOST" "$NH_TCP" "$NH_UDP" \
		>"$T/out.$i" 2>"$T/err.$i" 9>&- &
	pids[i]=$!
done
# Release once all N have left their mark (all alive together), or after
# 100 s under whatever load there is.
for _ in $(seq 1000); do
	marks=$(find "$T/m" -type f | wc -l)
	[ "$marks" -ge "$N" ] && break
	sleep 0.1
done
# (listed, plus those a status too large for one message leaves out)
runs=$("$HERMETIC" status --json 2>/dev/null | "$PY" -c 'import json,sys; d = json.load(sys.stdin); print(len(d["runs"]) + d.get("runs_omitted", 0))' 2>&1)
exec 9>&-
for i in $(seq 0 $((N - 1))); do
	wait "${pids[i]}"
	echo $? >"$T/rc.$i"
done

if [ "$marks" -ge "$N" ] && [ "$runs" = "$N" ]; then
	pass "all $N runs were alive at once (hermetic status counted $runs runs)"
else
	fail "all $N runs were alive at once" "$marks of $N reached the barrier; hermetic status counted $runs runs"
fi

bad_rc="" bad_net="" bad_clock="" n_ok=0
for i in $(seq 0 $((N - 1))); do
	rc=$(cat "$T/rc.$i") out=$(cat "$T/out.$i")
	if [ "$rc" != 0 ]; then
		[ -z "$bad_rc" ] && bad_rc="run $i: rc=$rc $(grep -v '^hermetic: seed' "$T/err.$i" | head -n 2 | tr '\n' '|')"
		continue
	fi
	n_ok=$((n_ok + 1))
	[[ $out == *" tcp=ENETUNREACH udp=ENETUNREACH" ]] || bad_net+=" $i[$out]"
	clock=$(sed -n 's/^clock=\([0-9]*\) .*/\1/p' <<<"$out")
	want=$((E0 + i * 86400))
	# The virtual clock starts at --now and moves only when the run is idle,
	# which it is not before its first reading.
	{ [ -n "$clock" ] && [ "$clock" -ge "$want" ] && [ "$clock" -lt $((want + 60)) ]; } ||
		bad_clock+=" $i(clock=${clock:-none}, --now @$want)"
done
if [ "$n_ok" = "$N" ]; then pass "all $N concurrent runs exited 0"; else fail "all $N concurrent runs exited 0" "$((N - n_ok)) failed; first: $bad_rc"; fi
if [ -z "$bad_net" ] && [ "$n_ok" = "$N" ]; then
	pass "each of the $N runs was refused the test host (TCP and UDP: ENETUNREACH)"
else
	fail "each of the $N runs was refused the test host" "${bad_net:0:400}"
fi
if [ -z "$bad_clock" ] && [ "$n_ok" = "$N" ]; then
	pass "each of the $N runs read its own clock (its --now)"
else
	fail "each of the $N runs read its own clock" "${bad_clock:0:400}"
fi
dups=$(sed -n 's/.* rand=\([0-9a-f]*\) .*/\1/p' "$T"/out.* | sort | uniq -d | wc -l)
nrand=$(sed -n 's/.* rand=\([0-9a-f]*\) .*/\1/p' "$T"/out.* | wc -l)
if [ "$nrand" = "$N" ] && [ "$dups" = 0 ]; then
	pass "the $N runs' seeds gave $N different random streams"
else
	fail "the $N runs' seeds gave $N different random streams" "$nrand streams, $dups repeated"
fi

# A few of the seeds again, each alone: the same bytes and the same clock as
# in the crowd. And the control: the same probe in a run with the network
# off reaches the test host, so the refusals above are the policy's.
# alone MARK ENROLL_OPTS...: one run of the probe, released once it left
# MARK; prints its line.
alone() {
	local mark=$T/m/$1 pid
	shift
	rm -f "$mark"
	exec 9<>"$T/bar"
	timeout -k 5 60 "$HERMETIC" enroll "$@" -- "$T/runprobe" "$T/bar" "$mark" "$NH_HOST" "$NH_TCP" "$NH_UDP" \
		>"$T/alone.out" 2>"$T/alone.err" 9>&- &
	pid=$!
	for _ in $(seq 300); do [ -e "$mark" ] && break; sleep 0.1; done
	exec 9>&-
	wait "$pid"
	cat "$T/alone.out"
}
alone_bad=""
for i in 0 $((N / 2)) $((N - 1)); do
	a=$(alone "$i" --seed $((1000 + i)) --now @$((E0 + i * 86400)))
	[ "$a" = "$(cat "$T/out.$i")" ] || alone_bad+=" seed $((1000 + i)): alone [$a] crowd [$(cat "$T/out.$i")] $(tail -n 2 "$T/alone.err" | tr '\n' '|')"
done
if [ -z "$alone_bad" ]; then
	pass "three seeds run alone give the bytes and clock they gave among $N"
else
	fail "three seeds run alone give the bytes and clock they gave among $N" "$alone_bad"
fi
ctl=$(alone ctl --network off --seed 1)
if [[ $ctl == *" tcp=ok udp=ok" ]]; then
	pass "control: the same probe with --network off reaches the test host"
else
	fail "control: the same probe with --network off reaches the test host" "[$ctl] $(tail -n 2 "$T/alone.err" | tr '\n' '|')"
fi

sleep 0.5
left=$("$HERMETIC" status --json 2>/dev/null | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)["runs"]))' 2>&1)
if [ "$left" = 0 ]; then pass "no runs left in the daemon after the $((N + 4)) runs ended"; else fail "no runs left in the daemon" "status --json runs: $left"; fi

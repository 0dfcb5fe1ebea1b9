# The kernel's view: processes that ran without the shim and, with
# --audit-syscalls, raw time/entropy syscalls are named in enroll's
# coverage line. Without --audit-syscalls no syscall tracepoint is attached
# (each one puts every syscall of the machine on the kernel's slow path).
source "$(dirname "$0")/../lib.sh"
need_root audit || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }

# A statically linked Go program (CGO_ENABLED=0): no dynamic loader, so no
# shim; it reads crypto/rand (getrandom) and /dev/urandom. --supervise off:
# without the supervisor (static.sh tests it) the audit is all it has.
mkdir -p "$T/go"
cat >"$T/go/main.go" <<'GO'
package main

import (
	"crypto/rand"
	"fmt"
	"os"
)

func main() {
	b := make([]byte, 8)
	rand.Read(b)
	fmt.Printf("%x\n", b)
	f, _ := os.Open("/dev/urandom")
	f.Read(b)
	fmt.Printf("%x\n", b)
}
GO
if ! go_static "$T/go" "$T/go/gorand"; then
	fail "build static Go program" "$(tail -n 3 "$T/go.log" | tr '\n' '|')"
	exit 1
fi

# hm_* programs of this test's daemon attached to syscall tracepoints (perf
# event links), and to task_rename (the shim's announcement). Only the
# links this daemon holds (the link_id lines of its descriptors' fdinfo):
# another hermeticd on the machine, with runs of its own, must not count.
links() { bpftool -j link show 2>/dev/null | "$PY" -c '
import json, subprocess, sys
names = {p["id"]: p.get("name", "") for p in json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True).stdout or "[]")}
ls = json.load(sys.stdin)
mine = set(int(x) for x in sys.argv[1].split())
ls = [l for l in ls if l.get("id") in mine]
sysc = sorted(names.get(l["prog_id"], "") for l in ls if l.get("type") == "perf_event" and names.get(l["prog_id"], "").startswith("hm_"))
ren = [l for l in ls if l.get("tp_name") == "task_rename" and names.get(l["prog_id"], "") == "hm_rename"]
print(len(sysc), len(ren))' "$(sed -n 's/^link_id:[[:space:]]*//p' /proc/"$HMD_PID"/fdinfo/* 2>/dev/null)"; }
PY=${PY:-python3}
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
# Each count is taken while its run holds its links; a run that failed
# fails its case (no link is no news then).
"$HERMETIC" enroll --seed 1 -- sleep 3 >"$T/l1.out" 2>&1 &
runp=$!
sleep 1.5
l_default=$(links)
wait $runp
rc_default=$?
"$HERMETIC" enroll --seed 1 --audit-syscalls -- sleep 3 >"$T/l2.out" 2>&1 &
runp=$!
sleep 1.5
l_audit=$(links)
wait $runp
rc_audit=$?
if [ "$rc_default" != 0 ]; then
	fail "a run without --audit-syscalls: no syscall tracepoint attached, the announcement's rename one is" \
		"the run failed: enroll exited $rc_default: $(tr '\n' '|' <"$T/l1.out")"
elif [ "$l_default" = "0 1" ]; then
	pass "a run without --audit-syscalls: no syscall tracepoint attached, the announcement's rename one is"
else
	fail "a run without --audit-syscalls: no syscall tracepoint attached, the announcement's rename one is" \
		"syscall links, rename links: [$l_default]"
fi
if [ "$rc_audit" != 0 ]; then
	fail "a run with --audit-syscalls: the syscall tracepoints are attached" \
		"the run failed: enroll exited $rc_audit: $(tr '\n' '|' <"$T/l2.out")"
elif [[ $l_audit == 1[0-9]" 1" ]]; then
	pass "a run with --audit-syscalls: the syscall tracepoints are attached"
else
	fail "a run with --audit-syscalls: the syscall tracepoints are attached" "syscall links, rename links: [$l_audit]"
fi

"$HERMETIC" enroll --seed 1 --supervise off -- "$T/go/gorand" >"$T/out" 2>"$T/err"
if grep -q "coverage: 1 of 1 process ran without the shim: $T/go/gorand (pid [0-9]*)\$" "$T/err"; then
	pass "static Go binary is named as running without the shim (no counts without --audit-syscalls)"
else
	fail "static Go binary is named as running without the shim (no counts without --audit-syscalls)" "$(tr '\n' '|' <"$T/err")"
fi

"$HERMETIC" enroll --seed 1 --supervise off --audit-syscalls -- "$T/go/gorand" >"$T/out" 2>"$T/err"
if grep -q "coverage: 1 of 1 process ran without the shim: $T/go/gorand (pid [0-9]*, [1-9][0-9]* getrandom" "$T/err"; then
	pass "static Go binary is named as running without the shim, with its getrandom calls"
else
	fail "static Go binary is named as running without the shim" "$(tr '\n' '|' <"$T/err")"
fi

# A shell tree with the shim: only the Go grandchild escapes.
"$HERMETIC" enroll --seed 1 --supervise off -- sh -c "true; $T/go/gorand >/dev/null; true" >"$T/out" 2>"$T/err"
if grep -q "coverage: 1 of [2-9] processes ran without the shim: $T/go/gorand" "$T/err"; then
	pass "only the static grandchild escapes in a shell tree"
else
	fail "only the static grandchild escapes in a shell tree" "$(tr '\n' '|' <"$T/err")"
fi

# Dynamic programs under the shim: no coverage line at all. An absence is
# only news when the run happened: enroll succeeded and python said so.
"$HERMETIC" enroll --seed 1 -- python3 -c 'import os, uuid; os.urandom(8); uuid.uuid4(); print("ran")' >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" != 0 ] || [ "$(cat "$T/out")" != ran ]; then
	fail "python under the shim escapes nothing" "the run did not happen: enroll exited $rc, out [$(tr '\n' '|' <"$T/out")] err [$(tr '\n' '|' <"$T/err")]"
elif grep -q coverage "$T/err"; then
	fail "python under the shim escapes nothing" "$(tr '\n' '|' <"$T/err")"
else
	pass "python under the shim escapes nothing"
fi

# A raw syscall that bypasses the shim is counted.
cat >"$T/raw.c" <<'C'
#include <sys/syscall.h>
#include <unistd.h>
int main(void) { char b[8]; long r = 0; __asm__ volatile("syscall" : "=a"(r) : "0"(SYS_getrandom), "D"(b), "S"(8), "d"(0) : "rcx", "r11", "memory"); return r == 8 ? 0 : 1; }
C
cc -O2 -o "$T/raw" "$T/raw.c"
"$HERMETIC" enroll --seed 1 --audit-syscalls -- "$T/raw" 2>"$T/err"
if grep -q "coverage: 1 raw time/entropy syscall bypassed the shim" "$T/err"; then
	pass "inline-asm getrandom is reported as bypassing the shim"
else
	fail "inline-asm getrandom is reported as bypassing the shim" "$(tr '\n' '|' <"$T/err")"
fi

# A child its parent kills at once (subprocess's Popen, then kill) dies
# while its image is still starting, before the shim's constructor: it ran
# nothing of the program, so it is no process without the shim. 20 of them
# in one run, from Python and from a shell; not one coverage line.
"$HERMETIC" enroll --seed 1 -- python3 -c '
import subprocess
for i in range(10):
    p = subprocess.Popen(["/bin/sleep", "5"]); p.kill(); p.wait()
subprocess.run(["sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do /bin/sleep 5 & kill -9 $!; done; wait"])
print("ran")' >"$T/out" 2>"$T/err"
rc=$?
if [ "$rc" != 0 ] || [ "$(cat "$T/out")" != ran ]; then
	fail "children killed at once are no processes without the shim" "the run did not happen: enroll exited $rc, out [$(tr '\n' '|' <"$T/out")] err [$(tr '\n' '|' <"$T/err")]"
elif grep -q coverage "$T/err"; then
	fail "children killed at once are no processes without the shim" "$(tr '\n' '|' <"$T/err")"
else
	pass "children killed at once are no processes without the shim"
fi
# The control: a dynamic program that ran without the shim (exec'd by a
# raw system call with an empty environment, which the shim's exec wrappers
# do not see) and was then killed is still named.
cat >"$T/rawexec.c" <<'C'
#include <sys/syscall.h>
int main(int argc, char **argv)
{
	char *envp[] = { 0 };
	long r;
	(void)argc;
	__asm__ volatile("syscall" : "=a"(r) : "0"(SYS_execve), "D"(argv[1]), "S"(argv + 1), "d"(envp) : "rcx", "r11", "memory");
	return 127;
}
C
cc -O2 -o "$T/rawexec" "$T/rawexec.c"
# (--supervise off: the supervisor would take it over; the fifo: it is
# killed once it has run, not while it starts.)
rm -f "$T/started" && mkfifo "$T/started"
"$HERMETIC" enroll --seed 1 --supervise off -- sh -c "$T/rawexec /usr/bin/python3 -c 'import time; open(\"$T/started\", \"w\").write(\"x\"); time.sleep(30)' & read x <$T/started; kill \$!; wait" >"$T/out" 2>"$T/err"
if grep -q "coverage: 1 of [2-9] processes ran without the shim: .*python3" "$T/err"; then
	pass "a program that ran without the shim, then was killed, is still named"
else
	fail "a program that ran without the shim, then was killed, is still named" "$(tr '\n' '|' <"$T/err")"
fi

# The kernel's view: processes that ran without the shim and raw
# time/entropy syscalls are named in enroll's coverage line.
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

"$HERMETIC" enroll --seed 1 --supervise off -- "$T/go/gorand" >"$T/out" 2>"$T/err"
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

# Dynamic programs under the shim: no coverage line at all.
"$HERMETIC" enroll --seed 1 -- python3 -c 'import os, uuid; os.urandom(8); uuid.uuid4()' >"$T/out" 2>"$T/err"
if grep -q coverage "$T/err"; then
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
"$HERMETIC" enroll --seed 1 -- "$T/raw" 2>"$T/err"
if grep -q "coverage: 1 raw time/entropy syscall bypassed the shim" "$T/err"; then
	pass "inline-asm getrandom is reported as bypassing the shim"
else
	fail "inline-asm getrandom is reported as bypassing the shim" "$(tr '\n' '|' <"$T/err")"
fi

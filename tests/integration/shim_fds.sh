#!/usr/bin/env bash
# No fixed descriptor limits in the shim's per-descriptor tables
# (preload/fdtab.h): /dev/urandom opened at descriptor 1030 and at the hard
# RLIMIT_NOFILE is seeded like at descriptor 3, and repeats under one seed.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built "descriptor tables" || exit 0
cd "$T" || exit 1

# fds.py WHERE: raise the soft limit to the hard one, fill every free
# descriptor below WHERE (a number, or "hard": the highest the limit
# allows, at most 2^20 - 1), so that open() lands on it; print it and 16 bytes read there,
# through read(2) and through a buffered file object.
cat >"$T/fds.py" <<'EOF'
import os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
top = min(hard, 1 << 20)  # (a hard limit of 2^30 is no number to fill)
resource.setrlimit(resource.RLIMIT_NOFILE, (top, hard))
where = top - 1 if sys.argv[1] == "hard" else int(sys.argv[1])
null = os.open("/dev/null", os.O_RDONLY) if where > 3 else None
for fd in range(3, where):
    try:
        os.fstat(fd)
    except OSError:
        os.dup2(null, fd)
fd = os.open("/dev/urandom", os.O_RDONLY)
assert fd == where, (fd, where)
first = os.read(fd, 16).hex()
second = os.fdopen(fd, "rb", buffering=0).read(16).hex()
print("at=%s bytes=%s,%s" % ("hard" if fd == top - 1 else fd, first, second))
EOF
hard=$(ulimit -H -n)
[ "$hard" = unlimited ] || [ "$hard" -le $((1 << 20)) ] || hard=$((1 << 20))
if [ "$hard" = unlimited ] || [ "$hard" -le 1031 ]; then
	fail "descriptor tables" "the hard RLIMIT_NOFILE is $hard: this test needs more than 1031"
	exit 0
fi
det "/dev/urandom at descriptor 3 repeats under one seed" python3 "$T/fds.py" 3
low=${DET_OUT#at=3 }
det "/dev/urandom at descriptor 1030 repeats under one seed" python3 "$T/fds.py" 1030
at1030=${DET_OUT#at=1030 }
det "/dev/urandom at the hard limit (descriptor $((hard - 1))) repeats under one seed" \
	python3 "$T/fds.py" hard
athard=${DET_OUT#at=hard }
# The same stream as at descriptor 3: served by the shim, not the kernel.
if [ -n "$low" ] && [ "$low" = "$at1030" ] && [ "$low" = "$athard" ]; then
	pass "descriptors 3, 1030 and $((hard - 1)) read the seed's bytes, the same ones"
else
	fail "descriptors 3, 1030 and $((hard - 1)) read the seed's bytes" "3: $low 1030: $at1030 hard: $athard"
fi

# A timerfd at descriptor 1030 is the shim's, on the run's clock: 100 s of
# it pass at once when the run is idle (a real timer would take 100 s).
cat >"$T/tfd.c" <<'EOF'
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
int main(void)
{
	struct itimerspec its = { .it_value = { .tv_sec = 100 } };
	struct timespec a, b;
	uint64_t n = 0;
	int null = open("/dev/null", O_RDONLY), fd;

	for (int i = 3; i < 1030; i++)
		if (fcntl(i, F_GETFD) < 0)
			dup2(null, i);
	fd = timerfd_create(CLOCK_MONOTONIC, 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if (fd != 1030 || timerfd_settime(fd, 0, &its, NULL) || read(fd, &n, sizeof(n)) != sizeof(n))
		return printf("fd %d: failed\n", fd), 1;
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("fd %d expirations %llu after %lld s\n", fd, (unsigned long long)n,
	       (long long)(b.tv_sec - a.tv_sec));
	return 0;
}
EOF
if "$SHIM_CC" -O2 -o "$T/tfd" "$T/tfd.c" 2>"$T/tfd.log"; then
	t0=$(date +%s)
	out=$(shim_run 42 timeout 60 "$T/tfd" 2>&1)
	t1=$(date +%s)
	[ "$out" = "fd 1030 expirations 1 after 100 s" ] && (( t1 - t0 < 50 )) &&
		pass "a timerfd at descriptor 1030 runs on the run's clock (100 s at once)" ||
		fail "a timerfd at descriptor 1030 runs on the run's clock" "$out, $((t1 - t0)) s real"
else
	fail "timerfd helper builds" "$(tail -n 3 "$T/tfd.log" | tr '\n' '|')"
fi

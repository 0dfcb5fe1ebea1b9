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
# allows), so that open() lands on it; print it and 16 bytes read there,
# through read(2) and through a buffered file object.
cat >"$T/fds.py" <<'EOF'
import os, resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
where = hard - 1 if sys.argv[1] == "hard" else int(sys.argv[1])
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
print("at=%s bytes=%s,%s" % ("hard" if fd == hard - 1 else fd, first, second))
EOF
hard=$(ulimit -H -n)
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

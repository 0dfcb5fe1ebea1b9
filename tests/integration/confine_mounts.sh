#!/usr/bin/env bash
# enroll hides every bpffs mount from the run (engine/confine.c mounts over
# each: in the run none of those paths is a bpffs), and a host
# has one per hermeticd: a CI runner's, each test's private one. Twenty of
# them (made in a mount namespace of this test's own, so no other enroll on
# the machine sees them) do not stop a run from starting.
source "$(dirname "$0")/../lib.sh"
need_root "bpffs mounts" || exit 0
start_daemon || { fail "bpffs mounts: daemon" "did not start"; exit 0; }
mkdir -p "$T/bpfs"
out=$(unshare -m --propagation private sh -c '
	for i in $(seq 20); do
		mkdir -p "$1/$i" && mount -t bpf bpf "$1/$i" || exit 9
	done
	echo mounts=$(grep -c " - bpf " /proc/self/mountinfo)
	"$2" enroll -- sh -c "echo seen=\$(stat -f -c %T $1/* | grep -c bpf)"
	echo rc=$?' sh "$T/bpfs" "$HERMETIC" 2>&1)
n=$(sed -n 's/^mounts=//p' <<<"$out")
if [[ $out == *"seen=0"*"rc=0"* ]] && [ "${n:-0}" -gt 20 ]; then
	pass "with $n bpffs mounts on the host a run starts and sees none of them"
else
	fail "with 20 more bpffs mounts a run starts and sees none" "$(tr '\n' '|' <<<"$out")"
fi

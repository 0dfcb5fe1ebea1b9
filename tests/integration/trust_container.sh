#!/usr/bin/env bash
# Issue 15: root enrolls with the defaults where CI puts it, and gets every
# layer its kernel and capabilities allow:
#  - in a container made the way Docker makes one: its own mount, pid and
#    cgroup namespaces with a /proc of its own and /proc/sys read-only,
#    Docker's default capability set (no CAP_SYS_ADMIN), the host's network
#    (so the test host's refusal is hermetic's, not a missing route). The
#    cgroup2 stays writable, the hard case: Landlock must keep the run's root
#    from writing cgroup.procs (with --confine off it walks out: the control);
#  - in a chroot whose / is not a mount point (sbuild, pbuilder, chroot(8)).
#    The chroot's mounts hang off a shared mount of the test's own private
#    namespace, so a namespace that failed to make them slaves would
#    unmount the daemon's bpffs or the cgroup2 here: both must stay.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"

need_root "containers and chroots" || exit 0
need_build "containers and chroots" || exit 1
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
CG2=$(sed -n 's/^[0-9]* [0-9]* [^ ]* [^ ]* \([^ ]*\) .* - cgroup2 .*/\1/p' /proc/self/mountinfo | head -n1)
H=$NH_HOST P=$NH_TCP
ctx() { printf 'rc=%s %s' "$1" "$(printf '%s' "$2" | tr '\n' '|' | tail -c 700)"; }
DOCKER_CAPS=-all,+chown,+dac_override,+fowner,+fsetid,+kill,+setgid,+setuid,+setpcap,+net_bind_service,+net_raw,+sys_chroot,+mknod,+audit_write,+setfcap

# ctr CMD...: CMD as root of a Docker-like container.
ctr() {
	timeout 120 unshare --mount --pid --fork --cgroup --propagation private sh -c '
		mount -t proc proc /proc &&
		mount --bind /proc/sys /proc/sys && mount -o remount,bind,ro /proc/sys &&
		exec setpriv --bounding-set "$0" --inh-caps -all "$@"' "$DOCKER_CAPS" "$@"
}
job="grep -c . /proc/self/cgroup >/dev/null; if echo hi > /dev/tcp/$H/$P; then echo CONNECTED; else echo REFUSED; fi;
	if echo \$\$ > $CG2/cgroup.procs; then echo LEFT; grep ^0:: /proc/self/cgroup; else echo STAYED; fi; exit 3"

out=$(ctr sh -c "grep CapEff /proc/self/status; echo pid \$\$" 2>&1)
if [[ $out == *"pid 1"* ]] && [[ $out == *"CapEff:	00000000a80425fb"* ]]; then
	pass "setup: the container's root has Docker's default capabilities (no CAP_SYS_ADMIN) and is pid 1"
else
	fail "setup: the container" "$(ctx 0 "$out")"
fi
out=$(ctr "$HERMETIC" enroll --now @1000 -- bash -c "$job" 2>&1)
rc=$?
if [ "$rc" = 3 ] && grep -qx REFUSED <<<"$out" && grep -qx STAYED <<<"$out" && ! grep -qx LEFT <<<"$out"; then
	pass "container root enrolls with the defaults: the test host is refused and writing cgroup.procs cannot take it out of the run"
else
	fail "container root with the defaults" "$(ctx "$rc" "$out")"
fi
out=$(ctr "$HERMETIC" enroll --confine off --now @1000 -- bash -c "$job" 2>&1)
rc=$?
if [ "$rc" = 3 ] && grep -qx LEFT <<<"$out"; then
	pass "control: with --confine off the container's root leaves its run's cgroup by writing cgroup.procs"
else
	fail "control: container root with --confine off" "$(ctx "$rc" "$out")"
fi
out=$(ctr "$HERMETIC" status 2>&1)
if [[ $out == *"landlock"*"no writes under /sys or cgroup2"* ]] && [[ $out == *"namespaces   none (no CAP_SYS_ADMIN"* ]]; then
	pass "container: status names the layers a run gets there and the namespaces it cannot have"
else
	fail "container: status" "$(ctx 0 "$out")"
fi
out=$(ctr "$HERMETIC" enroll --report "$T/ctr.jsonl" -- true 2>&1)
if "$PY" -c '
import json, sys
d = json.loads(open(sys.argv[1]).readlines()[-1])["containment"]
assert d["enabled"] and d["namespaces"] == "none" and d["landlock"]["writes_limited"], d
' "$T/ctr.jsonl" 2>"$T/ctr.err"; then
	pass "container: the run's --report names its containment layers"
else
	fail "container: --report containment" "$(tr '\n' '|' <"$T/ctr.err")"
fi
# /proc/sys writable (a --privileged-like container without CAP_SYS_ADMIN):
# root's processes could start programs outside the run; enroll refuses.
out=$(timeout 60 unshare --mount --pid --fork --cgroup --propagation private sh -c '
	mount -t proc proc /proc && exec setpriv --bounding-set "$0" --inh-caps -all "$@"' "$DOCKER_CAPS" \
	"$HERMETIC" enroll -- true 2>&1)
rc=$?
if [ "$rc" = 70 ] && [[ $out == *"/proc/sys is writable"*"--confine off"* ]]; then
	pass "container with a writable /proc/sys: enroll refuses, says why and what to do (exit 70)"
else
	fail "container with a writable /proc/sys" "$(ctx "$rc" "$out")"
fi

# --- a chroot whose / is not a mount point ---------------------------------------------------
CH=$T/ch
mkdir -p "$CH"
cat >"$T/chroot.sh" <<'EOF'
set -e
CH=$1 T=$2 TOP=$3
mount -t tmpfs tmpfs "$CH"
mount --make-shared "$CH"
R=$CH/root
mkdir -p "$R"
for d in bin sbin lib lib64 usr etc; do
	[ -e "/$d" ] || continue
	if [ -L "/$d" ]; then ln -s "$(readlink "/$d")" "$R/$d"; continue; fi
	mkdir -p "$R/$d" && mount --rbind "/$d" "$R/$d"
done
mkdir -p "$R/dev" "$R/proc" "$R/sys" "$R/tmp" "$R$TOP"
mount --rbind /dev "$R/dev"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /tmp "$R/tmp"
mount --bind "$TOP" "$R$TOP"
echo "before: $(grep -c . /proc/self/mountinfo)"
BPF=$(awk '$9 == "bpf" { print $5 }' /proc/self/mountinfo | grep "^$R$T/" | head -n1)
CGR=$(awk '$9 == "cgroup2" { print $5 }' /proc/self/mountinfo | grep "^$R/" | head -n1)
echo "bpffs in the chroot: ${BPF:-none}; cgroup2: ${CGR:-none}"
shift 3
set +e
chroot "$R" "$@"
echo "rc=$?"
mountpoint -q "$BPF" && echo "BPFFS_STAYS"
mountpoint -q "$CGR" && echo "CGROUP2_STAYS"
echo "after: $(grep -c . /proc/self/mountinfo)"
EOF
out=$(timeout 120 unshare -m --propagation private bash "$T/chroot.sh" "$CH" "$T" "$TOP" \
	"$HERMETIC" enroll --now @1000 -- bash -c "grep ^0:: /proc/self/cgroup; if echo hi > /dev/tcp/$H/$P; then echo CONNECTED; else echo REFUSED; fi; date -u +%s; exit 3" 2>&1)
before=$(sed -n 's/^before: //p' <<<"$out")
after=$(sed -n 's/^after: //p' <<<"$out")
if [[ $out == *"rc=3"* ]] && [[ $out == *REFUSED* ]] && [[ $out == *$'0::/\n'* ]] && [[ $out == *$'\n1000\n'* ]]; then
	pass "chroot whose / is not a mount point: root enrolls with the defaults, the run is the root of its cgroup view, the test host is refused, the clock is the run's"
else
	fail "chroot: root with the defaults" "$(ctx 0 "$out")"
fi
if [[ $out == *"bpffs in the chroot: /"* ]] && [[ $out == *BPFFS_STAYS* ]] && [[ $out == *CGROUP2_STAYS* ]] && [ -n "$before" ] && [ "$before" = "$after" ]; then
	pass "chroot: hiding the daemon's bpffs and replacing the cgroup2 in the run's namespace did not propagate out of it ($before mounts before and after)"
else
	fail "chroot: mounts outside the run" "$(ctx 0 "$out")"
fi

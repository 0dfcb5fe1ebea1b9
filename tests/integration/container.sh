# Container jobs: hermetic enroll inside a container (podman, from the
# package registry) whose runtime directory /run/hermetic is the host
# daemon's, bind-mounted: SO_PEERCRED and pidfds across pid namespaces, the
# run's cgroup outside the container's cgroup namespace, the shim found in
# the container's own filesystem (the package installed in the image).
# timeout: 900
# (tests/run.sh ends it past that: 182 s measured on 2 cores loaded 5-fold, its Debian root built afresh)
source "$(dirname "$0")/../lib.sh"
need_root container || exit 0
source "$(dirname "$0")/nethost.sh"
command -v podman >/dev/null || { fail "podman" "not installed (make deps)"; exit 1; }
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }

# The image: the cached Debian root with the package installed.
tar=$("$TOP/tests/debroot.sh" 2>"$T/debroot.log") || {
	fail "a Debian root from mmdebstrap" "$(tail -n 5 "$T/debroot.log" | tr '\n' '|')"
	exit 1
}
make -s -C "$TOP" deb >"$T/deb.log" 2>&1 || { fail "make deb" "$(tail -n 5 "$T/deb.log" | tr '\n' '|')"; exit 1; }
DEB=$(ls "$TOP"/build/hermetic_*_amd64.deb)
R=$T/image
mkdir "$R" && tar -xf "$tar" -C "$R"
at_exit "rm -rf '$R'"
cp "$DEB" "$R/tmp/hermetic.deb"
if chroot "$R" dpkg -i /tmp/hermetic.deb >"$T/dpkg.log" 2>&1; then
	pass "dpkg -i installs the package in the image"
else
	fail "dpkg -i installs the package in the image" "$(tail -n 5 "$T/dpkg.log" | tr '\n' '|')"
fi

# The host's daemon; its runtime directory (socket, per-run files) is what
# a container mounts, at the same path (as /run/hermetic:/run/hermetic).
RUN=$T/run
mkdir -p "$RUN"
# The socket is 0660 root:<group>; nobody in the container gets in as a
# member of this test's group.
test_group || { fail "a test group" "groupadd failed"; exit 1; }
HM_GID=$(getent group "$HM_GROUP" | cut -d: -f3)
"$HERMETICD" --socket "$RUN/hermeticd.sock" --runtime-dir "$RUN" --subtree "hmtest-$$-ctr" \
	--store "$T/store" --socket-group "$HM_GROUP" >"$T/daemon.log" 2>&1 &
DP=$!
at_exit "kill $DP; wait $DP"
export HERMETIC_SOCKET=$RUN/hermeticd.sock
for _ in $(seq 400); do "$HERMETIC" status >/dev/null 2>&1 && break; sleep 0.05; done

# The container's own cgroup (its cgroup namespace's root), so the run's
# cgroup is outside that namespace.
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
CG=$CGROOT/hmtest-$$-pod
mkdir "$CG"
# conmon may still be leaving it when the test ends.
at_exit "for _ in \$(seq 100); do rmdir '$CG' && break; sleep 0.1; done"
# ctr ARGS...: podman run in the image (--rootfs is a flag: the path is
# the first argument, and the command follows it). In a private mount namespace,
# cgroup2 is mounted at /sys/fs/cgroup (crun refuses the hybrid layout of
# some hosts); --network=host so the test host's refusal is hermetic's,
# not a missing route; its own pid, mount, ipc, uts and cgroup namespaces.
ctr() {
	timeout 300 unshare -m --propagation private sh -c '
		mount -t cgroup2 cgroup2 /sys/fs/cgroup && echo $$ >"/sys/fs/cgroup/$0/cgroup.procs" &&
		exec "$@"' "${CG#"$CGROOT"/}" \
		podman --root "$T/podman" --runroot "$T/podman-run" --cgroup-manager=cgroupfs \
		--events-backend=none run --rm --network=host --cgroupns=private --cgroups=disabled \
		--ulimit "nofile=$(ulimit -Hn):$(ulimit -Hn)" --ulimit nproc=1024:1024 \
		-v "$RUN:$RUN" -e HERMETIC_SOCKET="$HERMETIC_SOCKET" --rootfs "$R" "$@"
}

out=$(ctr sh -c 'cat /proc/self/cgroup | grep ^0::; echo "pid $$"; hermetic status' 2>&1)
case "$out" in
*"0::/"*"pid 1"*"cgroup/connect4 "*active*) pass "in a container (own pid and cgroup namespace) hermetic status reaches the host daemon through the mount" ;;
*) fail "hermetic status from a container" "$(printf '%s' "$out" | tr '\n' '|')" ;;
esac

job="cat /proc/self/cgroup | grep ^0::; echo preload=\$LD_PRELOAD; date -u +%s;
	if echo hi > /dev/tcp/$NH_HOST/$NH_TCP; then echo CONNECTED; else echo REFUSED; fi; exit 3"
for who in root nobody; do
	as=() conf=()
	[ "$who" = nobody ] && as=(setpriv --reuid=65534 --regid=65534 --groups="$HM_GID")
	# Root in a container without CAP_SYS_ADMIN gets no namespaces of its
	# own: Landlock keeps it in its run's cgroup (trust_container.sh), and it
	# enrolls with the defaults.
	out=$(ctr "${as[@]}" hermetic enroll "${conf[@]}" --now @1000 --seed 7 -- bash -c "$job" 2>&1)
	rc=$?
	check "container, $who: the command's status comes back" test "$rc" = 3
	# podman's default seccomp profile refuses personality(ADDR_NO_RANDOMIZE):
	# the run goes on and says what it lost.
	case "$out" in *"hermetic: address space randomisation stays on (personality: "*) pass "container, $who: the run says address space randomisation stays on" ;;
	*) fail "container, $who: the run says address space randomisation stays on" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
	case "$out" in *REFUSED*"refused 1 connection: $NH_HOST:$NH_TCP"*) pass "container, $who: the test host is refused and the refusal reported" ;;
	*) fail "container, $who: the test host is refused" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
	# Seen from inside, the run's cgroup is outside the container's namespace.
	case "$out" in *"0::/../hmtest-$$-ctr/run-"*) pass "container, $who: the run's cgroup lies outside the container's cgroup namespace" ;;
	*) fail "container, $who: the run's cgroup" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	case "$out" in *"preload=/usr/lib/$ma/hermetic/libhermetic-preload.so"*) pass "container, $who: the shim is the image's own" ;;
	*) fail "container, $who: the shim is the image's own" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
	case "$out" in *$'\n1000\n'*) pass "container, $who: the shim's clock (--now @1000)" ;;
	*) fail "container, $who: the shim's clock" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
done
# (one stream from inside: podman relays stdout and stderr apart, and dash
# writes its error's "sh: 1: " apart from the rest: STAYED once landed
# between them, not on a line of its own)
out=$(ctr sh -c "exec 2>&1; hermetic enroll --now @1000 -- sh -c 'echo \$\$ > /sys/fs/cgroup/cgroup.procs && echo LEFT || echo STAYED'; hermetic status" 2>&1)
if grep -qx STAYED <<<"$out" && [[ $out == *"landlock "*"ABI"* ]]; then
	pass "container, root without CAP_SYS_ADMIN: enrolls with the defaults and cannot leave its run's cgroup; status names its layers"
else
	fail "container, root without CAP_SYS_ADMIN: the defaults" "$(printf '%s' "$out" | tr '\n' '|')"
fi
out=$(ctr bash -c "if echo hi > /dev/tcp/$NH_HOST/$NH_TCP; then echo CONNECTED; else echo REFUSED; fi" 2>&1)
case "$out" in *CONNECTED*) pass "container: outside a run the test host answers" ;;
*) fail "container: outside a run the test host answers" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
# A recorded run's journal, listed from the container by its owner.
out=$(ctr setpriv --reuid=65534 --regid=65534 --groups="$HM_GID" sh -c \
	'cd /tmp && hermetic enroll --record -- sh -c "exit 1" 2>/dev/null; hermetic journals list' 2>&1)
case "$out" in *"sh -c exit 1"*) pass "container: a recorded run's journal is in the store, listed by its owner" ;;
*) fail "container: a recorded run's journal" "$(printf '%s' "$out" | tr '\n' '|')" ;; esac
check "no run is left in the daemon" sh -c "'$HERMETIC' status --json | '$PY' -c 'import json,sys; assert json.load(sys.stdin)[\"runs\"] == []'"

# hermeticd as a systemd service, short of booting systemd (tests/vm does
# that): the installed units verify; systemd-socket-activate starts it and
# it serves; READY=1 only once the socket answers (service_notify.py plays
# the service manager and observes the order); the watchdog, STATUS= and
# STOPPING=1; --delegated cgroup placement; log lines with priorities.
source "$(dirname "$0")/../lib.sh"
need_root service || exit 0
source "$(dirname "$0")/nethost.sh"

# --- the installed units verify -------------------------------------------
D=$T/root
if make -s -C "$TOP" install DESTDIR="$D" prefix=/usr >"$T/install.log" 2>&1; then
	# verify resolves the units' dependencies (sysinit.target, ...) in the
	# same root: give it the system's units beside ours.
	cp -an /lib/systemd/system/. "$D/usr/lib/systemd/system/"
	check "systemd-analyze verify passes on the installed units" \
		systemd-analyze verify --man=no --root="$D" /usr/lib/systemd/system/hermeticd.socket \
		/usr/lib/systemd/system/hermeticd.service
	check "the installed hermeticd.service runs the installed daemon" \
		grep -qx 'ExecStart=/usr/sbin/hermeticd --delegated' "$D/usr/lib/systemd/system/hermeticd.service"
	check "the socket is SEQPACKET, 0660 root:hermetic" sh -c "
		grep -qx 'ListenSequentialPacket=/run/hermetic/hermeticd.sock' '$D/usr/lib/systemd/system/hermeticd.socket' &&
		grep -qx 'SocketMode=0660' '$D/usr/lib/systemd/system/hermeticd.socket' &&
		grep -qx 'SocketGroup=hermetic' '$D/usr/lib/systemd/system/hermeticd.socket'"
	check "sysusers.d creates group hermetic" grep -qx 'g hermetic -' "$D/usr/lib/sysusers.d/hermetic.conf"
	check "tmpfiles.d creates /run/hermetic and the store" sh -c "
		systemd-tmpfiles --root='$T/tmpfiles-root' --create '$D/usr/lib/tmpfiles.d/hermetic.conf' &&
		test \"\$(stat -c %a '$T/tmpfiles-root/var/lib/hermetic/journals')\" = 711 &&
		test -d '$T/tmpfiles-root/run/hermetic'"
else
	fail "make install" "$(tail -n 3 "$T/install.log" | tr '\n' '|')"
fi

# --- the service manager's protocol, observed -------------------------------
"$PY" "$TOP/tests/integration/service_notify.py" "$HERMETICD" "$T" --subtree "hmtest-$$-n" \
	--store "$T/store" --runtime-dir "$T/run-n" || true

# --- systemd-socket-activate --seqpacket starts it, and it serves ----------
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
export HERMETIC_SOCKET=$T/sa.sock
systemd-socket-activate --seqpacket -l "$HERMETIC_SOCKET" \
	"$HERMETICD" --subtree "hmtest-$$-sa" --store "$T/store" --runtime-dir "$T/run-sa" \
	>"$T/sa.log" 2>&1 &
SA=$!
at_exit "kill $SA; wait $SA"
for _ in $(seq 200); do [ -S "$HERMETIC_SOCKET" ] && break; sleep 0.05; done
# The first connection starts the daemon; it queues until the daemon accepts.
if out=$(timeout 60 "$HERMETIC" status 2>&1) && printf '%s\n' "$out" | grep -q "cgroup/connect4 *active"; then
	pass "systemd-socket-activate --seqpacket starts the daemon and it answers"
else
	fail "systemd-socket-activate --seqpacket starts the daemon and it answers" "$(printf '%s' "$out" | tr '\n' '|') $(tr '\n' '|' <"$T/sa.log")"
fi
check "the activated daemon says the socket came from systemd" grep -q "ready: socket $HERMETIC_SOCKET (from systemd)" "$T/sa.log"
out=$(timeout 60 "$HERMETIC" enroll --clock off -- "$PY" "$T/probe.py" tcp "$NH_HOST" "$NH_TCP" 2>&1)
case "$out" in
*"ERR ENETUNREACH"*"refused 1 connection: $NH_HOST:$NH_TCP"*) pass "an enroll through the activated socket is refused the test host" ;;
*) fail "an enroll through the activated socket is refused the test host" "$(printf '%s' "$out" | tr '\n' '|')" ;;
esac
out=$(probe tcp "$NH_HOST" "$NH_TCP")
case "$out" in OK*) pass "outside the run the test host answers" ;;
*) fail "outside the run the test host answers" "$out" ;; esac
kill -TERM $SA
wait $SA
check "the activated daemon exits 0 on SIGTERM" test $? = 0
check "and leaves the passed socket's file to its owner" test -S "$HERMETIC_SOCKET"

# --- --delegated: a leaf for the daemon, the runs beside it ----------------
CGROOT=$(awk '$9 == "cgroup2" { print $5; exit }' /proc/self/mountinfo)
UNIT=$CGROOT/hmtest-$$-unit.service
mkdir "$UNIT"
at_exit "rmdir '$UNIT/daemon' '$UNIT'"
export HERMETIC_SOCKET=$T/dg.sock
# Started inside "the unit's cgroup", as systemd would start it.
sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$UNIT" "$HERMETICD" --delegated \
	--socket "$HERMETIC_SOCKET" --subtree "hmtest-$$-dg" --store "$T/store" --runtime-dir "$T/run-dg" \
	>"$T/dg.log" 2>&1 &
DG=$!
at_exit "kill $DG; wait $DG"
for _ in $(seq 400); do "$HERMETIC" status >/dev/null 2>&1 && break; sleep 0.05; done
check "--delegated: the daemon moved itself into the leaf 'daemon'" \
	grep -qx "0::${UNIT#"$CGROOT"}/daemon" /proc/$DG/cgroup
check "--delegated: no process is left in the delegated cgroup itself" test -z "$(cat "$UNIT/cgroup.procs")"
# The run's cgroup as the host sees it (inside, a root run sees its own
# cgroup namespace, 0::/), checked while the run waits on a FIFO.
mkfifo "$T/dg.hold"
timeout 60 "$HERMETIC" enroll --clock off -- sh -c "$PY $T/probe.py tcp $NH_HOST $NH_TCP; echo \$\$ \$HERMETIC_RUN >$T/dg.id; read x <$T/dg.hold" >"$T/dg.out" 2>&1 &
ep=$!
for _ in $(seq 400); do [ -s "$T/dg.id" ] && break; sleep 0.05; done
read -r dpid did <"$T/dg.id"
grep -qx "0::${UNIT#"$CGROOT"}/hmtest-$$-dg/run-$did" "/proc/$dpid/cgroup" 2>/dev/null && echo IN-RUN-DIR >>"$T/dg.where"
echo go >"$T/dg.hold"
wait $ep
out="$(cat "$T/dg.where" 2>/dev/null) $(cat "$T/dg.out")"
case "$out" in
*"IN-RUN-DIR"*"ERR ENETUNREACH"*) pass "--delegated: a run lives in <unit>/<subtree>/run-ID and is refused" ;;
*) fail "--delegated: a run lives in <unit>/<subtree>/run-ID and is refused" "$(printf '%s' "$out" | tr '\n' '|')" ;;
esac
kill -TERM $DG
wait $DG
check "--delegated: SIGTERM removes the subtree" test ! -e "$UNIT/hmtest-$$-dg"
"$HERMETICD" --delegated --socket "$T/x.sock" --subtree "hmtest-$$-x" --runtime-dir "$T/run-x" \
	>"$T/x.log" 2>&1 &
X=$!
wait $X
if [ $? != 0 ] && grep -q "not delegated" "$T/x.log"; then
	pass "--delegated refuses the root cgroup with a clear error"
else
	# The test itself may run in a non-root cgroup: then it is "delegated".
	grep -q "^0::/$" /proc/self/cgroup && fail "--delegated refuses the root cgroup" "$(cat "$T/x.log")" ||
		pass "--delegated refuses the root cgroup with a clear error (not in the root cgroup here)"
fi

# --- log lines carry priorities when stderr is the journal -----------------
: >"$T/j.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/j.log") "$HERMETICD" --socket "$T/j.sock" --subtree "hmtest-$$-j" \
	--store "$T/store" --runtime-dir "$T/run-j" --store-max-journals 0 2>>"$T/j.log"
JOURNAL_STREAM=$(stat -c '%d:%i' "$T/j.log") "$HERMETICD" --socket "$T/j.sock" --subtree "hmtest-$$-j" \
	--store "$T/store" --runtime-dir "$T/run-j" 2>>"$T/j.log" &
J=$!
at_exit "kill $J; wait $J"
for _ in $(seq 400); do grep -q "ready" "$T/j.log" && break; sleep 0.05; done
kill -TERM $J
wait $J
check "errors go to the journal at priority 3 (err)" grep -q '^<3>--store-max-journals' "$T/j.log"
check "information at priority 6 (info)" grep -q '^<6>ready: socket' "$T/j.log"
check "no line without a priority" sh -c "! grep -v '^<[0-7]>' '$T/j.log'"
check "by hand, lines say hermeticd:" grep -q '^hermeticd: ' "$T/x.log"

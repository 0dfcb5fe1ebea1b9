#!/usr/bin/env bash
# hermetic replay of a journal you did not record (issue 15, attack 8), and
# the network a journal may open (none beyond the replay's command line),
# through the real private daemon and a counting UDP server on a test host
# in a network namespace of this test (nethost.sh).
#
# "Another user's journal" is one recorded with another ledger
# (XDG_STATE_HOME): what a journal handed over from another account or
# machine is to this one, byte for byte.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/nethost.sh"
need_root "replay of a journal you did not record" || exit 0
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
H() { timeout -k 5 120 "$HERMETIC" "$@"; }
flat() { tr '\n' '|' <"$1" | tail -c 700; }
journal_in() { ls "$1"/*.hjournal 2>/dev/null | head -n 1; }
MINE=$T/state OTHER=$T/other-state

# The command a journal holds: leaves a marker, exits 3 (a failing run keeps
# its journal). As the other user, into its own directory.
XDG_STATE_HOME=$OTHER H enroll --record="$T/foreign" -- sh -c "touch $T/marker; exit 3" >/dev/null 2>"$T/rec.err"
FJ=$(journal_in "$T/foreign")
H enroll --record="$T/own" -- sh -c "touch $T/marker; exit 3" >/dev/null 2>&1
OJ=$(journal_in "$T/own")
if [ -z "$FJ" ] || [ -z "$OJ" ]; then
	fail "journals to replay are recorded" "$(flat "$T/rec.err")"
	exit 1
fi
grep -q "^[0-9a-f]\{64\} [0-9]* [0-9]* $OJ$" "$MINE/hermetic/recorded" 2>/dev/null &&
	! grep -q "$FJ" "$MINE/hermetic/recorded" && [ "$(stat -c %a "$MINE/hermetic/recorded")" = 600 ] &&
	pass "enroll --record notes the journal it keeps in the ledger (0600): its SHA-256, store id and path" ||
	fail "the ledger names the journal recorded" "$(cat "$MINE/hermetic/recorded" 2>&1 | tr '\n' '|')"

# Foreign, no terminal, no --yes: refused, exit 79, nothing run.
rm -f "$T/marker"
H replay "$FJ" </dev/null >/dev/null 2>"$T/f.err"
rc=$?
if [ $rc = 79 ] && [ ! -e "$T/marker" ] &&
	grep -q "^hermetic replay: journal '$FJ' was not recorded by you on this machine" "$T/f.err" &&
	grep -q "^  command: sh -c 'touch $T/marker; exit 3'$" "$T/f.err" &&
	grep -q "^  network: blocked; loopback open, unix sockets open$" "$T/f.err" &&
	grep -q "not run: no terminal to ask on; .* pass --yes to run it" "$T/f.err"; then
	pass "a journal you did not record, without a terminal or --yes: shown, refused (exit 79), nothing run"
else
	fail "a foreign journal without --yes is refused" "rc=$rc marker=$([ -e "$T/marker" ] && echo yes) $(flat "$T/f.err")"
fi
# The same by store id: the daemon's copy is the same bytes, just as foreign.
fid=$(sed -n 's/.*journal \([0-9]*\): .*/\1/p' "$T/rec.err" | head -1)
H replay "$fid" </dev/null >/dev/null 2>"$T/fs.err"
rc=$?
[ -n "$fid" ] && [ $rc = 79 ] && [ ! -e "$T/marker" ] &&
	pass "... the same journal fetched from the store by id: refused (79), nothing run" ||
	fail "a foreign journal by store id is refused" "id=$fid rc=$rc $(flat "$T/fs.err")"

# A crafted command cannot rewrite the screen: control characters are shown escaped.
XDG_STATE_HOME=$OTHER H enroll --record="$T/esc" -- sh -c $'exit 3 # \e[2K\rlooks harmless' >/dev/null 2>&1
H replay "$(journal_in "$T/esc")" </dev/null >/dev/null 2>"$T/esc.err"
rc=$?
if [ $rc = 79 ] && ! grep -q $'\e' "$T/esc.err" && grep -qF "command: sh -c 'exit 3 # \x1b[2K\x0dlooks harmless'" "$T/esc.err"; then
	pass "a journal's command is shown with its control characters escaped (no terminal sequence reaches the screen)"
else
	fail "control characters in a journal's command are escaped" "rc=$rc $(flat "$T/esc.err" | cat -v)"
fi

# --yes: it runs.
H replay --yes "$FJ" </dev/null >/dev/null 2>"$T/y.err"
rc=$?
[ $rc = 3 ] && [ -e "$T/marker" ] && grep -q "replay: running it (--yes)" "$T/y.err" &&
	pass "--yes runs a journal you did not record (after showing it)" ||
	fail "--yes runs a foreign journal" "rc=$rc $(flat "$T/y.err")"

# On a terminal: asks; 'n' refuses, 'y' runs.
cat >"$T/answer.py" <<'PY'
import os, pty, subprocess, sys, time
answer, argv = sys.argv[1].encode(), sys.argv[2:]
m, s = pty.openpty()
p = subprocess.Popen(argv, stdin=s, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
os.close(s)
err, deadline = b"", time.monotonic() + 100
while b"Run it? [y/N] " not in err and time.monotonic() < deadline:
    chunk = os.read(p.stderr.fileno(), 4096)
    if not chunk:
        break
    err += chunk
os.write(m, answer + b"\n")
err += p.stderr.read()
rc = p.wait()
sys.stdout.write("RC %d\n" % rc + err.decode(errors="replace"))
PY
rm -f "$T/marker"
out=$(timeout 150 "$PY" "$T/answer.py" n "$HERMETIC" replay "$FJ")
[[ "$out" == "RC 79"* ]] && [ ! -e "$T/marker" ] && grep -q "Run it? \[y/N\]" <<<"$out" &&
	pass "on a terminal it asks; 'n' runs nothing (exit 79)" || fail "a terminal, answer n" "$(tr '\n' '|' <<<"$out")"
out=$(timeout 150 "$PY" "$T/answer.py" y "$HERMETIC" replay "$FJ")
[[ "$out" == "RC 3"* ]] && [ -e "$T/marker" ] && pass "on a terminal, 'y' runs it" ||
	fail "a terminal, answer y" "$(tr '\n' '|' <<<"$out")"

# A journal another user really recorded (a user of this test, --no-daemon
# into a directory of its own): foreign to root, refused, nothing run. Its
# ledger cannot be written here (no home): it says so and keeps the journal.
if test_user U; then
	mkdir -m 1777 "$T/uj"
	as_user "$U" env XDG_STATE_HOME=/nonexistent "$HERMETIC" enroll --no-daemon --record="$T/uj" -- \
		sh -c "touch $T/uj/marker; exit 3" >/dev/null 2>"$T/u.err" </dev/null
	UJ=$(journal_in "$T/uj")
	rm -f "$T/uj/marker"
	H replay "$UJ" </dev/null >/dev/null 2>"$T/ur.err"
	rc=$?
	if [ -n "$UJ" ] && grep -q "Failed to note the journal as yours in /nonexistent/hermetic/recorded" "$T/u.err" &&
		[ $rc = 79 ] && [ ! -e "$T/uj/marker" ] && grep -q "it says uid $(id -u "$U")," "$T/ur.err" &&
		grep -q "not taken from the journal: --no-daemon" "$T/ur.err"; then
		pass "a journal another user recorded: refused for root without --yes (79), nothing run; its --no-daemon not taken"
	else
		fail "another user's journal" "rc=$rc $(flat "$T/u.err") $(flat "$T/ur.err")"
	fi
	# ... and the other way: root's journal, handed to the unprivileged user
	# (its command given after '--': a marker the user can create)
	install -m 644 "$OJ" "$T/uj/roots.hjournal"
	ureplay() {
		as_user "$U" env XDG_STATE_HOME=/nonexistent "$HERMETIC" replay --no-daemon "$@" "$T/uj/roots.hjournal" \
			--no-strict -- sh -c "touch $T/uj/rmark" </dev/null >/dev/null 2>"$T/ru.err"
	}
	ureplay
	rc=$?
	[ ! -e "$T/uj/rmark" ] && ureplay --yes
	rc_yes=$?
	[ $rc = 79 ] && grep -q "it says uid 0," "$T/ru.err" && [ $rc_yes = 0 ] && [ -e "$T/uj/rmark" ] &&
		pass "root's journal handed to an unprivileged user: refused for it too (79), nothing run; with --yes it runs" ||
		fail "root's journal replayed by a user" "rc=$rc rc_yes=$rc_yes $(flat "$T/ru.err")"
else
	fail "a test user" "useradd failed"
fi

# Your own journal: no question, even without a terminal (by file and by id).
rm -f "$T/marker"
H replay "$OJ" </dev/null >/dev/null 2>"$T/o.err"
rc=$?
[ $rc = 3 ] && [ -e "$T/marker" ] && ! grep -q "not recorded by you" "$T/o.err" &&
	pass "a journal you recorded here replays without asking" || fail "own journal replays" "rc=$rc $(flat "$T/o.err")"

# --- the network: a journal opens nothing the replay's command line does not ---
# The probe's marker comes from the environment (replay keeps it): each
# replay sends its own datagram to the counting server. A refusal is any
# error (its errno is enroll's business); what counts is what arrives.
sent() { grep -q "^$1 from" "$NH_UDPLOG"; }
# After a replay: a datagram sent from outside arrives, so one the replay
# had sent would be there by now.
settle() {
	local i
	"$PY" "$T/probe.py" udp "$NH_HOST" "$NH_UDP" "ctl-$1" >/dev/null
	for i in $(seq 100); do sent "ctl-$1" && return 0; sleep 0.1; done
	return 1
}
PROBE="$PY $T/probe.py"
MARK=recorded-$$ H enroll --network off --record="$T/net" --keep-passing -- \
	sh -c "$PROBE udp $NH_HOST $NH_UDP \"\$MARK\"; $PROBE tcp $NH_HOST $NH_TCP" >"$T/netrec.out" 2>"$T/netrec.err" </dev/null
NJ=$(journal_in "$T/net")
settle rec1 && sent "recorded-$$" && [ -n "$NJ" ] ||
	fail "a run recorded with --network off reaches the test host" "$(flat "$T/netrec.out") $(flat "$T/netrec.err")"
MARK=rep-default-$$ H replay "$NJ" >"$T/n1.out" 2>"$T/n1.err" </dev/null
settle n1
if ! sent "rep-default-$$" && [ "$(grep -c "^ERR [A-Z]" "$T/n1.out")" = 2 ] &&
	grep -q "replay: not taken from the journal: --network=off" "$T/n1.err"; then
	pass "a journal recorded with --network off replays blocked: the test host receives nothing, and stderr says so"
else
	fail "--network off journal replays blocked" "sent=$(sent "rep-default-$$" && echo yes) $(flat "$T/n1.out") $(flat "$T/n1.err")"
fi
MARK=rep-off-$$ H replay "$NJ" --network off >"$T/n2.out" 2>"$T/n2.err" </dev/null
settle n2
sent "rep-off-$$" && grep -q "^OK hermetic-tcp-ok" "$T/n2.out" &&
	pass "... replay --network off opens it (the datagram and the connection arrive)" ||
	fail "replay --network off opens the network" "$(flat "$T/n2.out") $(flat "$T/n2.err")"
MARK=rep-jp-$$ H replay --journal-policy "$NJ" >"$T/n3.out" 2>"$T/n3.err" </dev/null
settle n3
sent "rep-jp-$$" && pass "... replay --journal-policy takes the journal's --network off" ||
	fail "replay --journal-policy" "$(flat "$T/n3.out") $(flat "$T/n3.err")"

# --network audit (lets through what block refuses): not taken either.
MARK=audit-rec-$$ H enroll --network audit --record="$T/audit" --keep-passing -- \
	sh -c "$PROBE udp $NH_HOST $NH_UDP \"\$MARK\"" >/dev/null 2>&1 </dev/null
UJA=$(journal_in "$T/audit")
MARK=audit-default-$$ H replay "$UJA" >"$T/au1.out" 2>"$T/au1.err" </dev/null
MARK=audit-given-$$ H replay "$UJA" --network audit >/dev/null 2>&1 </dev/null
settle au
if [ -n "$UJA" ] && sent "audit-rec-$$" && ! sent "audit-default-$$" && grep -q "^ERR [A-Z]" "$T/au1.out" &&
	grep -q "not taken from the journal: --network=audit" "$T/au1.err" && sent "audit-given-$$"; then
	pass "a journal recorded with --network audit replays blocked (nothing arrives) unless the replay says --network audit"
else
	fail "a --network audit journal" "$(flat "$T/au1.out") $(flat "$T/au1.err")"
fi

# --allow HOST:PORT in the journal: not taken unless given again.
H enroll --allow "$NH_HOST:$NH_UDP" --record="$T/allow" --keep-passing -- \
	sh -c "$PROBE udp $NH_HOST $NH_UDP \"\$MARK\"" >/dev/null 2>&1 </dev/null
AJ=$(journal_in "$T/allow")
MARK=allow-default-$$ H replay "$AJ" >"$T/a1.out" 2>"$T/a1.err" </dev/null
MARK=allow-given-$$ H replay "$AJ" --allow "$NH_HOST:$NH_UDP" >"$T/a2.out" 2>"$T/a2.err" </dev/null
settle a
if [ -n "$AJ" ] && ! sent "allow-default-$$" && grep -q "^ERR [A-Z]" "$T/a1.out" &&
	grep -q "not taken from the journal: --allow=$NH_HOST:$NH_UDP" "$T/a1.err" && sent "allow-given-$$"; then
	pass "a journal's --allow is not taken (nothing arrives) unless the replay says --allow itself (then it arrives)"
else
	fail "a journal's --allow" "$(flat "$T/a1.out") $(flat "$T/a1.err") / $(flat "$T/a2.out") $(flat "$T/a2.err")"
fi

# Past 1 MiB the ledger keeps its newer half: the oldest journals ask again.
$PY -c 'import sys
with open(sys.argv[1], "a") as f:
    for i in range(20000):
        f.write("%064x 1 - /nowhere/%d.hjournal\n" % (i, i))' "$MINE/hermetic/recorded"
H enroll --record="$T/late" -- sh -c "exit 3" >/dev/null 2>&1
LJ=$(journal_in "$T/late")
size=$(stat -c %s "$MINE/hermetic/recorded")
H replay "$OJ" </dev/null >/dev/null 2>&1
rc_old=$?
if [ -n "$LJ" ] && ((size < 1048576)) && grep -q " $LJ$" "$MINE/hermetic/recorded" && [ $rc_old = 79 ] &&
	[ "$(stat -c %a "$MINE/hermetic/recorded")" = 600 ]; then
	pass "past 1 MiB the ledger keeps its newer half ($size bytes): the new journal is in, the oldest asks again"
else
	fail "the ledger is bounded" "size=$size rc_old=$rc_old $(tail -2 "$MINE/hermetic/recorded" | tr '\n' '|')"
fi

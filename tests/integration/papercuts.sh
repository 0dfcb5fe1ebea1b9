# The small things a team trying hermetic hits first (issue 19, item 7):
# each case here failed before its fix.
source "$(dirname "$0")/../lib.sh"
need_root papercuts || exit 0
source "$(dirname "$0")/nethost.sh"
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
test_user UA || { fail "test user" "useradd failed"; exit 1; }
test_user UB || { fail "test user" "useradd failed"; exit 1; }
start_daemon || { fail "daemon starts" "see above"; exit 1; }
chmod 755 "$T"
cd "$T"

# The refusal summary keeps the process name when a destination was refused
# more than once ("198.18.123.2:8080 ( x3) x3" before).
"$HERMETIC" enroll -- sh -c "for i in 1 2 3; do '$PY' '$T/probe.py' tcp $NH_HOST $NH_TCP; done" >/dev/null 2>"$T/ref.err"
if grep -q "refused 3 connections: $NH_HOST:$NH_TCP (python3) x3\$" "$T/ref.err"; then
	pass "refusal summary: one destination refused 3 times keeps its process name and count"
else
	fail "refusal summary: process name and count" "$(grep refused "$T/ref.err" | tr '\n' '|')"
fi

# A refused name lookup gets a line like a refused connect, and the report counts it.
"$HERMETIC" enroll --report "$T/dns.jsonl" -- "$PY" -c '
import socket
for n in ["no-such-name.invalid", "no-such-name.invalid", "second.invalid", "localhost"]:
    try:
        socket.getaddrinfo(n, 80)
    except OSError:
        pass
' >/dev/null 2>"$T/dns.err"
rc=$?
dns=$("$PY" -c 'import json,sys; d=json.loads(open(sys.argv[1]).readline())["dns_refusals"]; print(d["count"], d["names"])' "$T/dns.jsonl" 2>&1)
if [ $rc = 0 ] && grep -q "^hermetic: refused 3 DNS lookups (not in /etc/hosts; --allow HOST:PORT lets a name through): no-such-name.invalid, second.invalid\$" "$T/dns.err" &&
	[ "$dns" = "3 ['no-such-name.invalid', 'second.invalid']" ]; then
	pass "refused DNS lookups: a 'hermetic: refused 3 DNS lookups' line naming them, and dns_refusals in --report"
else
	fail "refused DNS lookups: a line and dns_refusals" "rc=$rc $dns $(tr '\n' '|' <"$T/dns.err")"
fi
"$HERMETIC" enroll -- "$PY" -c 'import socket; socket.getaddrinfo("localhost", 80)' >/dev/null 2>"$T/dns0.err"
if ! grep -q "DNS" "$T/dns0.err"; then pass "a lookup /etc/hosts answers gets no DNS line"; else fail "a lookup /etc/hosts answers gets no DNS line" "$(tr '\n' '|' <"$T/dns0.err")"; fi

# --allow with a URL names the HOST:PORT form (and the URL's host and port).
"$HERMETIC" enroll --allow http://example.com/index.html -- true >/dev/null 2>"$T/url.err"
rc=$?
if [ $rc = 2 ] && grep -q "^hermetic enroll: --allow http://example.com/index.html: a URL; --allow takes HOST:PORT, here --allow example.com:80\$" "$T/url.err"; then
	pass "--allow http://host/...: exit 2 naming the HOST:PORT form, --allow example.com:80"
else
	fail "--allow http://host: names the HOST:PORT form" "rc=$rc $(tr '\n' '|' <"$T/url.err")"
fi

# A nested enroll refuses (77), and the run's own enroll offers no repro
# line for that refusal (repeating it would refuse again).
"$HERMETIC" enroll -- sh -c "'$HERMETIC' enroll -- true" >/dev/null 2>"$T/nest.err"
rc=$?
if [ $rc = 77 ] && grep -q "already inside hermetic run" "$T/nest.err" && ! grep -q "reproduce with" "$T/nest.err" &&
	grep -q "a hermetic enroll inside the run refused to" "$T/nest.err"; then
	pass "nested enroll: exit 77, and no repro line for its refusal"
else
	fail "nested enroll: no repro line for its refusal" "rc=$rc $(tr '\n' '|' <"$T/nest.err")"
fi
# ... while a command that exits 77 itself still gets one.
"$HERMETIC" enroll -- sh -c 'exit 77' >/dev/null 2>"$T/77.err"
if [ $? = 77 ] && grep -q "reproduce with" "$T/77.err"; then pass "a command's own exit 77 still gets its repro line"; else fail "a command's own exit 77 still gets its repro line" "$(tr '\n' '|' <"$T/77.err")"; fi

# STATUS: a user sees its own runs, not another user's ids and labels.
as_user "$UA" "$HERMETIC" enroll --clock off -- sleep 60 >/dev/null 2>&1 &
ua=$!
at_exit "kill $ua"
for _ in $(seq 300); do "$HERMETIC" status 2>/dev/null | grep -q ': sleep$' && break; sleep 0.1; done
as_user "$UB" "$HERMETIC" status >"$T/st.b" 2>&1
as_user "$UA" "$HERMETIC" status >"$T/st.a" 2>&1
"$HERMETIC" status >"$T/st.root" 2>&1
as_user "$UB" "$HERMETIC" status --json >"$T/st.bj" 2>&1
bj=$("$PY" -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["runs"]), d["runs_of_others"])' "$T/st.bj" 2>&1)
if grep -q "^active runs: 0 of yours, and 1 of other users\$" "$T/st.b" && ! grep -q "sleep" "$T/st.b" && [ "$bj" = "0 1" ] &&
	grep -q ": sleep\$" "$T/st.a" && grep -q "^active runs: 1\$" "$T/st.a" && grep -q ": sleep\$" "$T/st.root"; then
	pass "status: another user sees how many runs others have, not their ids and labels; the owner and root see the run"
else
	fail "status: only the caller's own runs" "B: $(tr '\n' '|' <"$T/st.b" | tail -c 300) json=$bj A: $(grep -c sleep "$T/st.a") root: $(grep -c sleep "$T/st.root")"
fi
kill $ua 2>/dev/null
wait $ua 2>/dev/null || true

# journals show of a many-scope run: the failed scope first, at most 20 of
# the others, and one line for the continuations without streams.
cat >"$T/scopes.sh" <<'X'
for i in $(seq 1 30); do
	st=passed; [ $i = 17 ] && st=failed
	exec 3<"/dev/hermetic/scope/enter?name=test_$i"
	head -c 4 /dev/urandom >/dev/null
	exec 3<"/dev/hermetic/scope/leave?status=$st"
done
exit 1
X
"$HERMETIC" enroll --record="$T/jall" -- bash "$T/scopes.sh" >/dev/null 2>"$T/sc.err"
"$HERMETIC" journals show "$T"/jall/*.hjournal >"$T/show" 2>&1
first=$(grep -m1 '^scope ' "$T/show")
if grep -qx 'scopes     30: 1 failed, 29 passed' "$T/show" && [[ $first == "scope      test_17: failed,"* ]] &&
	[ "$(grep -c '^scope ' "$T/show")" = 21 ] && grep -q "^           ... and 9 more that did not fail" "$T/show" &&
	[ "$(grep -c '^continued ' "$T/show")" -le 1 ] && ! grep -q '^continued .*: 0 streams' "$T/show"; then
	pass "journals show of a 30-scope run: a count, the failed scope first, 20 others, continuations without streams in one line"
else
	fail "journals show of a many-scope run" "$(grep -E '^(scope|continued)' "$T/show" | head -n 4 | tr '\n' '|') $(grep -c '^continued' "$T/show") continued"
fi
# A journal of one scope, recorded through the daemon, says why it has no
# kernel stream (not "recorded without hermeticd?").
"$HERMETIC" enroll --record="$T/jscope" --journal-per-scope -- bash "$T/scopes.sh" >/dev/null 2>"$T/ps.err"
"$HERMETIC" journals show "$T"/jscope/*.hjournal >"$T/show1" 2>&1
if [ "$(ls "$T"/jscope/*.hjournal | wc -l)" = 1 ] &&
	grep -q "^kernel .*none in a journal of scopes only (--journal-per-scope: the kernel's stream is the whole run's)" "$T/show1" &&
	! grep -q "without hermeticd" "$T/show1"; then
	pass "a per-scope journal recorded through hermeticd says why it holds no kernel stream"
else
	fail "a per-scope journal says why it holds no kernel stream" "$(grep '^kernel' "$T/show1" | tr '\n' '|')"
fi
"$HERMETIC" enroll --no-daemon --record="$T/jnod" -- sh -c 'exit 1' >/dev/null 2>&1
"$HERMETIC" journals show "$T"/jnod/*.hjournal >"$T/show2" 2>&1
check "a --no-daemon journal says it was recorded with --no-daemon" grep -q "^kernel .*recorded with --no-daemon" "$T/show2"

# (many bpffs mounts on the host: confine_mounts.sh)

# enroll finds CMD on PATH itself (engine/launch.c exec_searched): one execve,
# not one supervisor stop per PATH entry before the one that has it; and a
# script without #! still runs under /bin/sh, a file not executable exits
# 126, a missing one 127, as execvp's own search gave.
mkdir -p "$T/p1" "$T/p2" "$T/p3" "$T/pbin"
printf 'echo script-ran\n' >"$T/pbin/hm-noshebang" && chmod 755 "$T/pbin/hm-noshebang"
printf 'echo x\n' >"$T/pbin/hm-noexec" && chmod 644 "$T/pbin/hm-noexec"
P="$T/p1:$T/p2:$T/p3:$T/pbin:$PATH"
PATH=$P strace -f -qq -e trace=execve -e signal=none -o "$T/ex.st" "$HERMETIC" enroll -- true 2>/dev/null
ex=$(grep -c 'execve(' "$T/ex.st")
out=$(PATH=$P "$HERMETIC" enroll -- hm-noshebang 2>/dev/null)
PATH=$P "$HERMETIC" enroll -- hm-noexec >/dev/null 2>&1
r126=$?
PATH=$P "$HERMETIC" enroll -- hm-missing >/dev/null 2>&1
r127=$?
if [ "$ex" = 2 ] && [ "$out" = script-ran ] && [ "$r126" = 126 ] && [ "$r127" = 127 ]; then
	pass "CMD is found on PATH with one execve; scripts without #!, 126 and 127 as before"
else
	fail "CMD is found on PATH with one execve; scripts without #!, 126 and 127 as before" \
		"execve $ex (want 2: enroll, true), script '$out', not executable $r126, missing $r127"
fi

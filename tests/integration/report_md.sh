# hermetic's own failures get a --report line (hermetic_error, with the
# reason), so a CI step tells them from a command's own 69 or 70; and
# 'hermetic report --markdown' turns a report into the job summary table.
source "$(dirname "$0")/../lib.sh"
need_root report_md || exit 0
source "$(dirname "$0")/nethost.sh"
nethost_up || { fail "test host in a network namespace" "nethost_up failed"; exit 1; }
cd "$T"
R=$T/r.jsonl

# jqpy FILE LINE EXPR: EXPR (Python, the line's document as d) of line LINE.
jqpy() { "$PY" -c 'import json,sys; d=json.loads(open(sys.argv[1]).read().splitlines()[int(sys.argv[2])]); print(eval(sys.argv[3]))' "$@"; }

# --- hermetic's own failures: a line each ------------------------------------------------
HERMETIC_SOCKET=$T/none.sock "$HERMETIC" enroll --report "$R" -- true 2>"$T/e69"
rc=$?
out=$(jqpy "$R" 0 '(d["exit_status"], d["passed"], d["hermetic_error"]["reason"], d["hermetic_error"]["exit_status"], "none.sock" in d["hermetic_error"]["message"], d["command"], d["repro"] is not None)' 2>&1)
if [ $rc = 69 ] && [ "$out" = "(69, False, 'no_daemon', 69, True, ['true'], True)" ]; then
	pass "no daemon: exit 69 and a --report line with hermetic_error no_daemon and the message"
else
	fail "no daemon: exit 69 and a --report line" "rc=$rc $out"
fi

test_user U || { fail "test user" "useradd failed"; exit 1; }
start_daemon --max-runs-per-user 1 || { fail "daemon starts" "see above"; exit 1; }
chmod 777 "$T"
as_user "$U" "$HERMETIC" enroll --clock off -- sleep 60 >/dev/null 2>&1 &
holder=$!
at_exit "kill $holder"
for _ in $(seq 200); do "$HERMETIC" status 2>/dev/null | grep -q sleep && break; sleep 0.1; done
as_user "$U" "$HERMETIC" enroll --report "$T/u.jsonl" -- true 2>"$T/e70"
rc=$?
out=$(jqpy "$T/u.jsonl" 0 '(d["exit_status"], d["hermetic_error"]["reason"], "limit of 1 runs" in d["hermetic_error"]["message"])' 2>&1)
if [ $rc = 70 ] && [ "$out" = "(70, 'refused', True)" ] && grep -q "is at its limit of 1 runs (hermeticd --max-runs-per-user)" "$T/e70"; then
	pass "a run hermeticd refuses (the user's run limit): exit 70, the limit named, a --report line with reason refused"
else
	fail "a run hermeticd refuses: exit 70 and a --report line" "rc=$rc $out $(tr '\n' '|' <"$T/e70")"
fi
kill $holder 2>/dev/null
wait $holder 2>/dev/null

# A command that exits 69 itself: its line has hermetic_error null.
"$HERMETIC" enroll --report "$R" -- sh -c 'exit 69' 2>/dev/null
rc=$?
out=$(jqpy "$R" 1 '(d["exit_status"], d["hermetic_error"], d["run_id"] is not None)' 2>&1)
if [ $rc = 69 ] && [ "$out" = "(69, None, True)" ]; then
	pass "a command's own exit 69: the same status, told apart by hermetic_error null"
else
	fail "a command's own exit 69: hermetic_error null" "rc=$rc $out"
fi
# A command that cannot be found: 127, reason command_not_found.
"$HERMETIC" enroll --report "$R" -- "$T/no-such-command" 2>/dev/null
rc=$?
out=$(jqpy "$R" 2 '(d["exit_status"], d["hermetic_error"]["reason"])' 2>&1)
if [ $rc = 127 ] && [ "$out" = "(127, 'command_not_found')" ]; then
	pass "a command that does not exist: exit 127 and a --report line with reason command_not_found"
else
	fail "a command that does not exist: a --report line" "rc=$rc $out"
fi
# A command that is not executable (a directory): 126, reason cannot_execute.
"$HERMETIC" enroll --report "$T/x.jsonl" -- "$T" 2>/dev/null
rc=$?
out=$(jqpy "$T/x.jsonl" 0 '(d["exit_status"], d["hermetic_error"]["reason"], d["hermetic_error"]["exit_status"])' 2>&1)
if [ $rc = 126 ] && [ "$out" = "(126, 'cannot_execute', 126)" ]; then
	pass "a command that cannot be executed: exit 126 and a --report line with reason cannot_execute"
else
	fail "a command that cannot be executed: a --report line" "rc=$rc $out"
fi
# An output that cannot be opened gets no line: --connections into a
# missing directory fails with 73 before the run, the report untouched.
echo '{"earlier": "run"}' >"$T/c73.jsonl"
"$HERMETIC" enroll --report "$T/c73.jsonl" --connections "$T/no/such/dir/c.jsonl" -- true 2>"$T/e73"
rc=$?
if [ $rc = 73 ] && [ "$(cat "$T/c73.jsonl")" = '{"earlier": "run"}' ] && [ "$(grep -c "^hermetic: --connections: cannot open" "$T/e73")" = 1 ]; then
	pass "--connections that cannot be opened: exit 73, said once, and no --report line"
else
	fail "--connections that cannot be opened: no --report line" "rc=$rc $(cat "$T/c73.jsonl") $(tr '\n' '|' <"$T/e73")"
fi
# Nested: exit 77, a line from the inner enroll.
"$HERMETIC" enroll -- "$HERMETIC" enroll --report "$T/n.jsonl" -- true 2>"$T/e77"
rc=$?
out=$(jqpy "$T/n.jsonl" 0 '(d["exit_status"], d["hermetic_error"]["reason"])' 2>&1)
if [ $rc = 77 ] && [ "$out" = "(77, 'nested')" ]; then
	pass "enroll inside a run: exit 77 and a --report line with reason nested"
else
	fail "enroll inside a run: a --report line" "rc=$rc $out $(tr '\n' '|' <"$T/e77")"
fi

# --- report --markdown --------------------------------------------------------------------
"$HERMETIC" enroll --seed 5 --report "$R" -- true 2>/dev/null
"$HERMETIC" enroll --seed 6 --report "$R" -- sh -c "'$PY' '$T/probe.py' tcp $NH_HOST $NH_TCP; '$PY' -c 'import socket
try: socket.getaddrinfo(\"pypi.invalid\", 443)
except OSError: pass'; echo a | cat >/dev/null; exit 3" >/dev/null 2>&1
"$HERMETIC" report --markdown "$R" >"$T/md" 2>"$T/md.err"
rc=$?
"$PY" - "$T/md" "$NH_HOST:$NH_TCP" >"$T/md.check" 2>&1 <<'EOF'
import re, sys
md = open(sys.argv[1]).read().splitlines()
def check(ok, name, why=""):
    print(("PASS %s" % name) if ok else ("FAIL %s: %s" % (name, why)))
check(md[0] == "### hermetic: 5 runs, 2 failed, 2 hermetic errors", "report --markdown: the heading counts runs, failures and hermetic's errors", md[0])
rows = [l for l in md if l.startswith("| ")]
cells = [re.split(r"(?<!\\)\|", l)[1:-1] for l in rows]
check(len(rows) == 6 and all(len(c) == 6 for c in cells) and md[md.index(rows[0]) + 1] == "|---|---|---|---|---|---|",
      "report --markdown: a header and one row per run, six cells each (pipes in cells escaped)", rows)
res = [c[0].strip() for c in cells[1:]]
check(res == ["**hermetic error**"] * 2 + ["**failed**"] * 2 + ["passed"],
      "report --markdown: hermetic's errors first, then failures, then passes", res)
check("no_daemon: cannot reach hermeticd" in cells[1][3] and "command_not_found" in cells[2][3],
      "report --markdown: an error's row has its reason and message", cells[1][3])
ref = [c for c in cells if "exit 3" in c[1]]
check(len(ref) == 1 and ref[0][2].strip() == "3" and ("1: %s (python3)" % sys.argv[2]) in ref[0][3] and
      "1 DNS lookup: pypi.invalid" in ref[0][3] and "echo a \\| cat" in ref[0][1] and ref[0][5].strip().startswith("` hermetic enroll --seed 6 --now"),
      "report --markdown: a refused run's row: exit 3, the refused destination with its process, the refused lookup, its repeat line", ref)
EOF
if [ $rc = 0 ]; then grep -E '^(PASS|FAIL) ' "$T/md.check" || fail "report --markdown checks" "$(tail -n 3 "$T/md.check" | tr '\n' '|')"
else fail "report --markdown exits 0" "rc=$rc $(tr '\n' '|' <"$T/md.err")"; fi

"$HERMETIC" report --markdown --max-rows 2 "$R" >"$T/md2"
check "report --max-rows 2: two rows and the rest counted" sh -c "test \$(grep -c '^| \*\*' '$T/md2') = 2 && grep -q '^3 more runs not shown' '$T/md2'"
cat "$R" | "$HERMETIC" report --markdown - >"$T/md3"
check "report --markdown - reads standard input" cmp "$T/md" "$T/md3"
: >"$T/empty.jsonl"
"$HERMETIC" report --markdown "$T/empty.jsonl" >"$T/md4"
check "an empty report: a heading and 'No runs reported.'" grep -qx 'No runs reported.' "$T/md4"
echo '{"not": "a report"}' >"$T/bad.jsonl"
"$HERMETIC" report --markdown "$T/bad.jsonl" >/dev/null 2>"$T/bad.err"
rc=$?
check "a line that is not a report document: exit 65 naming the line" sh -c "test $rc = 65 && grep -q 'bad.jsonl:1: not a line' '$T/bad.err'"
"$HERMETIC" report --markdown "$T/missing.jsonl" >/dev/null 2>&1
check "a missing report file: exit 66" test $? = 66
"$HERMETIC" report "$R" >/dev/null 2>&1
check "report without --markdown: exit 2" test $? = 2

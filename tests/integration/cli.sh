# Option parsing of the CLI: bad values give a clear error and exit 2;
# --help names every option the parser accepts; exit codes are distinct.
source "$(dirname "$0")/../lib.sh"

bad() { # bad NAME EXPECTED_TEXT ARGS...
	local name=$1 text=$2 rc
	shift 2
	"$HERMETIC" enroll "$@" -- true >"$T/out" 2>"$T/err"
	rc=$?
	if [ $rc = 2 ] && grep -q -- "$text" "$T/err" && grep -q "Try 'hermetic enroll --help'" "$T/err"; then
		pass "$name"
	else
		fail "$name" "rc=$rc $(tr '\n' '|' <"$T/err")"
	fi
}
bad "bad --seed" "--seed abc: expected an unsigned 64-bit integer" --seed abc
bad "negative --seed" "--seed -5" --seed -5
bad "bad --now" "--now yesterday: expected ISO 8601" --now yesterday
bad "--now without zone" "--now 2020-01-01T00:00:00: expected" --now 2020-01-01T00:00:00
bad "bad --tick" "--tick 5parsecs: expected a duration" --tick 5parsecs
bad "bad --clock" "--clock frozen: expected 'virtual' or 'off'" --clock frozen
bad "bad --rng" "--rng some: expected 'all' or 'off'" --rng some
bad "bad --spin-limit" "--spin-limit many" --spin-limit many
bad "bad --aslr" "--aslr maybe" --aslr maybe
bad "bad --network" "--network open: expected 'block', 'audit' or 'off'" --network open
bad "bad --grace" "--grace soon" --grace soon
bad "bad --allow port" "--allow 127.0.0.1:99999: port must be 1-65535" --allow 127.0.0.1:99999
bad "bad --allow bracket" "--allow \[::1: expected \[IPV6\]:PORT" --allow '[::1'
bad "unknown option" "unknown option '--colour'" --colour
"$HERMETIC" enroll --seed >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q "option '--seed' needs a value" "$T/err"; then pass "missing value"; else fail "missing value" "$(tr '\n' '|' <"$T/err")"; fi
bad "--allow with --network off" "need --network block" --network off --allow 127.0.0.1

"$HERMETIC" enroll >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q "no command given" "$T/err"; then pass "no command: exit 2"; else fail "no command: exit 2"; fi
"$HERMETIC" frobnicate >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q "unknown command 'frobnicate'" "$T/err"; then pass "unknown verb: exit 2"; else fail "unknown verb: exit 2"; fi

# --help is true: every long option of the parser is documented, and every
# documented option is accepted.
"$HERMETIC" enroll --help >"$T/help" 2>&1
check "enroll --help exits 0" test -s "$T/help"
src_opts=$(sed -n '/static const struct option opts\[\]/,/{}/p' "$TOP/cli/enroll_opts.c" | grep -o '{ "[a-z-]*"' | tr -d '{" ' | sort -u)
help_opts=$(grep -o -- '--[a-z][a-z-]*' "$T/help" | sed 's/^--//' | sort -u)
missing=$(comm -23 <(echo "$src_opts") <(echo "$help_opts"))
extra=$(comm -13 <(echo "$src_opts") <(echo "$help_opts"))
if [ -z "$missing" ]; then pass "--help documents every option"; else fail "--help documents every option" "missing: $missing"; fi
if [ -z "$extra" ]; then pass "--help documents no option that does not exist"; else fail "--help documents no option that does not exist" "extra: $extra"; fi
for o in $(echo "$src_opts" | grep -vx help); do
	grep -q -- "--$o" "$TOP/docs/hermetic.1" || grep -q -- "\\\\-\\\\-$(echo "$o" | sed 's/-/\\\\-/g')" "$TOP/docs/hermetic.1" || echo "$o"
done >"$T/man_missing"
if [ ! -s "$T/man_missing" ]; then pass "man page documents every enroll option"; else fail "man page documents every enroll option" "missing: $(tr '\n' ' ' <"$T/man_missing")"; fi

# No daemon: exit 69 and the message says how to start one.
HERMETIC_SOCKET=$T/none.sock "$HERMETIC" enroll -- true >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 69 ] && grep -q "$T/none.sock" "$T/err" && grep -q "hermeticd" "$T/err"; then
	pass "no daemon: exit 69 naming the socket"
else
	fail "no daemon: exit 69 naming the socket" "rc=$rc $(tr '\n' '|' <"$T/err")"
fi
HERMETIC_SOCKET=$T/none.sock "$HERMETIC" status >"$T/out" 2>"$T/err"
[ $? = 69 ] && pass "status without daemon: exit 69" || fail "status without daemon: exit 69"

# Inside a run (HERMETIC_RUN set), enroll refuses with 77.
HERMETIC_RUN=123 "$HERMETIC" enroll --no-daemon -- true >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 77 ] && grep -q "already inside hermetic run 123" "$T/err"; then pass "nested enroll: exit 77"; else fail "nested enroll: exit 77" "rc=$rc"; fi

# One wording for option errors in every command, help for a command, and a
# suggestion for a near miss.
"$HERMETIC" status -v >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -qx "hermetic status: unknown option '-v'" "$T/err" && grep -qx "Try 'hermetic status --help'." "$T/err" &&
	! grep -q "invalid option" "$T/err"; then
	pass "status -v: 'unknown option', as enroll says it"
else
	fail "status -v: 'unknown option', as enroll says it" "rc=$rc $(tr '\n' '|' <"$T/err")"
fi
"$HERMETIC" enroll -v true >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -qx "hermetic enroll: unknown option '-v'" "$T/err"; then
	pass "enroll -v: 'unknown option' (not 'needs a value')"
else
	fail "enroll -v: 'unknown option'" "rc=$rc $(tr '\n' '|' <"$T/err")"
fi
"$HERMETIC" journals list --dir >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -qx "hermetic journals list: option '--dir' needs a value" "$T/err"; then
	pass "journals list --dir: 'needs a value', in enroll's wording"
else
	fail "journals list --dir: 'needs a value'" "rc=$rc $(tr '\n' '|' <"$T/err")"
fi
"$HERMETIC" help enroll >"$T/help_enroll" 2>&1
rc=$?
if [ $rc = 0 ] && cmp -s "$T/help_enroll" "$T/help"; then
	pass "hermetic help enroll prints enroll's help"
else
	fail "hermetic help enroll prints enroll's help" "rc=$rc $(head -n 2 "$T/help_enroll" | tr '\n' '|')"
fi
"$HERMETIC" enrol -- true >"$T/out" 2>"$T/err"
rc=$?
if [ $rc = 2 ] && grep -q "unknown command 'enrol'; did you mean 'enroll'?" "$T/err"; then
	pass "'enrol' suggests 'enroll'"
else
	fail "'enrol' suggests 'enroll'" "rc=$rc $(tr '\n' '|' <"$T/err")"
fi
"$HERMETIC" journals lsit >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -q "did you mean 'list'?" "$T/err"; then pass "'journals lsit' suggests 'list'"; else fail "'journals lsit' suggests 'list'" "$(tr '\n' '|' <"$T/err")"; fi
"$HERMETIC" frobnicate >"$T/out" 2>"$T/err"
if ! grep -q "did you mean" "$T/err"; then pass "no suggestion for a word near no command"; else fail "no suggestion for a word near no command" "$(tr '\n' '|' <"$T/err")"; fi
# The man page's EXIT STATUS names every status enroll's help does, 86 too.
for code in 2 69 70 73 77 86 87 126 127; do
	sed -n '/^\.SH EXIT STATUS/,/^\.SH ENVIRONMENT/p' "$TOP/docs/hermetic.1" | grep -qw "$code" || echo "$code"
done >"$T/codes_missing"
if [ ! -s "$T/codes_missing" ] && grep -q "86" "$T/help"; then
	pass "the man page's EXIT STATUS and enroll --help name 86 and every status of hermetic's own"
else
	fail "the man page's EXIT STATUS names every status" "missing: $(tr '\n' ' ' <"$T/codes_missing")"
fi
"$HERMETIC" --colour >"$T/out" 2>"$T/err"
if [ $? = 2 ] && grep -qx "hermetic: unknown option '--colour'" "$T/err"; then pass "hermetic --colour: 'unknown option', not 'unknown command'"; else fail "hermetic --colour: 'unknown option'" "$(tr '\n' '|' <"$T/err")"; fi

# hermetic journals show: a journal written by the codec is shown as a
# timeline and as JSON, offline; corrupted, truncated, foreign and too-new
# files exit 65 with a message saying what is wrong. No daemon needed.
source "$(dirname "$0")/../lib.sh"

W=$B/tests/journal
if [ ! -x "$W" ] || [ ! -x "$HERMETIC" ]; then
	fail "journal: build" "$W or $HERMETIC missing (run make)"
	exit 1
fi
J=$T/run-7.hjournal
umask 022
check "write a journal" "$W" --write "$J"
check "journal file is 0600 whatever the umask" test "$(stat -c %a "$J")" = 600
check "no temporary file left" test "$(ls -A "$T" | grep -c '^\.')" = 0

out=$("$HERMETIC" journals show "$J" 2>&1)
rc=$?
if [ "$rc" = 0 ]; then pass "show exits 0"; else fail "show exits 0" "exit $rc: $out"; fi
expect_line() {
	local name=$1 pattern=$2
	if printf '%s\n' "$out" | grep -qE -- "$pattern"; then
		pass "show: $name"
	else
		fail "show: $name" "no line matching '$pattern' in: $(printf '%s' "$out" | tr '\n' '|')"
	fi
}
expect_line "format and sizes" "^journal +.*run-7\.hjournal \(format 2\.2, [0-9]+ B, [0-9]+ B uncompressed\)"
expect_line "command, shell-quoted" "^command +python3 -c 'print\(1\)'$"
expect_line "seed" "^seed +42$"
expect_line "clock" "^clock +virtual, now 2020-01-01T00:00:00Z, tick 1us$"
expect_line "network" "^network +block, loopback allowed, unix sockets allowed$"
expect_line "options" "^options +--fs isolate$"
expect_line "host" "^host +ci-runner-3$"
expect_line "env keeps TZ and LC_* values, counts other names" "^env +TZ=UTC LC_ALL=C.UTF-8 \(\+2 names, values not recorded\)$"
expect_line "process count" "^processes +2, 3 threads$"
expect_line "root process with its threads and values" "^  1 +python3 +2 threads +25 clock +7 entropy \(112 B\) +2 wait \(2 timed out\) +exit$"
expect_line "child process indented under its parent" "^    1\.2 +python3 +1 thread +8 clock +2 entropy \(32 B\) +1 wait \(1 timed out\) +exit$"
expect_line "kernel events and drops" "^kernel +5 records in 2 chunks; 6 events, 1 dropped"
expect_line "exit status" "^exit +status 1 after 1\.23s, 2 stragglers killed$"
if printf '%s' "$out" | grep -q hunter2; then
	fail "show: no secret environment value" "a dropped value appears"
else
	pass "show: no secret environment value"
fi

if "$HERMETIC" journals show --json "$J" >"$T/j.json" 2>"$T/j.err"; then
	pass "show --json exits 0"
else
	fail "show --json exits 0" "$(cat "$T/j.err")"
fi
check "show --json is what the journal holds" python3 - "$T/j.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["config"]
assert d["format"] == "2.2", d["format"]
assert c["seed"] == 42 and c["seed_given"] is True, c
assert c["argv"] == ["python3", "-c", "print(1)"], c["argv"]
assert c["now"] == "2020-01-01T00:00:00Z" and c["tick_ns"] == 1000, c
assert c["clock"] == "virtual" and c["rng"] == "all" and c["network"] == "block", c
assert c["options"] == {"fs": "isolate"}, c["options"]
fp = d["fingerprint"]
assert fp["fields"]["hostname"] == "ci-runner-3", fp
assert fp["env"]["TZ"] == "UTC" and fp["env"]["AWS_SECRET_ACCESS_KEY"] is None, fp["env"]
ps = {p["lineage"]: p for p in d["processes"]}
assert list(ps) == ["1", "1.2"], list(ps)
assert ps["1"]["parent"] is None and ps["1.2"]["parent"] == "1"
assert ps["1"]["threads"] == 2 and len(ps["1"]["streams"]) == 2
assert ps["1"]["clock"] == 25 and ps["1"]["entropy"] == 7 and ps["1"]["entropy_bytes"] == 112
assert ps["1.2"]["streams"][0]["end"] == "exit"
assert d["kernel"] == {"records": 5, "chunks": 2, "events": 6, "dropped": 1}, d["kernel"]
assert d["exit"]["status"] == 1 and d["exit"]["stragglers"] == 2, d["exit"]
PY

out=$("$HERMETIC" journals show --records "$J" 2>&1)
expect_line "records: a stream header per thread" "^stream 1\.2 thread 0: python3 #1, image [0-9a-f]{16} \(pid 4242, tid 4242\): 12 records$"
expect_line "records: a clock reading, numbered" "^  #3 +clock_gettime +CLOCK_MONOTONIC +1000\.000001000$"
expect_line "records: entropy in hex" "^  #7 +getrandom +16 B +04040404040404040404040404040404$"
expect_line "records: a wait outcome" "^  #11 +epoll_wait +timed out +returned 0, monotonic 1000\.000500000$"
expect_line "records: the end record" "^  #12 +end +exit$"
check "show --records --json lists every value" sh -c \
	"'$HERMETIC' journals show --records --json '$J' | python3 -c '
import json, sys
d = json.load(sys.stdin)
v = d[\"processes\"][1][\"streams\"][0][\"values\"]
assert len(v) == 12 and [x[\"n\"] for x in v] == list(range(1, 13)), v
assert v[0] == {\"n\": 1, \"kind\": \"clock\", \"call\": \"clock_gettime\", \"clock\": 1, \"ns\": 1000000000000}, v[0]
assert v[10][\"kind\"] == \"wait\" and v[10][\"timed_out\"] is True, v[10]
'"

# expect_refusal NAME FILE CODE PATTERN: show exits CODE with a message matching PATTERN.
expect_refusal() {
	local name=$1 file=$2 code=$3 pattern=$4 err rc
	err=$("$HERMETIC" journals show "$file" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" = "$code" ] && printf '%s' "$err" | grep -qE -- "$pattern"; then
		pass "$name"
	else
		fail "$name" "exit $rc (want $code), message: $err"
	fi
}
python3 - "$J" "$T/flipped.hjournal" <<'PY'
import sys
b = bytearray(open(sys.argv[1], "rb").read())
b[len(b) // 2] ^= 0x10
open(sys.argv[2], "wb").write(b)
PY
expect_refusal "bit-flipped journal: exit 65, corrupted" "$T/flipped.hjournal" 65 \
	"^hermetic: Failed to read journal '.*flipped.hjournal': corrupted journal"
head -c "$(($(stat -c %s "$J") / 2))" "$J" >"$T/truncated.hjournal"
expect_refusal "truncated journal: exit 65, truncated" "$T/truncated.hjournal" 65 "truncated journal"
echo "hello, I am not a journal" >"$T/text.hjournal"
expect_refusal "foreign file: exit 65, not a journal" "$T/text.hjournal" 65 "not a hermetic journal"
: >"$T/empty.hjournal"
expect_refusal "empty file: exit 65" "$T/empty.hjournal" 65 "not a hermetic journal"
check "write a journal of a newer major format" "$W" --write-newer-major "$T/future.hjournal"
expect_refusal "newer major version: exit 65, upgrade" "$T/future.hjournal" 65 \
	"format 3\.0 is newer than this hermetic reads \(2\.x\): upgrade hermetic"
expect_refusal "missing file: exit 66" "$T/nope.hjournal" 66 "No such file or directory"
expect_refusal "directory: exit 66" "$T" 66 "not a regular file"

"$HERMETIC" journals >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then pass "journals without a command: usage, exit 2"; else fail "journals without a command: usage, exit 2" "exit $rc"; fi
"$HERMETIC" journals frobnicate >/dev/null 2>&1
rc=$?
if [ "$rc" = 2 ]; then pass "unknown journals command: exit 2"; else fail "unknown journals command: exit 2" "exit $rc"; fi
if "$HERMETIC" journals --help | grep -q '^  show '; then
	pass "journals --help lists show"
else
	fail "journals --help lists show" "$("$HERMETIC" journals --help 2>&1 | tr '\n' '|')"
fi
if "$HERMETIC" --help | grep -q '^  journals '; then
	pass "hermetic --help lists journals"
else
	fail "hermetic --help lists journals" ""
fi

# What enroll costs and starts from when the user passes nothing: the CPU
# time enroll itself uses while its command runs, and the default --now.
source "$(dirname "$0")/../lib.sh"
need_root defaults || exit 0
start_daemon || { fail "defaults: daemon" "did not start"; exit 0; }

# cpu_ms CMD...: user+system CPU time, in ms, of CMD and everything it
# reaped (enroll reaps its whole run), from getrusage(RUSAGE_CHILDREN).
cpu_ms() {
	local t
	t=$({ TIMEFORMAT='%3U %3S'; time "$@" >/dev/null 2>&1; } 2>&1)
	awk -v t="$t" 'BEGIN { split(t, a, " "); printf "%d\n", (a[1] + a[2]) * 1000 }'
}

# Enroll waits for its command on the cgroup's events and signals; it must
# not spin. The bound is ten times the 20 ms target, so load cannot flake it.
ms=$(cpu_ms "$HERMETIC" enroll --clock off -- sleep 2)
if [ "$ms" -lt 200 ]; then
	pass "enroll waits without burning CPU (${ms} ms for a 2 s command)"
else
	fail "enroll waits without burning CPU" "${ms} ms of CPU for 'sleep 2'"
fi
# The same once the command has exited, while a straggler runs out its grace.
ms=$(cpu_ms "$HERMETIC" enroll --clock off --grace 2s -- sh -c 'sleep 1.5 & exit 0')
if [ "$ms" -lt 200 ]; then
	pass "enroll waits out a straggler without burning CPU (${ms} ms)"
else
	fail "enroll waits out a straggler without burning CPU" "${ms} ms of CPU"
fi

# The default --now: SOURCE_DATE_EPOCH, else the committer time of HEAD of
# the checkout holding the working directory, else the newest mtime among
# the working directory's entries, else the date of this hermetic release;
# the seed line and the line that repeats a failed run name the value used.
mkdir -p "$T/repo/sub" "$T/plain" "$T/empty" "$T/bare" "$T/elsewhere"
g() { git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main "$@"; }
(
	cd "$T/repo" && g init -q && echo a >a && g add a &&
		GIT_AUTHOR_DATE='@1500000000 +0000' GIT_COMMITTER_DATE='@1650000000 +0200' \
			g commit -q -m one
) >"$T/git.log" 2>&1 || fail "default --now: a git repository" "$(tail -n 3 "$T/git.log")"
(cd "$T/empty" && g init -q) >/dev/null 2>&1
now_in() { # now_in DIR [VAR=VALUE...] -- ARGS...: the virtual time CMD sees, seed line in $T/now.err
	local dir=$1
	shift
	local vars=()
	while [ "$1" != -- ]; do vars+=("$1"); shift; done
	shift
	(cd "$dir" && env -u SOURCE_DATE_EPOCH "${vars[@]}" "$HERMETIC" enroll "$@" -- date +%s 2>"$T/now.err")
}
expect_now() { # expect_now NAME SECONDS SOURCE DIR [VAR=VALUE...] -- [ARGS...]
	local name=$1 want=$2 src=$3 got
	shift 3
	got=$(now_in "$@")
	if [ "$got" = "$want" ] && grep -q "seed [0-9]*, now $(date -u -d "@$want" +%Y-%m-%dT%H:%M:%SZ) from $src" "$T/now.err"; then
		pass "$name"
	else
		fail "$name" "saw $got, want $want from $src: $(tr '\n' '|' <"$T/now.err")"
	fi
}
expect_now "default --now: committer time of HEAD" 1650000000 "the commit time of HEAD" "$T/repo" --
expect_now "default --now: HEAD from a subdirectory of the checkout" 1650000000 "the commit time of HEAD" "$T/repo/sub" --
expect_now "default --now: SOURCE_DATE_EPOCH wins over git" 1600000000 SOURCE_DATE_EPOCH "$T/repo" SOURCE_DATE_EPOCH=1600000000 --
# An unpacked tarball: its newest entry, not recursing, not following a
# link, skipping dot-names and __pycache__ (caches) and the future.
touch -d @1700000000 "$T/plain/a"
mkdir "$T/plain/src" "$T/plain/.cache" "$T/plain/__pycache__"
touch -d @1720000000 "$T/plain/src/newer-but-deeper" "$T/elsewhere/target"
touch -d @1710000000 "$T/plain/src"
touch -d @1760000000 "$T/plain/.cache" "$T/plain/.hidden" "$T/plain/__pycache__"
ln -s "$T/elsewhere/target" "$T/plain/link"
touch -h -d @1705000000 "$T/plain/link"
touch -d "@$(($(date +%s) + 10 * 365 * 86400))" "$T/plain/from-the-future"
expect_now "default --now: outside a checkout, the newest entry of the working directory" \
	1710000000 "the newest entry of the working directory" "$T/plain" --
# The release date: the newest entry of packaging/debian/changelog.
rel=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$TOP/packaging/debian/changelog" | head -n 1)" +%s)
ver=$(cat "$TOP/VERSION")
touch -d @1760000000 "$T/bare/.only-hidden"
expect_now "default --now: the release date ($ver) in a directory with no entry to go by" \
	"$rel" "the date of hermetic $ver" "$T/bare" --
expect_now "default --now: the release date in a checkout without commits" \
	"$rel" "the date of hermetic $ver" "$T/empty" --
# 1640995200: 2022-01-01, the oldest time one TLS library calls sane.
((rel >= 1640995200)) && pass "default --now: the release date passes a 2022-01-01 sanity check" ||
	fail "default --now: the release date passes a 2022-01-01 sanity check" "$rel"
got=$(now_in "$T/repo" SOURCE_DATE_EPOCH=1600000000 -- --now @1234567890)
[ "$got" = 1234567890 ] && pass "--now wins over SOURCE_DATE_EPOCH and git" ||
	fail "--now wins over SOURCE_DATE_EPOCH and git" "saw $got"
(cd "$T/repo" && env -u SOURCE_DATE_EPOCH "$HERMETIC" enroll -- sh -c 'exit 3' >/dev/null 2>"$T/repro.err")
if grep -q "^  hermetic enroll --seed [0-9]* --now 2022-04-15T05:20:00Z -- sh -c 'exit 3'$" "$T/repro.err"; then
	pass "the repro command names the default --now it used"
else
	fail "the repro command names the default --now it used" "$(tr '\n' '|' <"$T/repro.err")"
fi
(cd "$T/repo" && SOURCE_DATE_EPOCH=yesterday "$HERMETIC" enroll -- true >/dev/null 2>"$T/sde.err")
rc=$?
if [ $rc = 2 ] && grep -q "SOURCE_DATE_EPOCH=yesterday: expected a whole number of seconds" "$T/sde.err"; then
	pass "a malformed SOURCE_DATE_EPOCH is refused (exit 2)"
else
	fail "a malformed SOURCE_DATE_EPOCH is refused (exit 2)" "rc=$rc $(tr '\n' '|' <"$T/sde.err")"
fi

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
# the checkout holding the working directory, else the date of this hermetic
# release (never anything a run can write);
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
# The release date: the newest entry of packaging/debian/changelog.
rel=$(date -u -d "$(sed -n 's/^ -- .*>  //p' "$TOP/packaging/debian/changelog" | head -n 1)" +%s)
ver=$(cat "$TOP/VERSION")
touch -d @1760000000 "$T/bare/.only-hidden"
expect_now "default --now: the release date ($ver) in a directory with no entry to go by" \
	"$rel" "the date of hermetic $ver" "$T/bare" --
# An unpacked tarball: its entries' times are not a source (a run writing
# there would move the next run's start).
touch -d @1700000000 "$T/plain/a"
expect_now "default --now: outside a checkout, the release date, whatever the entries' times" \
	"$rel" "the date of hermetic $ver" "$T/plain" --
# One seed, one command, the same times: a run that writes into its working
# directory (outside a checkout) and its rerun print the same clock.
writer() { (cd "$T/plain" && env -u SOURCE_DATE_EPOCH "$HERMETIC" enroll --seed 9 -- sh -c 'date +%s.%N; echo x >"out-$(ls | wc -l)"; touch -d @1760000000 newest' 2>/dev/null); }
w1=$(writer)
w2=$(writer)
if [ -n "$w1" ] && [ "$w1" = "$w2" ] && [ "$(ls "$T/plain" | grep -c '^out-')" = 2 ]; then
	pass "a run that writes into a non-git working directory and its rerun print the same times ($w1)"
else
	fail "a run that writes into a non-git working directory and its rerun print the same times" "first '$w1', then '$w2'; $(ls "$T/plain" | tr '\n' ' ')"
fi
expect_now "default --now: the release date in a checkout without commits" \
	"$rel" "the date of hermetic $ver" "$T/empty" --
# HEAD's commit is read from the checkout's files where git's answer is
# certain (engine/now_git.c), without a git process: with no git on PATH the
# time is still the commit's. Everywhere else git answers, and what enroll
# says must be what git says.
mkdir -p "$T/nogit"
now_of() { # now_of DIR [VAR=VALUE...]: "SECONDS SOURCE-WORDS" of the default --now in DIR
	local dir=$1
	shift
	(cd "$dir" && env -u SOURCE_DATE_EPOCH "$@" "$HERMETIC" enroll -- /bin/date +%s 2>"$T/nowof.err") |
		tr '\n' ' '
	sed -n 's/.* from \(.*\) (pass --seed.*/\1/p' "$T/nowof.err"
}
git_now() { # git_now DIR [VAR=VALUE...]: the committer time git gives for HEAD there, or "none"
	local dir=$1
	shift
	(cd "$dir" && env "$@" git cat-file commit HEAD 2>/dev/null) |
		sed -n 's/^committer .*> \([0-9]*\) .*/\1/p' | grep . || echo none
}
# expect_git NAME DIR GIT [VAR=VALUE...]: git's answer there is GIT (the
# set-up worked), and enroll's default --now is git's answer.
expect_git() {
	local name=$1 dir=$2 expect=$3 want got
	shift 3
	want=$(git_now "$dir" "$@")
	got=$(now_of "$dir" "$@")
	if [ "$want" != "$expect" ]; then
		fail "$name" "set-up: git says $want there, not $expect"
	elif { [ "$want" != none ] && [ "$got" = "$want the commit time of HEAD" ]; } ||
		{ [ "$want" = none ] && [ "${got% the commit time of HEAD}" = "$got" ]; }; then
		pass "$name"
	else
		fail "$name" "git says $want, enroll saw '$got'"
	fi
}
expect_fast() { # expect_fast NAME DIR SECONDS: that time from the files alone, no git on PATH
	local got
	got=$(now_of "$2" PATH="$T/nogit")
	[ "$got" = "$3 the commit time of HEAD" ] && pass "$1" || fail "$1" "saw '$got', want $3"
}
expect_fast "default --now without git on PATH: a loose commit" "$T/repo" 1650000000
cp -a "$T/repo" "$T/packed"
(
	cd "$T/packed" && echo b >b && g add b &&
		GIT_COMMITTER_DATE='@1660000000 +0000' g commit -q -m two && g gc -q --aggressive &&
		g branch -q other HEAD~1
) >"$T/git.log" 2>&1 || fail "default --now: a packed repository" "$(tail -n 3 "$T/git.log")"
ls "$T/packed/.git/objects/pack/"*.pack >/dev/null 2>&1 && test -s "$T/packed/.git/packed-refs" ||
	fail "default --now: a packed repository" "git gc left no pack or no packed-refs"
expect_fast "default --now without git on PATH: a packed commit, HEAD through packed-refs" "$T/packed" 1660000000
(cd "$T/packed" && g checkout -q --detach other) >/dev/null 2>&1
expect_fast "default --now without git on PATH: a detached HEAD" "$T/packed" 1650000000
expect_git "default --now: a detached HEAD, as git says" "$T/packed" 1650000000
# Where git's answer could differ, enroll asks git.
cp -a "$T/packed" "$T/replaced"
(cd "$T/replaced" && g checkout -q main && g replace "$(g rev-parse HEAD)" "$(g rev-parse other)") >/dev/null 2>&1
expect_git "default --now: a replacement ref, as git says (the replacement's time)" "$T/replaced" 1650000000
(cd "$T/packed" && g checkout -q main && g worktree add -q "$T/wt" other) >/dev/null 2>&1
expect_git "default --now: a linked worktree (.git is a file), as git says" "$T/wt" 1650000000
# A gitfile is read as git reads it (engine/now_git.c): HEAD the worktree's,
# refs, objects and config the common directory's; no git process (none
# on PATH), and git's own answer.
expect_fast "default --now without git on PATH: a linked worktree (.git is a file)" "$T/wt" 1650000000
(
	cd "$T/wt" && g checkout -q -b wtbranch && echo c >c && g add c &&
		GIT_COMMITTER_DATE='@1680000000 +0000' g commit -q -m three
) >"$T/git.log" 2>&1 || fail "default --now: a commit in a linked worktree" "$(tail -n 3 "$T/git.log")"
expect_fast "default --now without git on PATH: a commit made in a linked worktree" "$T/wt" 1680000000
expect_git "default --now: a commit made in a linked worktree, as git says" "$T/wt" 1680000000
expect_fast "default --now without git on PATH: the main checkout beside its worktree" "$T/packed" 1660000000
# A submodule's kind of gitfile: a relative path to a whole repository.
mkdir -p "$T/relgit"
printf 'gitdir: ../packed/.git\n' >"$T/relgit/.git"
expect_fast "default --now without git on PATH: a gitfile with a relative path" "$T/relgit" 1660000000
expect_git "default --now: a gitfile with a relative path, as git says" "$T/relgit" 1660000000
# A worktree on a per-worktree ref (refs/bisect/...): git's to answer.
(cd "$T/wt" && g update-ref refs/bisect/bad HEAD~1 && g symbolic-ref HEAD refs/bisect/bad) >/dev/null 2>&1
expect_git "default --now: a worktree whose HEAD names a per-worktree ref, as git says" "$T/wt" 1650000000
got=$(now_of "$T/wt" PATH="$T/nogit")
[ "${got% the commit time of HEAD}" = "$got" ] &&
	pass "default --now: a per-worktree ref is not read without git" ||
	fail "default --now: a per-worktree ref is not read without git" "saw '$got'"
(cd "$T/wt" && g checkout -q wtbranch) >/dev/null 2>&1
expect_git "default --now: GIT_DIR names another repository, as git says" "$T/repo" 1660000000 GIT_DIR="$T/packed/.git"
# git, where it is asked, starts as from a shell: no signal blocked, SIGPIPE
# not ignored (enroll reads HEAD while hermeticd makes the run, when its own
# signals are blocked for their signalfd and SIGPIPE is ignored).
mkdir -p "$T/fakegit"
cat >"$T/fakegit/git" <<EOF
#!/bin/sh
grep -E '^Sig(Blk|Ign):' /proc/\$\$/status >"$T/fakegit/status"
printf 'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor a <a> 1690000000 +0000\ncommitter a <a> 1690000000 +0000\n\nfake\n'
EOF
chmod 755 "$T/fakegit/git"
got=$(now_of "$T/repo" GIT_DIR="$T/packed/.git" PATH="$T/fakegit:$PATH")
blk=$(sed -n 's/^SigBlk:[[:space:]]*//p' "$T/fakegit/status" 2>/dev/null)
ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' "$T/fakegit/status" 2>/dev/null)
if [ "$got" = "1690000000 the commit time of HEAD" ] && [ -n "$blk" ] && [ $((0x$blk)) = 0 ] &&
	[ -n "$ign" ] && [ $((0x$ign & 0x1000)) = 0 ]; then
	pass "default --now: git starts with no signal blocked and SIGPIPE not ignored"
else
	fail "default --now: git starts with no signal blocked and SIGPIPE not ignored" \
		"saw '$got'; git's SigBlk '$blk' SigIgn '$ign'"
fi
mkdir -p "$T/sha256"
(
	cd "$T/sha256" && g init -q --object-format=sha256 && echo a >a && g add a &&
		GIT_COMMITTER_DATE='@1670000000 +0000' g commit -q -m one
) >/dev/null 2>&1
expect_git "default --now: a sha256 repository, as git says" "$T/sha256" 1670000000
cp -a "$T/repo" "$T/theirs"
chown -R nobody "$T/theirs"
expect_git "default --now: a checkout of another user, as git says (it does not trust it)" "$T/theirs" none
got=$(now_of "$T/theirs" PATH="$T/nogit")
[ "${got% the commit time of HEAD}" = "$got" ] &&
	pass "default --now: a checkout of another user is not read without git either" ||
	fail "default --now: a checkout of another user is not read without git either" "saw '$got'"
# Hostile files: a cut pack, an index that lies about its size, a HEAD
# that climbs out of .git. Nothing is taken from them, and enroll runs.
cp -a "$T/packed" "$T/hostile"
(cd "$T/hostile" && g checkout -q main) >/dev/null 2>&1
for p in "$T/hostile/.git/objects/pack/"*.pack; do truncate -s 40 "$p"; done
for i in "$T/hostile/.git/objects/pack/"*.idx; do printf '\377tOc\0\0\0\2\377\377\377\377' | dd of="$i" bs=1 seek=0 conv=notrunc 2>/dev/null; done
got=$(now_of "$T/hostile" PATH="$T/nogit")
[ -n "$got" ] && [ "${got% the commit time of HEAD}" = "$got" ] &&
	pass "default --now: a cut pack and a lying index are not read" ||
	fail "default --now: a cut pack and a lying index are not read" "saw '$got'"
printf 'ref: refs/../../../etc/hostname\n' >"$T/hostile/.git/HEAD"
got=$(now_of "$T/hostile" PATH="$T/nogit")
[ -n "$got" ] && [ "${got% the commit time of HEAD}" = "$got" ] &&
	pass "default --now: a HEAD that leaves .git is not followed" ||
	fail "default --now: a HEAD that leaves .git is not followed" "saw '$got'"
# git stops looking for the checkout at a mount: so must enroll.
mkdir -p "$T/packed/mnt"
got=$(unshare -m sh -c 'mount -t tmpfs none "$1/mnt" && touch -d @1700000000 "$1/mnt/f" &&
	cd "$1/mnt" && env -u SOURCE_DATE_EPOCH PATH="$2" "$3" enroll -- /bin/date +%s 2>/dev/null' \
	sh "$T/packed" "$T/nogit" "$HERMETIC")
[ "$got" = "$rel" ] && pass "default --now: a directory on another filesystem than its checkout's top is not in it" ||
	fail "default --now: a directory on another filesystem than its checkout's top is not in it" "saw '$got', want the release date's $rel"
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

# The run's persona: ASLR off (ADDR_NO_RANDOMIZE) unless --aslr on, so the
# command's addresses are the same from run to run; set by enroll on itself
# around the clone for the child to inherit (engine/launch.c), and enroll's
# own put back at once: read from enroll stopped as its launch ends.
mine=$(cat /proc/self/personality)
a=$("$HERMETIC" enroll -- sh -c 'cat /proc/self/personality; grep -F "[stack]" /proc/self/maps' 2>/dev/null)
b=$("$HERMETIC" enroll -- sh -c 'cat /proc/self/personality; grep -F "[stack]" /proc/self/maps' 2>/dev/null)
if [ "$(head -n 1 <<<"$a")" = 00040000 ] && [ -n "$(sed -n 2p <<<"$a")" ] && [ "$a" = "$b" ]; then
	pass "a run's persona is ADDR_NO_RANDOMIZE and its stack lies where the last run's did"
else
	fail "a run's persona and addresses" "run 1 [$(tr '\n' '|' <<<"$a")], run 2 [$(tr '\n' '|' <<<"$b")]"
fi
a=$("$HERMETIC" enroll --aslr on -- sh -c 'cat /proc/self/personality; grep -F "[stack]" /proc/self/maps' 2>/dev/null)
b=$("$HERMETIC" enroll --aslr on -- sh -c 'cat /proc/self/personality; grep -F "[stack]" /proc/self/maps' 2>/dev/null)
if [ "$(head -n 1 <<<"$a")" = "$mine" ] && [ -n "$(sed -n 2p <<<"$a")" ] && [ "$a" != "$b" ]; then
	pass "--aslr on: the run keeps enroll's persona ($mine) and its stack moves from run to run"
else
	fail "--aslr on: persona and addresses" "run 1 [$(tr '\n' '|' <<<"$a")], run 2 [$(tr '\n' '|' <<<"$b")]"
fi
HERMETIC_TEST_PAUSE_AT=launch "$HERMETIC" enroll -- cat /proc/self/personality >"$T/pers.out" 2>/dev/null &
EPID=$! own=""
for _ in $(seq 500); do
	read -r _ _ st _ 2>/dev/null <"/proc/$EPID/stat"
	[ "$st" = T ] && { own=$(cat /proc/$EPID/personality); break; }
	[ -e /proc/$EPID ] || break
	sleep 0.01
done
kill -CONT $EPID 2>/dev/null
wait $EPID
if [ "$own" = "$mine" ] && [ "$(cat "$T/pers.out")" = 00040000 ]; then
	pass "enroll's own persona is put back after the clone ($own), its command's is 00040000"
else
	fail "enroll's own persona after the clone" "enroll [$own] want [$mine], command [$(cat "$T/pers.out")]"
fi

#!/usr/bin/env bash
# The run's boundary (issue 5): --fs isolate gives the run a disposable root
# holding HOME, TMPDIR, the XDG dirs, language caches and the working
# directory; --env/--unset/--scrub-env/--keep-env shape the environment before
# the first instruction; the root is removed only once the cgroup is empty,
# never through a symlink or mount, and kept (path printed) otherwise.
# Real programs: Python, git, pip, npm, coreutils.
source "$(dirname "$0")/../lib.sh"

need_root "fs isolation" || exit 0
need_build "fs isolation" || exit 1
test_user FSUSER || FSUSER=
start_daemon || { fail "daemon starts" "$(tail -n 5 "$T/daemon.log" | tr '\n' '|')"; exit 1; }

# Without the shim built, run without it; with it, use it (both must pass).
if [ -e "$B/libhermetic-preload.so" ]; then SHIM=(); else SHIM=(--clock off --rng off); fi
TP=$T/tp # the temp parent of every root here, so leftovers are visible
mkdir -p "$TP"

# en [ENROLL-OPTS...] -- CMD...: sets RC, OUT, ERR and ROOT (from
# --print-boundary, which en always passes).
en() {
	timeout -k 5 60 "$HERMETIC" enroll "${SHIM[@]}" --print-boundary "$@" >"$T/out" 2>"$T/err"
	RC=$?
	OUT=$(cat "$T/out")
	ERR=$(cat "$T/err")
	ROOT=$(grep -m1 '^{' "$T/err" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["root"] or "")' 2>/dev/null)
}
ctx() {
	printf 'rc=%s root=%s out=[%s] err=[%s]' "$RC" "$ROOT" "$(printf %s "$OUT" | tail -c 400 | tr '\n' '|')" \
		"$(printf %s "$ERR" | grep -v '^{' | tail -c 500 | tr '\n' '|')"
}
# expect NAME BASH-CONDITION: PASS when the condition (evaluated) holds.
expect() {
	local name=$1
	shift
	if eval "$*"; then pass "$name"; else fail "$name" "$(ctx)"; fi
}
tp_empty() { [ -z "$(ls -A "$TP")" ]; }
# Remove a root this test kept; only ever one of ours.
rm_root() { case $1 in "$TP"/hm-??????) rm -rf --one-file-system "$1" ;; esac; }
sum() { if [ -e "$1" ]; then sha256sum <"$1"; else echo absent; fi; }
TAG=hmfs-$$-$RANDOM

# --- Python writes ~/.cache/x and $TMPDIR/y: nothing lands outside the root ---
cat >"$T/writes.py" <<EOF
import os, tempfile, pathlib
home = pathlib.Path.home()
(home / ".cache").mkdir(exist_ok=True)
(home / ".cache" / "$TAG-x").write_text("x")
(pathlib.Path(tempfile.gettempdir()) / "$TAG-y").write_text("y")
print("HOME", home)
print("TMP", tempfile.gettempdir())
print("CWD", os.getcwd())
EOF
real_home=$HOME
en --fs isolate --temp-parent "$TP" --keep-root -- python3 "$T/writes.py"
expect "python: runs, HOME/TMPDIR/cwd inside the root" \
	'((RC == 0)) && [ -n "$ROOT" ] && [[ $OUT == *"HOME $ROOT/home"* && $OUT == *"TMP $ROOT/tmp"* && $OUT == *"CWD $ROOT/work"* ]]'
expect "python: ~/.cache/x and \$TMPDIR/y are inside the root" \
	'[ -f "$ROOT/home/.cache/$TAG-x" ] && [ -f "$ROOT/tmp/$TAG-y" ]'
expect "python: nothing in the real home or /tmp" \
	'[ ! -e "$real_home/.cache/$TAG-x" ] && [ ! -e "/tmp/$TAG-y" ] && [ ! -e "${TMPDIR:-/tmp}/$TAG-y" ] && [ -z "$(find /tmp "$real_home" -xdev -maxdepth 3 -name "$TAG-*" -not -path "$ROOT/*" 2>/dev/null)" ]'
expect "--keep-root: kept, and the path printed on one line" \
	'grep -qx "hermetic: kept root: $ROOT" "$T/err" && [ "$(ls -A "$TP")" = "$(basename "$ROOT")" ]'
rm_root "$ROOT"
# The same without --keep-root: the root goes, nothing is left anywhere.
mkdir -p "$T/fakehome" "$T/faketmp"
HOME=$T/fakehome TMPDIR=$T/faketmp en --fs isolate --temp-parent "$TP" -- python3 "$T/writes.py"
expect "python: root removed after the run, fake HOME and TMPDIR untouched" \
	'((RC == 0)) && [ -n "$ROOT" ] && [ ! -e "$ROOT" ] && tp_empty && [ -z "$(ls -A "$T/fakehome" "$T/faketmp" 2>&1 | grep -v : )" ] && ! grep -q "kept root" "$T/err"'
# The default temp parent is $TMPDIR.
TMPDIR=$T/faketmp en --fs isolate -- sh -c 'echo "$HOME"'
expect "default temp parent is \$TMPDIR" '((RC == 0)) && [[ $OUT == "$T/faketmp/hm-"*/home ]] && [ ! -e "$ROOT" ]'
expect "root name is short (unix sockets fit beneath it)" '[[ $(basename "$ROOT") =~ ^hm-[A-Za-z0-9]{6}$ ]]'

# --- git config --global does not touch the real ~/.gitconfig ----------------
before=$(sum "$real_home/.gitconfig")
en --fs isolate --temp-parent "$TP" -- sh -c 'git config --global user.name x-$$ && git config --global --show-origin user.name'
expect "git config --global writes the root's .gitconfig" \
	'((RC == 0)) && [[ $OUT == "file:$ROOT/home/.gitconfig"*x-* ]]'
expect "git config --global: real ~/.gitconfig unchanged" '[ "$(sum "$real_home/.gitconfig")" = "$before" ] && tp_empty'
# Even when the outer environment pins the global config file.
echo "[user]
	name = outer" >"$T/outer.gitconfig"
before=$(sum "$T/outer.gitconfig")
GIT_CONFIG_GLOBAL=$T/outer.gitconfig en --fs isolate --temp-parent "$TP" -- git config --global user.name inner
expect "git config --global: an outer GIT_CONFIG_GLOBAL is not written" \
	'((RC == 0)) && [ "$(sum "$T/outer.gitconfig")" = "$before" ]'

# --- pip and npm caches and configuration land inside the root ----------------
if python3 -m pip --version >/dev/null 2>&1; then
	before=$(sum "$real_home/.config/pip/pip.conf")
	en --fs isolate --temp-parent "$TP" --keep-root -- sh -c \
		'python3 -m pip cache dir; python3 -m pip config --user set global.timeout 7 && python3 -m pip config debug'
	expect "pip: cache dir inside the root" '((RC == 0)) && [[ $(printf %s "$OUT" | head -n1) == "$ROOT/home/.cache/pip" ]]'
	expect "pip: user config written inside the root, real one unchanged" \
		'grep -q "timeout = 7" "$ROOT/home/.config/pip/pip.conf" && [ "$(sum "$real_home/.config/pip/pip.conf")" = "$before" ]'
	rm_root "$ROOT"
else
	fail "pip" "python3 -m pip is not installed (tests/deps.sh should install python3-pip)"
fi
if command -v npm >/dev/null; then
	npm_before=$(ls -lR --time-style=full-iso "$real_home/.npm" 2>/dev/null | sha256sum)
	en --fs isolate --temp-parent "$TP" --keep-root -- sh -c 'npm config get cache && npm --version >/dev/null && npm cache verify >/dev/null'
	expect "npm: cache dir inside the root" '((RC == 0)) && [[ $(printf %s "$OUT" | head -n1) == "$ROOT/home/"* ]]'
	expect "npm: cache verify writes its cache inside the root" '[ -d "$ROOT/home/.npm/_cacache" ]'
	expect "npm: real ~/.npm unchanged" '[ "$(ls -lR --time-style=full-iso "$real_home/.npm" 2>/dev/null | sha256sum)" = "$npm_before" ]'
	rm_root "$ROOT"
else
	fail "npm" "npm is not installed (tests/deps.sh should install npm)"
fi
en --fs isolate --temp-parent "$TP" -- sh -c 'echo "$GOCACHE|$GOMODCACHE|$CARGO_HOME|$PYTHONPYCACHEPREFIX|$XDG_RUNTIME_DIR|$MAVEN_OPTS"; stat -c %a "$XDG_RUNTIME_DIR"'
want="$ROOT/home/.cache/go-build|$ROOT/home/go/pkg/mod|$ROOT/home/.cargo|$ROOT/home/.cache/pycache|$ROOT/run|-Dmaven.repo.local=$ROOT/home/.m2/repository
700"
expect "language caches point inside; XDG_RUNTIME_DIR is mode 0700" '((RC == 0)) && [ "$OUT" = "$want" ]'
en --fs isolate --temp-parent "$TP" -- python3 -c '
import os, socket
p = os.path.join(os.environ["XDG_RUNTIME_DIR"], "a-rather-long-socket-name-for-a-test.sock")
s = socket.socket(socket.AF_UNIX); s.bind(p); print("bound", len(p))'
expect "a unix socket binds beneath the root" '((RC == 0)) && [[ $OUT == "bound "* ]]'

# --- stragglers ------------------------------------------------------------
# The clock must be real here: `sleep 3` must take 3 s.
LATE='setsid sh -c "sleep 3; echo late > \$HOME/late" </dev/null >/dev/null 2>&1 & echo started'
en --clock off --fs isolate --temp-parent "$TP" --grace 500ms --stragglers kill -- sh -c "$LATE"
expect "--stragglers kill: named, and the root is gone when enroll returns" \
	'((RC == 0)) && [ -n "$ROOT" ] && grep -Eq "killed [0-9]+ straggler" "$T/err" && [ ! -e "$ROOT" ] && tp_empty'
kill_root=$ROOT
en --clock off --fs isolate --temp-parent "$TP" --grace 500ms --stragglers keep -- sh -c "$LATE"
keep_root=$ROOT
expect "--stragglers keep: root kept and its path printed" \
	'((RC == 0)) && [ -d "$keep_root" ] && grep -qx "hermetic: kept root: $keep_root" "$T/err" && grep -Eq "left [0-9]+ process(es)? running" "$T/err" && [ ! -e "$keep_root/home/late" ]'
sleep 4
expect "--stragglers kill: the late file never appears" '[ ! -e "$kill_root" ] && [ -z "$(find "$TP" -name late 2>/dev/null | grep -v "^$keep_root/")" ]'
expect "--stragglers keep: the late file appears in the kept root" '[ "$(cat "$keep_root/home/late" 2>/dev/null)" = late ]'
expect "--stragglers keep: hermeticd removes the run once it empties" \
	'"$HERMETIC" status 2>&1 | grep -q "active runs: 0"'
rm_root "$keep_root"

# --- a cgroup.events that cannot be read is not "empty" -------------------------
# hermetic itself with a pread that fails on any cgroup.events (EIO): whether
# the run is empty is unknown, so its root is kept and named, never removed.
cat >"$T/evfail.c" <<'C'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int is_events(int fd)
{
	char p[64], t[4096];
	ssize_t n;

	snprintf(p, sizeof(p), "/proc/self/fd/%d", fd);
	n = readlink(p, t, sizeof(t) - 1);
	if (n < 14)
		return 0;
	t[n] = 0;
	return !strcmp(t + n - 14, "/cgroup.events");
}

#define FAIL_EVENTS(name)                                                       \
	ssize_t name(int fd, void *b, size_t n, off64_t o)                      \
	{                                                                       \
		static ssize_t (*real)(int, void *, size_t, off64_t);           \
		if (is_events(fd)) {                                            \
			errno = EIO;                                            \
			return -1;                                              \
		}                                                               \
		if (!real)                                                      \
			real = (ssize_t(*)(int, void *, size_t, off64_t))dlsym(RTLD_NEXT, #name); \
		return real(fd, b, n, o);                                       \
	}
FAIL_EVENTS(pread)
FAIL_EVENTS(pread64)
C
if cc -shared -fPIC -O1 -o "$T/evfail.so" "$T/evfail.c" -ldl >"$T/evfail.log" 2>&1; then
	LD_PRELOAD=$T/evfail.so en --clock off --fs isolate --temp-parent "$TP" --grace 200ms -- true
	expect "a cgroup.events that cannot be read is not \"empty\": the root is kept and named, not removed" \
		'((RC == 0)) && [ -n "$ROOT" ] && [ -d "$ROOT" ] && grep -qx "hermetic: kept root: $ROOT" "$T/err" &&
		grep -q "cannot tell whether run [0-9]* is empty (its cgroup.events: Input/output error)" "$T/err"'
	rm_root "$ROOT"
else
	fail "a cgroup.events that cannot be read: build the failing pread" "$(tail -n 3 "$T/evfail.log" | tr '\n' '|')"
fi

# --- --temp-parent inside a git working tree is refused -----------------------
mkdir -p "$T/repo/a/b/c/d" "$T/wt/x/y"
git -C "$T/repo" init -q
echo "gitdir: $T/repo/.git/worktrees/wt" >"$T/wt/.git" # a linked worktree's gitfile
en --fs isolate --temp-parent "$T/repo/a/b/c/d" -- true
expect "--temp-parent 4 levels inside a git tree: exit 2, path named" \
	'((RC == 2)) && grep -q "$T/repo/a/b/c/d" "$T/err" && grep -q "git working tree $T/repo" "$T/err" && [ -z "$(ls -A "$T/repo/a/b/c/d")" ]'
en --fs isolate --temp-parent "$T/wt/x/y" -- true
expect "--temp-parent inside a linked worktree (.git file): exit 2" '((RC == 2)) && grep -q "$T/wt/x/y" "$T/err"'
(cd "$T/repo/a/b" && en --fs isolate --temp-parent c -- true ; declare -p RC ERR) >"$T/sub" 2>&1
source "$T/sub"
expect "relative --temp-parent inside the current repository: exit 2" \
	'((RC == 2)) && [[ $ERR == *"inside the current repository $T/repo"* ]]'
ln -s "$T/repo/a" "$T/alias"
en --fs isolate --temp-parent "$T/alias" -- true
expect "--temp-parent through a symlink into a git tree: exit 2" '((RC == 2)) && grep -q "$T/alias" "$T/err"'
TMPDIR=$T/repo/a en --fs isolate -- true
expect "\$TMPDIR inside a git tree as the default temp parent: exit 2" '((RC == 2)) && grep -q "TMPDIR" "$T/err"'

# --- the environment: --scrub-env, --keep-env, --env, --unset ------------------
allow='^(PATH|LANG|LC_[^=]*|TZ|TERM|USER|LOGNAME|SHELL)$'
names() { sed -n 's/^\([^=]*\)=.*/\1/p' | grep -Ev '^(HERMETIC_.*|LD_PRELOAD)$' | sort -u; }
# Give the outer environment every allowlisted variable, and some that must go.
export LANG=${LANG:-C.UTF-8} LC_ALL=C.UTF-8 LC_TIME=C TZ=UTC TERM=${TERM:-dumb} USER=${USER:-root} \
	LOGNAME=${LOGNAME:-root} SHELL=${SHELL:-/bin/sh}
FOO_A=1 FOO_B=2 SECRET_TOKEN=s3cr3t en --scrub-env -- /usr/bin/env
want=$(env | names | grep -E "$allow")
got=$(printf '%s\n' "$OUT" | names)
expect "--scrub-env: env inside is exactly the allowlist" '((RC == 0)) && [ "$got" = "$want" ] && [ -n "$want" ]'
expect "--scrub-env: values kept as they were" '[[ $OUT == *"TZ=UTC"* && $OUT == *"LC_TIME=C"* && $OUT == *"PATH=$PATH"* ]]'
expect "--scrub-env: the run's own HERMETIC_* survive" '[[ $OUT == *"HERMETIC_RUN="* && $OUT == *"HERMETIC_CLOCK_FD="* ]]'
FOO_A=1 FOO_B=2 BAR=3 en --scrub-env --keep-env 'FOO_*' -- /usr/bin/env
got=$(printf '%s\n' "$OUT" | names)
expect "--keep-env FOO_*: kept, others still scrubbed" \
	'((RC == 0)) && [ "$got" = "$(printf "%s\nFOO_A\nFOO_B\n" "$want" | sort -u)" ]'
en --fs isolate --temp-parent "$TP" --scrub-env -- /usr/bin/env
got=$(printf '%s\n' "$OUT" | names)
iso='CARGO_HOME GIT_CONFIG_GLOBAL GOCACHE GOMODCACHE GOPATH GRADLE_USER_HOME HOME MAVEN_OPTS PIP_CACHE_DIR PWD PYTHONPYCACHEPREFIX PYTHONUSERBASE TMPDIR XDG_CACHE_HOME XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR XDG_STATE_HOME npm_config_cache'
expect "--scrub-env with --fs isolate: the allowlist plus the isolate variables" \
	'((RC == 0)) && [ "$got" = "$(printf "%s\n" "$want" $iso | sort -u)" ]'
A=outer B=outer en --env A=1 --env A=2 --unset B --env C=x=y --env B=back --unset A -- /usr/bin/env
expect "--env/--unset apply in order" \
	'((RC == 0)) && ! grep -q "^A=" "$T/out" && grep -qx "B=back" "$T/out" && grep -qx "C=x=y" "$T/out"'
en --env HOME=/custom --fs isolate --temp-parent "$TP" -- sh -c 'echo "$HOME $TMPDIR"'
expect "--env wins over --fs isolate" '((RC == 0)) && [[ $OUT == "/custom $ROOT/tmp" ]]'
# The password database's home of the user the run runs as follows HOME
# (the JVM's user.home comes from there; preload/passwd.c); others' do not.
other=$(getent passwd daemon | cut -d: -f6)
if [ -e "$B/libhermetic-preload.so" ]; then
	en --fs isolate --temp-parent "$TP" -- python3 -c '
import os, pwd
me = pwd.getpwuid(os.getuid())
print(me.pw_dir, pwd.getpwnam(me.pw_name).pw_dir, pwd.getpwnam("daemon").pw_dir, me.pw_shell)'
	expect "--fs isolate: getpwuid/getpwnam report the run's HOME for the user, not for others" \
		'((RC == 0)) && [ "$OUT" = "$ROOT/home $ROOT/home $other $(getent passwd "$(id -un)" | cut -d: -f7)" ]'
	en -- python3 -c 'import os, pwd; print(pwd.getpwuid(os.getuid()).pw_dir)'
	expect "without --fs isolate the password database's home is the real one" \
		'((RC == 0)) && [ "$OUT" = "$(getent passwd "$(id -un)" | cut -d: -f6)" ]'
fi
(cd "$T" && en --fs isolate --temp-parent "$TP" --no-chdir -- pwd ; declare -p RC OUT ROOT) >"$T/sub" 2>&1
source "$T/sub"
expect "--no-chdir keeps the cwd" '((RC == 0)) && [ "$OUT" = "$T" ]'
printf '#!/bin/sh\npwd\n' >"$T/rel.sh"
chmod +x "$T/rel.sh"
(cd "$T" && en --fs isolate --temp-parent "$TP" -- ./rel.sh ; declare -p RC OUT ROOT) >"$T/sub" 2>&1
source "$T/sub"
expect "a relative CMD is found where enroll started, and runs in the root" \
	'((RC == 0)) && [ "$OUT" = "$ROOT/work" ] && tp_empty'

# --- --print-boundary --------------------------------------------------------
BOUND_VAR=1 en --fs isolate --temp-parent "$TP" --env X_SET=1 --unset BOUND_VAR -- sh -c 'echo started >&2'
grep -m1 '^{' "$T/err" >"$T/json"
expect "--print-boundary: one line of JSON that parses, before CMD starts" \
	'[ "$(grep -c "^{" "$T/err")" = 1 ] && [ "$(grep -n -e "^{" -e "^started" "$T/err" | cut -d: -f1 | tr "\n" " ")" = "$(grep -n "^{" "$T/err" | cut -d: -f1) $(grep -n "^started" "$T/err" | cut -d: -f1) " ] && python3 -c "import json,sys; json.loads(open(sys.argv[1]).read())" "$T/json"'
expect "--print-boundary: the root and every variable hermetic set" \
	'python3 - "$T/json" "$ROOT" <<"PY"
import json, sys
b = json.loads(open(sys.argv[1]).read())
root = sys.argv[2]
s = b["set"]
assert b["root"] == root and b["cwd"] == root + "/work", b
for k in ("HOME", "TMPDIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
          "XDG_RUNTIME_DIR", "X_SET", "HERMETIC_RUN", "LD_PRELOAD" if "LD_PRELOAD" in s else "HERMETIC_CLOCK_FD"):
    assert k in s, k
assert s["HOME"] == root + "/home" and s["X_SET"] == "1"
assert "BOUND_VAR" in b["unset"], b["unset"]
PY'
en -- true
expect "--print-boundary without --fs: root is null" \
	'((RC == 0)) && python3 -c "import json,sys; b=json.loads(sys.stdin.readline()); assert b[\"root\"] is None and \"HERMETIC_RUN\" in b[\"set\"]" <"$T/err"'

# --- removal never follows a symlink out of the root, never deletes outside -----
# The test contains itself: should removal ever follow a link, it must find
# nothing but sacrificial directories. Roots and the outside tree live on a
# private tmpfs (a removal that kept to its device stays on it), and every
# link points into that tmpfs or at a canary directory of this test, never
# at anything of the machine's.
BOX=$T/box
mkdir -p "$BOX" "$T/canary"
echo keep >"$T/canary/file"
if mount -t tmpfs -o size=64m,mode=0755 hmtest-box "$BOX"; then
	at_exit "umount -l '$BOX'"
	BTP=$BOX/tp OD=$BOX/outside
	mkdir -p "$BTP" "$OD/sub"
	echo keep >"$OD/file"
	echo keep >"$OD/sub/file2"
	echo keep >"$OD/hard"
	snap() { (cd "$OD" && find . -printf '%p %y %s %n\n' | sort; cd "$T/canary" && find . -printf '%p %y %s\n' | sort) | sha256sum; }
	outside_before=$(snap)
	en --fs isolate --temp-parent "$BTP" -- sh -c "
		ln -s '$OD' \"\$HOME/to-dir\" &&
		ln -s '$OD/file' \"\$HOME/to-file\" &&
		mkdir -p \"\$HOME/deep/er\" && ln -s '$T/canary' \"\$HOME/deep/er/other-device\" &&
		ln -s .. \"\$HOME/deep/dotdot\" &&
		ln '$OD/hard' \"\$HOME/hardlink\" &&
		mkdir \"\$HOME/ro\" && touch \"\$HOME/ro/f\" && chmod 0555 \"\$HOME/ro\" &&
		ls \"\$HOME/to-dir/file\" \"\$HOME/deep/er/other-device/file\""
	expect "symlinks out of the root: root removed" \
		'((RC == 0)) && [ -n "$ROOT" ] && [ ! -e "$ROOT" ] && [ -z "$(ls -A "$BTP")" ]'
	expect "symlinks out of the root: nothing outside deleted" \
		'[ "$(snap)" = "$outside_before" ] && [ "$(cat "$OD/file" "$OD/sub/file2" "$OD/hard" "$T/canary/file")" = "keep
keep
keep
keep" ]'
	# A bind mount of an outside directory inside the root: not entered,
	# the root is kept and named.
	# --confine off: a confined root run cannot mount at all (no
	# CAP_SYS_ADMIN, and its mounts would stay in its own namespace).
	en --confine off --fs isolate --temp-parent "$BTP" -- sh -c "mkdir \"\$HOME/mnt\" && mount --bind '$OD' \"\$HOME/mnt\""
	if [ -n "$ROOT" ] && mountpoint -q "$ROOT/home/mnt"; then
		at_exit "umount -l '$ROOT/home/mnt'"
		expect "a bind mount inside the root: not entered, root kept and printed" \
			'((RC == 0)) && grep -qx "hermetic: kept root: $ROOT" "$T/err" && grep -q "Failed to remove" "$T/err" && [ "$(snap)" = "$outside_before" ]'
		umount -l "$ROOT/home/mnt" && ! mountpoint -q "$ROOT/home/mnt" && rm -rf --one-file-system "$ROOT"
	else
		skip "a bind mount inside the root" "mount --bind failed in the run: $(ctx)"
	fi
else
	fail "removal containment" "cannot mount a tmpfs for the removal tests"
fi

# --- the rest of the run's life -------------------------------------------------
en --fs isolate --temp-parent "$TP" -- no-such-command-$TAG
expect "CMD not found: exit 127, root removed" '((RC == 127)) && [ -n "$ROOT" ] && [ ! -e "$ROOT" ] && tp_empty'
en --fs isolate --temp-parent "$TP" -- sh -c 'exit 3'
expect "CMD's status passes through; repro names the boundary options" \
	'((RC == 3)) && grep -q "reproduce with:" "$T/err" && grep -q -- "--fs isolate --temp-parent $TP" "$T/err" && tp_empty'
en --fs isolate --temp-parent "$TP" -- "$HERMETIC" enroll --fs isolate -- true
expect "enroll inside an isolated run is refused (77)" '((RC == 77)) && grep -q "already inside hermetic run" "$T/err" && tp_empty'
en --no-daemon --fs isolate --temp-parent "$TP" -- sh -c 'echo "$HOME"'
expect "--no-daemon --fs isolate: isolated and removed" '((RC == 0)) && [ "$OUT" = "$ROOT/home" ] && [ ! -e "$ROOT" ]'
en --no-daemon --clock off --fs isolate --temp-parent "$TP" --grace 300ms -- sh -c "$LATE"
expect "--no-daemon: a straggler is killed and the root removed" '((RC == 0)) && grep -Eq "killed [0-9]+ straggler" "$T/err" && [ ! -e "$ROOT" ]'

# --- an unprivileged user: read-only directories (Go's module cache) --------------
if [ -n "${FSUSER:-}" ]; then
	mkdir -p "$T/tpn"
	chown "$FSUSER" "$T/tpn"
	as_user "$FSUSER" "$HERMETIC" enroll "${SHIM[@]}" --print-boundary --fs isolate --temp-parent "$T/tpn" -- sh -c '
		mkdir -p "$GOMODCACHE/example.com/m@v1/sub" && touch "$GOMODCACHE/example.com/m@v1/sub/f" &&
		chmod -R a-w "$GOMODCACHE/example.com" && mkdir "$HOME/locked" && chmod 0 "$HOME/locked" && id -u' \
		>"$T/out" 2>"$T/err"
	RC=$? OUT=$(cat "$T/out") ERR=$(cat "$T/err") ROOT=
	expect "unprivileged: read-only module cache and unreadable dirs are removed" \
		'((RC == 0)) && [ "$OUT" = "$(id -u "$FSUSER")" ] && [ -z "$(ls -A "$T/tpn")" ] && ! grep -q "kept root" "$T/err"'
else
	fail "unprivileged removal" "could not create a test user (useradd)"
fi

# --- bad options: exit 2 with the usage hint -----------------------------------
bad() { # bad NAME TEXT ARGS...
	local name=$1 text=$2
	shift 2
	"$HERMETIC" enroll "$@" -- true >"$T/out" 2>"$T/err"
	RC=$? OUT= ERR=$(cat "$T/err") ROOT=
	expect "$name" '((RC == 2)) && grep -qF -- "$text" "$T/err" && grep -q "Try '\''hermetic enroll --help'\''" "$T/err"'
}
bad "bad --fs" "--fs tmpfs: expected 'isolate' or 'none'" --fs tmpfs
bad "bad --stragglers" "--stragglers maybe: expected 'kill' or 'keep'" --stragglers maybe
bad "bad --env" "--env NOEQUALS: expected KEY=VALUE" --env NOEQUALS
bad "--env HERMETIC_*" "HERMETIC_* variables belong to the run" --env HERMETIC_SEED=1
bad "--keep-env without --scrub-env" "--keep-env needs --scrub-env" --keep-env 'X*'
bad "--temp-parent without --fs isolate" "--temp-parent needs --fs isolate" --temp-parent /tmp
bad "--keep-root without --fs isolate" "--keep-root needs --fs isolate" --keep-root
bad "--temp-parent missing" "--temp-parent $T/nonexistent: No such file" --fs isolate --temp-parent "$T/nonexistent"
bad "--temp-parent a file" "not a directory" --fs isolate --temp-parent "$T/writes.py"
exit 0

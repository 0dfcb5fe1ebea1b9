#!/usr/bin/env bash
# Shell and C tools under the shim: each prints the same with one seed, and
# (where randomness is involved) something else with another seed.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built tools || exit 0
cd "$T" || exit 1

DIFFER=0 det "date" date -u +%Y-%m-%dT%H:%M:%S.%N
[ "$DET_OUT" = "2020-01-01T00:00:00.000000000" ] && pass "date is --now" || fail "date is --now" "$DET_OUT"
det "mktemp" mktemp -u
det "shuf" sh -c 'seq 100 | shuf | head -n 20 | tr "\n" " "'
det "sort -R" sh -c 'seq 100 | sort -R | head -n 20 | tr "\n" " "'
det "/dev/urandom via od" od -An -tx1 -N16 /dev/urandom
if have openssl "openssl rand"; then det "openssl rand" openssl rand -hex 16; fi
if have sqlite3 "sqlite3 randomblob"; then
	det "sqlite3 randomblob" sqlite3 :memory: "select hex(randomblob(16)), random();"
fi
if have perl "perl rand"; then det "perl rand" perl -e 'print rand(), "\n"'; fi

if have git "git commit id"; then
	mkdir -p "$T/git"
	git_commit() {
		rm -rf "$T/git/r" && mkdir "$T/git/r" && cd "$T/git/r" &&
			GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a \
				GIT_COMMITTER_EMAIL=a@example.com HOME=$T/git \
				shim_run 42 timeout 60 sh -c 'git init -q . && git commit -q --allow-empty -m x && git rev-parse HEAD' 2>&1
		cd "$T" || return 1
	}
	a=$(git_commit) b=$(git_commit)
	[ -n "$a" ] && [ "$a" = "$b" ] && [ ${#a} = 40 ] && pass "git commit id" ||
		fail "git commit id" "$a / $b"
fi

# A small C project built twice inside one run, a source touched in between:
# make rebuilds exactly what changed and sees no clock skew; tar of what the run
# wrote sees nothing from the future; times a program sets read back unchanged.
if have make "make rebuild" && have "$SHIM_CC" "make rebuild"; then
	mkdir -p "$T/proj" && cd "$T/proj" || exit 1
	cat >Makefile <<'MKEOF'
prog: a.o b.o
	$(CC) -o $@ a.o b.o
%.o: %.c
	$(CC) -c $<
MKEOF
	echo 'int b(void) { return 1; }' >b.c
	echo 'int b(void); int main(void) { return b() - 1; }' >a.c
	out=$(shim_run 42 timeout 120 sh -c '
		make CC=$0 2>&1; echo ==; touch b.c; make CC=$0 2>&1; echo ==; make CC=$0 2>&1; echo ==
		tar cf ../x.tar . 2>&1 && mkdir -p ../x && tar xf ../x.tar -C ../x 2>&1; echo ==
		touch -d "2019-06-01 12:00:00.25" a.c; stat -c %y a.c
		date -r b.o +%s' "$SHIM_CC" 2>&1)
	section() { # the n-th (0-based) block of $out between "==" lines
		local n=0 line
		while IFS= read -r line; do
			if [ "$line" = "==" ]; then n=$((n + 1)); elif [ "$n" = "$1" ]; then echo "$line"; fi
		done <<<"$out"
	}
	first=$(section 0) second=$(section 1) third=$(section 2)
	if grep -q " -c a.c" <<<"$first" && grep -q " -c b.c" <<<"$first" &&
		! grep -q " -c a.c" <<<"$second" && grep -q " -c b.c" <<<"$second" &&
		grep -q " -o prog" <<<"$second" && grep -q "up to date" <<<"$third"; then
		pass "make rebuilds exactly what changed"
	else
		fail "make rebuilds exactly what changed" "$(tr '\n' '|' <<<"$out")"
	fi
	if grep -qi "skew\|in the future" <<<"$out"; then
		fail "no clock skew or future warnings" "$(grep -i 'skew\|future' <<<"$out" | head -n 2 | tr '\n' '|')"
	else
		pass "no clock skew or future warnings"
	fi
	grep -qx "2019-06-01 12:00:00.250000000 +0000" <<<"$out" && pass "touch -d round-trips" ||
		fail "touch -d round-trips" "$(tr '\n' '|' <<<"$out")"
	mt=$(tail -n 1 <<<"$out")
	[ "$mt" -le 1577836800 ] 2>/dev/null && [ "$mt" -gt 1577700000 ] && pass "files written appear before now" ||
		fail "files written appear before now" "$mt"
	cd "$T" || exit 1
fi

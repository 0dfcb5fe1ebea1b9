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

# File times (make, tar, touch -d, Python's caches): tests/integration/filetimes.sh.

#!/usr/bin/env bash
# go-build.sh SUITE DIR: compile the test binaries of one Go suite
# (go.packages) once, before either side runs, so that neither side's time
# includes the compiler and both run the very same images (static, or
# cgo-linked where the package needs the resolver or os/user: these are what
# the supervisor must handle). For each package PKG (its import path, '/' as
# '_') writes DIR/PKG.test, DIR/PKG.src (the directory it runs in, as go
# test would), DIR/PKG.path (the import path) and DIR/PKG.run (a -test.run
# pattern naming every top-level test, example and fuzz target of the
# package except those in go.exclude). Builds offline (GOPATH mode,
# GOPROXY=off), caches in DIR. Fails when a test of the set mentions
# AF_VSOCK (none may run: they reach the hypervisor). Output in DIR/build.log.
set -u
here=$(cd "$(dirname "$0")" && pwd)
suite=$1 dir=$2
GOROOT=${COMPAT_GOROOT:-/usr/lib/go-1.19}
go=$GOROOT/bin/go
mkdir -p "$dir/cache" "$dir/gopath" "$dir/tmp"
export GOROOT GOCACHE=$dir/cache GOFLAGS= GO111MODULE=off GOPROXY=off TMPDIR=$dir/tmp
exec >>"$dir/build.log" 2>&1
rc=0
while IFS=$'\t' read -r s pkg root tags; do
	[ "$s" = "$suite" ] || continue
	b=$dir/${pkg//\//_}
	if [ "$root" = std ]; then
		gp=$dir/gopath src=$GOROOT/src/$pkg
	else
		gp=$root src=$root/src/$pkg
	fi
	fl=()
	[ "$tags" != - ] && fl=(-tags "$tags")
	echo "== $pkg"
	if ! GOPATH=$gp timeout 600 "$go" test -c "${fl[@]}" -o "$b.test" "$pkg"; then
		echo "go-build.sh: $pkg: go test -c failed"
		rc=1
		continue
	fi
	echo "$src" >"$b.src"
	echo "$pkg" >"$b.path"
	# every top-level test, example and fuzz target, less go.exclude's
	# (listing runs the package's TestMain and init: confined as a run is)
	if ! (cd "$src" && timeout 120 "$here/netns.sh" "$b.test" -test.list '.*') >"$b.list"; then
		echo "go-build.sh: $pkg: -test.list failed"
		rc=1
		continue
	fi
	if grep -i vsock "$b.list"; then
		echo "go-build.sh: $pkg: AF_VSOCK tests would run (add them to go.exclude)"
		rc=1
		continue
	fi
	awk -F'\t' -v p="$pkg" '$1 == p { print $2 }' "$here/go.exclude" >"$b.exclude"
	grep -vxF -f "$b.exclude" "$b.list" | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' |
		paste -sd'|' | sed 's/^/^(/; s/$/)$/' >"$b.run"
done < <(grep -v '^#' "$here/go.packages" | grep -v '^$')
exit $rc

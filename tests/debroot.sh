#!/usr/bin/env bash
# tests/debroot.sh [--include PKGS] [--keep-debs]: print the path of a
# Debian 12 root filesystem (a tar made by mmdebstrap, minbase, from the
# machine's own apt sources), building it the first time; cached under
# build/debroot/ (or $HERMETIC_DEBROOT_CACHE) by package list, so one CI run builds it once for the
# container test and the systemd VM test.
# Without --include it holds systemd as init, what hermetic's package
# depends on, and the tools the tests use inside (iproute2, busybox, kmod);
# --include '' is a bare minbase; --keep-debs keeps the .debs apt fetched
# in /var/cache/apt/archives (a local mirror for tests/integration/quickstart.sh).
# Needs root.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PKGS=systemd,systemd-sysv,iproute2,busybox,kmod,libbpf1,libjson-c5,libzstd1,libelf1,libsystemd0,zlib1g
keep=
while [ $# -gt 0 ]; do
	case $1 in
	--include) PKGS=$2; shift 2 ;;
	--keep-debs) keep=1; shift ;;
	*) echo "tests/debroot.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
# HERMETIC_DEBROOT_CACHE: a directory that outlives the tree (a CI that
# clones afresh each time keeps its roots there); build/debroot/ otherwise.
dir=${HERMETIC_DEBROOT_CACHE:-$TOP/build/debroot}
# (the default root's key is what it always was: its cache stays valid)
key=$(printf '%s bookworm minbase%s' "$PKGS" "${keep:+ keep-debs}" | sha256sum | cut -c1-12)
out=$dir/bookworm-$key.tar
if [ ! -s "$out" ]; then
	mkdir -p "$dir"
	args=(--quiet --variant=minbase)
	[ -n "$PKGS" ] && args+=(--include="$PKGS")
	[ -n "$keep" ] && args+=(--skip=cleanup/apt/cache)
	# The machine's sources (deb822 on Debian 12) name the mirror; nothing
	# else is contacted.
	src=$(ls /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	if [ -n "$src" ]; then
		mmdebstrap "${args[@]}" bookworm "$dir/tmp-$key.tar" - <"$src" >&2
	else
		mmdebstrap "${args[@]}" bookworm "$dir/tmp-$key.tar" - </etc/apt/sources.list >&2
	fi
	mv "$dir/tmp-$key.tar" "$out"
fi
echo "$out"

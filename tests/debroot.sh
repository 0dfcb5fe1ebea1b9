#!/usr/bin/env bash
# tests/debroot.sh: print the path of a Debian 12 root filesystem (a tar
# made by mmdebstrap from the machine's own apt sources), building it the
# first time; cached under build/debroot/ by package list, so one CI run
# builds it once for the container test and the systemd VM test.
# It holds systemd as init, what hermetic's package depends on, and the
# tools the tests use inside (iproute2, busybox, kmod). Needs root.
set -eu
TOP=$(cd "$(dirname "$0")/.." && pwd)
PKGS=systemd,systemd-sysv,iproute2,busybox,kmod,libbpf1,libjson-c5,libzstd1,libelf1,libsystemd0,zlib1g
dir=$TOP/build/debroot
key=$(printf '%s bookworm minbase' "$PKGS" | sha256sum | cut -c1-12)
out=$dir/bookworm-$key.tar
if [ ! -s "$out" ]; then
	mkdir -p "$dir"
	# The machine's sources (deb822 on Debian 12) name the mirror; nothing
	# else is contacted.
	src=$(ls /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	if [ -n "$src" ]; then
		mmdebstrap --quiet --variant=minbase --include="$PKGS" bookworm "$dir/tmp-$key.tar" - <"$src" >&2
	else
		mmdebstrap --quiet --variant=minbase --include="$PKGS" bookworm "$dir/tmp-$key.tar" - \
			</etc/apt/sources.list >&2
	fi
	mv "$dir/tmp-$key.tar" "$out"
fi
echo "$out"

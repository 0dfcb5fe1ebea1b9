#!/usr/bin/env bash
# make deps: install the Debian 12 packages that building and testing need
# (CI's set); make build-deps (tests/deps.sh build): only what building
# needs, and make demo runs with. tests/deps.sh [build] --list prints the set. Does nothing (and needs no network) when
# they are all present.
set -eu
build=(
	make gcc libc6-dev clang libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
	libsystemd-dev libjson-c-dev pkg-config
)
pkgs=(
	"${build[@]}"
	llvm
	# tests: real programs the integration tests run
	# tests/integration/net_dns.sh: the DNS server in the test host's namespace
	dnsmasq-base
	iproute2 curl python3 nodejs default-jdk-headless golang-go openssl sqlite3
	perl git coreutils tar make faketime libfaketime procps util-linux libc6-dev
	python3-pip hyperfine strace
	# tests/integration/static.sh: a static musl C program (musl-gcc -static)
	musl-tools
	# tests/integration/pytest.sh: the plugin with Debian's pytest and xdist,
	# the package pip-installed into a venv
	python3-pytest python3-pytest-xdist python3-pytest-rerunfailures python3-venv
	# tests/integration/lag.sh: a hang guard that must fire while a test computes
	python3-pytest-timeout
	# tests/bench/hunt-bench.sh: blind reruns in one pytest process (pytest
	# --count N), the packaged stand-in for pytest-flakefinder (not in Debian)
	python3-pytest-repeat
	python3-setuptools
	# tests/bench and tests/compat: real test suites, CPython's own, Go's
	# standard library's (go 1.19, its sources), golang.org/x/sync's, and
	# modules that live on timers (cron, backoff, x/time/rate, go-cache)
	libpython3.11-testsuite golang-1.19-go golang-1.19-src golang-golang-x-sync-dev
	golang-github-robfig-cron-dev golang-github-cenkalti-backoff-dev
	golang-golang-x-time-dev golang-github-patrickmn-go-cache-dev
	# tests/bench/daemon-bench.sh: bubblewrap, an anchor for enroll's own cost
	bubblewrap
	libglib2.0-tests
	# tests/fuzz: libFuzzer's runtime for clang 14
	libclang-rt-14-dev
	# tests/vm: Debian's kernel under qemu, where BPF-LSM trampolines work
	qemu-system-x86 linux-image-amd64 busybox-static cpio
	# packaging: make deb, lintian, the units checked and run (service.sh,
	# deb.sh, container.sh, systemd_vm.sh: a Debian root from mmdebstrap,
	# booted under qemu and run by podman)
	systemd dpkg-dev debhelper build-essential lintian mmdebstrap e2fsprogs podman
	# tests/integration/ci_docs.sh: the recipes in docs/ci.md, run
	jq python3-yaml
)
what="make deps"
if [ "${1:-}" = build ]; then
	pkgs=("${build[@]}")
	what="make build-deps"
	shift
fi
# --list: print the set, comma-separated (tests/integration/quickstart.sh)
if [ "${1:-}" = --list ]; then
	(IFS=,; echo "${pkgs[*]}")
	exit 0
fi
missing=()
for p in "${pkgs[@]}"; do
	# nodejs may come from another repository on some machines; any install counts.
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# tests/compat installs tape's suite with npm ci; npm comes with nodejs
# where nodejs is not Debian's (and conflicts with Debian's npm there).
[ "$what" = "make deps" ] && ! command -v npm >/dev/null && missing+=(npm)
[ "${#missing[@]}" = 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "$what: missing packages: ${missing[*]}" >&2
	echo "$what: run as root (sudo $what) to install them" >&2
	exit 1
fi
echo "$what: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

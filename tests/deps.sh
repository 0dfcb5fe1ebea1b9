#!/usr/bin/env bash
# make deps: install the Debian 12 packages that building and testing need.
# Does nothing (and needs no network) when they are all present.
set -eu
pkgs=(
	# build
	make gcc clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev libzstd-dev
	libsystemd-dev libjson-c-dev pkg-config
	# tests: real programs the integration tests run
	iproute2 curl python3 nodejs default-jdk-headless golang-go openssl sqlite3
	perl git coreutils tar make faketime libfaketime procps util-linux libc6-dev
	python3-pip hyperfine strace
	# tests/integration/static.sh: a static musl C program (musl-gcc -static)
	musl-tools
	# tests/integration/pytest.sh: the plugin with Debian's pytest and xdist,
	# the package pip-installed into a venv
	python3-pytest python3-pytest-xdist python3-pytest-rerunfailures python3-venv
	python3-setuptools
	# tests/bench and tests/compat: real test suites, CPython's own
	libpython3.11-testsuite
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
missing=()
for p in "${pkgs[@]}"; do
	# nodejs may come from another repository on some machines; any install counts.
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
# tests/compat installs tape's suite with npm ci; npm comes with nodejs
# where nodejs is not Debian's (and conflicts with Debian's npm there).
command -v npm >/dev/null || missing+=(npm)
[ "${#missing[@]}" = 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
	echo "make deps: missing packages: ${missing[*]}" >&2
	echo "make deps: run as root (sudo make deps) to install them" >&2
	exit 1
fi
echo "make deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

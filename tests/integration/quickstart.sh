# The README's quick start, as written, on a fresh Debian 12 minbase root
# with nothing but what it installs itself: 'apt-get update && apt-get
# install -y make', then 'make demo', as root (no sudo there), which
# installs only the build set (make build-deps) and shows a refused
# connection. The root and a local mirror of exactly the packages the
# build set pulls in are made once by mmdebstrap (tests/debroot.sh) and
# cached under build/debroot/; the run itself is offline: apt's only
# source is that mirror, and the root has a network namespace of its own.
# Everything happens in a mount namespace of this test's own, on a tmpfs.
# timeout: 2400
# (tests/run.sh ends it past that: 557 s measured on 2 cores loaded 5-fold; its own bound inside is 1500 s)
source "$(dirname "$0")/../lib.sh"
need_root quickstart || exit 0

# make demo fails when hermetic itself fails (before, it printed the
# failures and exited 0): hermetic here cannot reach its daemon.
mkdir -p "$T/fake"
cp "$HERMETICD" "$T/fake/hermeticd"
cat >"$T/fake/hermetic" <<EOF
#!/bin/sh
[ "\$1" = enroll ] && export HERMETIC_SOCKET=$T/no-such.sock
exec '$HERMETIC' "\$@"
EOF
chmod +x "$T/fake/hermetic"
HERMETIC_BUILD=$T/fake timeout 120 "$TOP/tests/demo.sh" >"$T/demo-bad.out" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "hermetic itself failed (exit 69)" "$T/demo-bad.out" && ! grep -q "every step showed" "$T/demo-bad.out"; then
	pass "make demo exits 1 when its enrolls fail, saying hermetic itself failed"
else
	fail "make demo exits non-zero when its enrolls fail" "rc=$rc $(tail -n 4 "$T/demo-bad.out" | tr '\n' '|')"
fi

for tool in mmdebstrap dpkg-scanpackages unshare chroot; do
	command -v "$tool" >/dev/null || { fail "the quick start on a minbase root" "$tool not installed (make deps)"; exit 0; }
done
t0=$(date +%s)
# Both roots at once (the first time each takes minutes of mmdebstrap).
"$TOP/tests/debroot.sh" --include '' >"$T/base.path" 2>"$T/debroot.log" &
bp=$!
"$TOP/tests/debroot.sh" --include "$("$TOP/tests/deps.sh" build --list)" --keep-debs >"$T/full.path" 2>>"$T/debroot.log"
frc=$?
wait $bp
brc=$?
base=$(cat "$T/base.path") full=$(cat "$T/full.path")
[ $brc = 0 ] && [ $frc = 0 ] || {
	fail "the quick start on a minbase root" "mmdebstrap could not build the roots (no Debian mirror?): $(tail -n 3 "$T/debroot.log" | tr '\n' '|')"
	exit 0
}
# The mirror: every .deb apt fetched for minbase plus the build set.
repo=${full%.tar}.repo
if [ ! -s "$repo/Packages" ]; then
	rm -rf "$repo.tmp" && mkdir -p "$repo.tmp/x"
	tar -xf "$full" -C "$repo.tmp/x" --wildcards './var/cache/apt/archives/*.deb'
	mv "$repo.tmp"/x/var/cache/apt/archives/*.deb "$repo.tmp/" && rm -rf "$repo.tmp/x"
	(cd "$repo.tmp" && dpkg-scanpackages --multiversion . >Packages 2>/dev/null)
	rm -rf "$repo" && mv "$repo.tmp" "$repo"
fi
t1=$(date +%s)

# The quick start: the README's first code block, up to 'make check'.
awk '/^## Try it/ { f = 1 } f && /^```$/ { n++; next } f && n == 1 { print } n == 2 { exit }' "$TOP/README.md" |
	sed '/^make check/,$d; s/ *#.*$//' >"$T/quickstart.sh"
mkdir -p "$T/root"
cat >"$T/inside.sh" <<'EOF'
set -e
R=$1 base=$2 repo=$3 top=$4
mount -t tmpfs -o size=6G,mode=0755 tmpfs "$R"
tar -xf "$base" -C "$R"
mkdir -p "$R/srv/repo" "$R/root/hermetic"
mount --bind -o ro "$repo" "$R/srv/repo"
rm -f "$R"/etc/apt/sources.list.d/* "$R/etc/apt/sources.list"
echo 'deb [trusted=yes] file:/srv/repo ./' >"$R/etc/apt/sources.list"
(cd "$top" && tar -c --exclude=./build --exclude=./.git .) | tar -x -C "$R/root/hermetic"
cp "$5" "$R/root/quickstart.sh"
mount -t proc proc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/run"
ip link set lo up 2>/dev/null || true
exec chroot "$R" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	HOME=/root TERM=dumb LANG=C.UTF-8 /bin/bash -c '
	cd /root/hermetic
	echo "+ quick start:"; cat /root/quickstart.sh
	bash -e /root/quickstart.sh; rc=$?
	echo "quickstart rc=$rc"
	dpkg-query -W -f="\${Status} \${Package}\n" python3 curl 2>/dev/null | sed -n "s/^install ok installed /installed: /p"
	exit $rc'
EOF
timeout 1500 unshare -m -n --propagation private bash "$T/inside.sh" "$T/root" "$base" "$repo" "$TOP" "$T/quickstart.sh" >"$T/qs.out" 2>&1
rc=$?
t2=$(date +%s)
echo "quickstart: roots and mirror ready in $((t1 - t0)) s (cached after the first run), the quick start took $((t2 - t1)) s"
if [ $rc = 0 ] && grep -qx 'make demo' "$T/quickstart.sh" && grep -q '^apt-get update && apt-get install -y make$' "$T/quickstart.sh" &&
	grep -q 'refused 1 connection: 192.0.2.1:80 (bash)' "$T/qs.out" && grep -q '^make demo: every step showed what it should' "$T/qs.out"; then
	pass "the README's quick start on a fresh Debian 12 minbase root, as root without sudo: make demo shows a refused connection"
else
	fail "the README's quick start on a fresh Debian 12 minbase root" "rc=$rc $(grep -v '^  ' "$T/qs.out" | tail -n 12 | tr '\n' '|')"
fi
if grep -q '^make build-deps: installing ' "$T/qs.out" && ! grep -q '^installed: ' "$T/qs.out" &&
	grep -q 'python3 is not installed' "$T/qs.out"; then
	pass "make demo installed only the build set there (make build-deps; no python3, no curl)"
else
	fail "make demo installed only the build set" "$(grep -E '^(installed|make build-deps)' "$T/qs.out" | tr '\n' '|')"
fi

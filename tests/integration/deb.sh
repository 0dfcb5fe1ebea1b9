# make deb: the package builds with dpkg-buildpackage, lintian reports no
# errors, and it holds what a CI runner needs where Debian wants it. (It is
# installed with dpkg -i and used under systemd in systemd_vm.sh.)
source "$(dirname "$0")/../lib.sh"
cd "$TOP"
if ! make -s deb >"$T/deb.log" 2>&1; then
	fail "make deb" "$(tail -n 8 "$T/deb.log" | tr '\n' '|')"
	exit 1
fi
DEB=$TOP/build/hermetic_$(cat VERSION)_amd64.deb
check "make deb builds $(basename "$DEB")" test -s "$DEB"
lintian --no-tag-display-limit "$DEB" >"$T/lintian.log" 2>&1
if grep -q '^E: ' "$T/lintian.log"; then
	fail "lintian reports no errors" "$(grep '^E: ' "$T/lintian.log" | tr '\n' '|')"
else
	pass "lintian reports no errors ($(grep -c '^W: ' "$T/lintian.log") warnings)"
fi
dpkg-deb -c "$DEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/files"
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
for f in /usr/bin/hermetic /usr/sbin/hermeticd "/usr/lib/$ma/hermetic/libhermetic-preload.so" \
	"/usr/lib/$ma/hermetic/libhermetic-vdso.so" \
	"/usr/lib/$ma/libhermetic.so.0" /lib/systemd/system/hermeticd.socket \
	/lib/systemd/system/hermeticd.service /usr/lib/sysusers.d/hermetic.conf \
	/usr/lib/tmpfiles.d/hermetic.conf /usr/share/man/man1/hermetic.1.gz \
	/usr/share/man/man8/hermeticd.8.gz /usr/share/bash-completion/completions/hermetic \
	/usr/share/bash-completion/completions/hermeticd /usr/share/doc/hermetic/copyright; do
	check "the package holds $f" grep -qx "$f" "$T/files"
done
check "the package's version is VERSION" test "$(dpkg-deb -f "$DEB" Version)" = "$(cat VERSION)"
check "packaging/debian/changelog names VERSION" \
	grep -q "^hermetic ($(cat VERSION))" packaging/debian/changelog
deps=$(dpkg-deb -f "$DEB" Depends)
check "Depends has the libraries and systemd-sysusers" sh -c "
	echo '$deps' | grep -q libbpf1 && echo '$deps' | grep -q libjson-c5 && echo '$deps' | grep -q systemd-sysusers"
dpkg-deb -e "$DEB" "$T/ctl"
# The group exists before the socket (SocketGroup=hermetic) starts.
check "postinst creates the group before it starts the socket" awk '
	/systemd-sysusers .*hermetic.conf/ && !u { u = NR }
	/deb-systemd-invoke \$_dh_action .hermeticd.socket./ { s = NR }
	END { exit !(u && s && u < s) }' "$T/ctl/postinst"
# The installed CLI finds the shim in the multiarch directory.
mkdir "$T/x" && dpkg-deb -x "$DEB" "$T/x"
check "the packaged CLI was built to find the shim in /usr/lib/$ma/hermetic" \
	grep -qa "/usr/lib/$ma/hermetic" "$T/x/usr/bin/hermetic"
# python3-hermetic: the Python package and the pytest plugin's entry point
PYDEB=$TOP/build/python3-hermetic_$(cat VERSION)_all.deb
check "make deb builds $(basename "$PYDEB")" test -s "$PYDEB"
dpkg-deb -c "$PYDEB" | awk '{ print $6 }' | sed 's|^\./|/|' >"$T/pyfiles"
for f in /usr/lib/python3/dist-packages/hermetic/__init__.py \
	/usr/lib/python3/dist-packages/hermetic/pytest_plugin.py \
	"/usr/lib/python3/dist-packages/hermetic-$(cat VERSION).dist-info/entry_points.txt"; do
	check "python3-hermetic holds $f" grep -qx "$f" "$T/pyfiles"
done
check "hermetic holds no Python" sh -c "! grep -q dist-packages '$T/files'"
lintian --no-tag-display-limit "$PYDEB" >"$T/lintian-py.log" 2>&1
if grep -q '^E: ' "$T/lintian-py.log"; then
	fail "lintian reports no errors for python3-hermetic" "$(grep '^E: ' "$T/lintian-py.log" | tr '\n' '|')"
else
	pass "lintian reports no errors for python3-hermetic ($(grep -c '^W: ' "$T/lintian-py.log") warnings)"
fi

# make deb: the package builds with dpkg-buildpackage, lintian reports no
# errors, and it holds what a CI runner needs where Debian wants it. (It is
# installed with dpkg -i and used under systemd in systemd_vm.sh.)
# timeout: 1200
# (tests/run.sh ends it past that: 284 s measured on 2 cores loaded 5-fold)
source "$(dirname "$0")/../lib.sh"
cd "$TOP"
if ! make -s deb >"$T/deb.log" 2>&1; then
	fail "make deb" "$(tail -n 8 "$T/deb.log" | tr '\n' '|')"
	exit 1
fi
DEB=$TOP/build/hermetic_$(cat VERSION)_amd64.deb
check "make deb builds $(basename "$DEB")" test -s "$DEB"
# lint NAME DEB LOG: PASS when lintian ran to its end and reported no
# error. A lintian that is missing or failed to run is a failure, not a
# pass: no E: line from no lintian is no news (exit 0: no error; 2: errors
# found (--fail-on error, the default), listed as E: lines; 1: lintian's
# own run-time error).
lint() {
	local rc
	if ! command -v lintian >/dev/null; then
		fail "$1" "lintian is not installed (make deps installs it)"
		return
	fi
	lintian --no-tag-display-limit "$2" >"$3" 2>&1
	rc=$?
	if [ "$rc" = 0 ] && ! grep -q '^E: ' "$3"; then
		pass "$1 ($(grep -c '^W: ' "$3") warnings)"
	elif [ "$rc" = 2 ] && grep -q '^E: ' "$3"; then
		fail "$1" "$(grep '^E: ' "$3" | tr '\n' '|')"
	else
		fail "$1" "lintian exited $rc: $(tail -n 5 "$3" | tr '\n' '|')"
	fi
}
lint "lintian reports no errors" "$DEB" "$T/lintian.log"
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
lint "lintian reports no errors for python3-hermetic" "$PYDEB" "$T/lintian-py.log"

# make install honours DESTDIR and prefix, and the installed CLI finds the
# installed shim (../lib/hermetic) and the man pages are in place.
source "$(dirname "$0")/../lib.sh"

D=$T/destdir
if ! make -s -C "$TOP" install DESTDIR="$D" prefix=/usr >"$T/install.log" 2>&1; then
	fail "make install" "$(tail -n 3 "$T/install.log" | tr '\n' '|')"
	exit 1
fi
pass "make install DESTDIR prefix=/usr"
for f in usr/bin/hermetic usr/sbin/hermeticd usr/lib/hermetic/libhermetic-preload.so \
	usr/lib/hermetic/libhermetic-vdso.so \
	usr/lib/libhermetic.so usr/lib/libhermetic.so.0 usr/include/hermetic/hermetic.h usr/share/man/man1/hermetic.1 \
	usr/share/man/man8/hermeticd.8 usr/share/bash-completion/completions/hermetic \
	usr/share/bash-completion/completions/hermeticd usr/lib/systemd/system/hermeticd.socket \
	usr/lib/systemd/system/hermeticd.service usr/lib/sysusers.d/hermetic.conf \
	usr/lib/tmpfiles.d/hermetic.conf usr/lib/python3/dist-packages/hermetic/pytest_plugin.py; do
	if [ -e "$D/$f" ]; then pass "installed $f"; else fail "installed $f" "missing"; fi
done
check "nothing installed outside DESTDIR/prefix" test -z "$(find "$D" -mindepth 1 -maxdepth 1 ! -name usr)"
check "installed hermetic --version" "$D/usr/bin/hermetic" --version
check "installed hermeticd --help" "$D/usr/sbin/hermeticd" --help
# The installed CLI finds its shim: with --no-daemon it needs nothing else.
out=$("$D/usr/bin/hermetic" enroll --no-daemon --seed 1 -- sh -c 'echo "$LD_PRELOAD"' 2>/dev/null)
if [ "$out" = "$D/usr/lib/hermetic/libhermetic-preload.so" ]; then
	pass "installed hermetic preloads the installed shim"
else
	fail "installed hermetic preloads the installed shim" "LD_PRELOAD=$out"
fi
check "man page renders" sh -c "man -l '$D/usr/share/man/man1/hermetic.1' >/dev/null 2>&1 || groff -man -Tutf8 '$D/usr/share/man/man1/hermetic.1' >/dev/null"
# the Python package as Debian's python finds it: importable, the pytest
# plugin registered under the entry point pytest loads
out=$(PYTHONPATH=$D/usr/lib/python3/dist-packages /usr/bin/python3 -c 'import importlib.metadata as m, hermetic
print(m.version("hermetic"), [e.value for e in m.entry_points(group="pytest11") if e.name == "hermetic"], hermetic.current())' 2>&1)
[ "$out" = "$(cat VERSION) ['hermetic.pytest_plugin'] None" ] && pass "installed Python package and its pytest entry point" ||
	fail "installed Python package and its pytest entry point" "$out"

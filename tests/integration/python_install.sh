# The Python package installs offline: its build backend is in the tree
# (python/_build, standard library only), so 'pip install ./python' needs
# no index, no setuptools and no wheel, with or without build isolation.
# Every pip here runs in a network namespace of its own with no network.
source "$(dirname "$0")/../lib.sh"
need_root python_install || exit 0
SYSPY=/usr/bin/python3
# offline CMD...: CMD with no network at all (a new, empty network namespace).
offline() { unshare -n -- "$@"; }
cp -r "$TOP/python" "$T/pkg"
rm -rf "$T/pkg/build" "$T"/pkg/*.egg-info

# plugin_loads VENV: the installed package's pytest11 entry point names the plugin.
plugin_loads() {
	"$1/bin/python" -c '
import importlib.metadata as m, hermetic
eps = [e.value for e in m.entry_points(group="pytest11") if e.name == "hermetic"]
assert eps == ["hermetic.pytest_plugin"], eps
print(m.version("hermetic"))'
}

# install NAME PYTHON VENV_OPTS PIP_OPTS: a venv without pip (so without
# setuptools and wheel), and PYTHON's own pip installing the package into
# it (pip --python), offline.
install() {
	local name=$1 py=$2 vopts=$3 popts=$4 v=$T/v$RANDOM out
	if ! "$py" -m venv --without-pip $vopts "$v" >"$T/venv.log" 2>&1; then
		fail "$name" "venv: $(tail -n 2 "$T/venv.log" | tr '\n' '|')"
		return
	fi
	if [ -z "$vopts" ] && "$v/bin/python" -c 'import setuptools' 2>/dev/null; then
		fail "$name" "setuptools importable in the venv"
		return
	fi
	if ! offline "$py" -m pip --python "$v/bin/python" install -q --no-index $popts "$T/pkg" >"$T/pip.log" 2>&1; then
		fail "$name" "$(tail -n 3 "$T/pip.log" | tr '\n' '|')"
		return
	fi
	if out=$(plugin_loads "$v" 2>&1) && [ "$out" = "$(cat "$TOP/VERSION")" ]; then
		pass "$name"
	else
		fail "$name" "$out"
	fi
}
install "pip install ./python offline, build isolation on, no setuptools or wheel (Debian's python3)" \
	"$SYSPY" "" ""
install "pip install --no-build-isolation ./python offline, no setuptools or wheel (Debian's python3)" \
	"$SYSPY" "" "--no-build-isolation"
install "pip install ./python offline into a venv with the system site packages" \
	"$SYSPY" "--system-site-packages" ""
# The python3 first on PATH (a pyenv one here, without wheel; Debian's on CI).
install "pip install ./python offline with the python3 on PATH ($(command -v python3))" \
	"$(command -v python3)" "" ""

# pip install -e: the editable install imports from the tree itself.
v=$T/ve
"$SYSPY" -m venv --without-pip "$v" >/dev/null 2>&1
if offline "$SYSPY" -m pip --python "$v/bin/python" install -q --no-index -e "$T/pkg" >"$T/pipe.log" 2>&1 &&
	[ "$("$v/bin/python" -c 'import hermetic; print(hermetic.__file__)' 2>&1)" = "$T/pkg/hermetic/__init__.py" ] &&
	plugin_loads "$v" >/dev/null 2>&1; then
	pass "pip install -e ./python offline: hermetic imports from the tree"
else
	fail "pip install -e ./python offline" "$(tail -n 3 "$T/pipe.log" | tr '\n' '|') $("$v/bin/python" -c 'import hermetic; print(hermetic.__file__)' 2>&1 | tail -n 1)"
fi
# The wheel holds the package, its metadata and nothing of the tree's.
offline "$SYSPY" -m pip wheel -q --no-index -w "$T/wheels" "$T/pkg" >"$T/wheel.log" 2>&1
check "pip wheel ./python: hermetic/*.py, the dist-info and nothing else" "$SYSPY" -c '
import sys, zipfile, glob
w = glob.glob(sys.argv[1] + "/hermetic-*-py3-none-any.whl")
assert len(w) == 1, w
names = sorted(zipfile.ZipFile(w[0]).namelist())
assert all(n.startswith(("hermetic/", "hermetic-")) for n in names), names
assert "hermetic/pytest_plugin.py" in names and any(n.endswith(".dist-info/RECORD") for n in names), names
' "$T/wheels"

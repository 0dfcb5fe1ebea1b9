# The hermetic binary links only libc: json-c, zstd and zlib are loaded on
# their first use (cli/lazy_libs.c), libm not at all. An enroll that writes
# no JSON and no journal loads none of them; one that will, loads them
# before its run; a missing library fails only what needs it, naming it.
source "$(dirname "$0")/../lib.sh"

# What the binary asks the dynamic loader for at start.
if ! command -v readelf >/dev/null; then
	fail "hermetic needs only libc at start" "readelf (binutils) is missing"
else
	# (a sanitized build's runtimes, make SANITIZE=..., come with it)
	needed=$(readelf -d "$HERMETIC" | awk '/\(NEEDED\)/ { gsub(/[][]/, "", $NF); print $NF }' |
		grep -Ev '^lib(a|ub|t|l)san\.so' | sort | tr '\n' ' ')
	case " $needed" in
	" libc.so.6 ") pass "hermetic needs only libc at start" ;;
	*) fail "hermetic needs only libc at start" "NEEDED: $needed" ;;
	esac
fi
soname=$(sed -n 's/^#define SONAME_JSON_C "\(.*\)"$/\1/p' "$B/sonames.h")
case "$soname" in
libjson-c.so.*) pass "the build read json-c's SONAME ($soname)" ;;
*) fail "the build read json-c's SONAME" "$B/sonames.h: '$soname'" ;;
esac

need_root lazy_libs || exit 0
start_daemon || { fail "daemon starts" "see above"; exit 1; }
cd "$T" # not a git checkout: --now's default reads no git object (zlib)

# loaded LOG LIB: the loader's debug log shows LIB opened (by any process).
loaded() { grep -q "file=$2 .*\[0\];  *\(needed\|dynamically loaded\) by" "$1"; }

LD_DEBUG=files "$HERMETIC" enroll -- true 2>"$T/ld1"
rc=$?
if [ $rc != 0 ] || ! loaded "$T/ld1" libc.so.6; then
	fail "enroll -- true loads none of json-c, zstd, zlib, libm" "rc=$rc, or no loader log: $(tail -n 3 "$T/ld1" | tr '\n' '|')"
elif grep -E 'file=(libjson-c|libzstd|libz|libm)\.so[^ ]* .*(needed|dynamically loaded) by' "$T/ld1" |
	grep -Ev 'needed by [^ ]*/lib(a|ub|t|l)san\.so' >"$T/ld1.hits"; then
	fail "enroll -- true loads none of json-c, zstd, zlib, libm" "$(head -n 3 "$T/ld1.hits" | tr '\n' '|')"
else
	pass "enroll -- true loads none of json-c, zstd, zlib, libm"
fi

# --report: json-c, loaded before the command runs (the loader's log of
# hermetic comes before the command's own start, the shim's load).
LD_DEBUG=files "$HERMETIC" enroll --report "$T/r.jsonl" -- true 2>"$T/ld2"
rc=$?
jl=$(grep -n "file=$soname .*dynamically loaded by" "$T/ld2" | head -n 1 | cut -d: -f1)
sl=$(grep -n 'file=.*libhermetic-preload.so .*needed by\|file=.*libhermetic-preload.so .*dynamically loaded' "$T/ld2" | head -n 1 | cut -d: -f1)
if [ $rc = 0 ] && [ -n "$jl" ] && [ -n "$sl" ] && [ "$jl" -lt "$sl" ] &&
	python3 -c 'import json, sys; d = json.loads(open(sys.argv[1]).readline()); sys.exit(d["exit_status"] != 0)' "$T/r.jsonl"; then
	pass "enroll --report loads json-c before the run, and writes its line"
else
	fail "enroll --report loads json-c before the run, and writes its line" "rc=$rc json-c at line '${jl}', shim at '${sl}'"
fi

# A copy of hermetic whose json-c SONAME names nothing (same length, so
# the binary stays whole): the loader cannot find it.
mkdir "$T/bin"
cp "$B/libhermetic-preload.so" "$B/libhermetic-vdso.so" "$T/bin/"
bad=${soname/json-c/json-X}
LC_ALL=C sed "s/$soname/$bad/g" "$HERMETIC" >"$T/bin/hermetic" && chmod 755 "$T/bin/hermetic"
if cmp -s "$HERMETIC" "$T/bin/hermetic" || ! grep -qa "$bad" "$T/bin/hermetic"; then
	fail "a copy of hermetic without json-c" "the SONAME was not found in $HERMETIC"
else
	"$T/bin/hermetic" enroll -- sh -c 'echo ran >"$1"' sh "$T/ran1" >"$T/out3" 2>"$T/err3"
	rc=$?
	if [ $rc = 0 ] && [ -s "$T/ran1" ]; then
		pass "without json-c, enroll -- CMD still runs"
	else
		fail "without json-c, enroll -- CMD still runs" "rc=$rc $(tr '\n' '|' <"$T/err3")"
	fi
	"$T/bin/hermetic" enroll --report "$T/r2.jsonl" -- sh -c 'echo ran >"$1"' sh "$T/ran2" >"$T/out4" 2>"$T/err4"
	rc=$?
	if [ $rc = 70 ] && [ ! -e "$T/ran2" ] && grep -q "cannot load $bad, which JSON" "$T/err4"; then
		pass "without json-c, enroll --report fails before the run, naming the library (70)"
	else
		fail "without json-c, enroll --report fails before the run, naming the library (70)" \
			"rc=$rc ran=$([ -e "$T/ran2" ] && echo yes) $(tr '\n' '|' <"$T/err4")"
	fi
	"$T/bin/hermetic" status --json >"$T/out5" 2>"$T/err5"
	rc=$?
	if [ $rc = 70 ] && grep -q "hermetic: cannot load $bad" "$T/err5"; then
		pass "without json-c, status --json ends at its first JSON call, naming the library (70)"
	else
		fail "without json-c, status --json ends at its first JSON call, naming the library (70)" \
			"rc=$rc $(tr '\n' '|' <"$T/err5")"
	fi
fi
"$HERMETIC" status --json >"$T/out6" 2>"$T/err6"
check "with json-c, status --json parses" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$T/out6"

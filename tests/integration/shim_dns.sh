#!/usr/bin/env bash
# DNS under --network block: /etc/hosts names and numeric addresses resolve,
# anything else fails at once, names allowed with --allow go to the resolver.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built dns || exit 0
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || { skip dns "python3 not installed"; exit 0; }

cat >"$T/dns.py" <<'PYEOF'
import socket, sys
def gai(name):
    try:
        return "ok " + socket.getaddrinfo(name, 80, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
    except socket.gaierror as e:
        return "gaierror %d" % e.errno
def ghbn(name):
    try:
        return "ok " + socket.gethostbyname(name)
    except socket.gaierror as e:
        return "gaierror %d" % e.errno
def gni(addr):
    try:
        return "ok " + socket.getnameinfo((addr, 80), 0)[0]
    except socket.gaierror as e:
        return "gaierror %d" % e.errno
def gni_req(addr):
    try:
        return "ok " + socket.getnameinfo((addr, 80), socket.NI_NAMEREQD)[0]
    except socket.gaierror as e:
        return "gaierror %d" % e.errno
for name in sys.argv[1:]:
    print(name, "gai", gai(name), "ghbn", ghbn(name))
print("gni 192.0.2.1", gni("192.0.2.1"))
print("gni_req 192.0.2.1", gni_req("192.0.2.1"))
print("gni 127.0.0.1", gni("127.0.0.1"))
PYEOF

start=$(now_ms)
out=$(shim_run 42 timeout 30 "$PY" "$T/dns.py" localhost 127.0.0.1 example.com hermetic-nonexistent.invalid 2>&1)
elapsed=$(($(now_ms) - start))
check_line() {
	if grep -qx "$2" <<<"$out"; then pass "$1"; else fail "$1" "$(tr '\n' '|' <<<"$out")"; fi
}
check_line "dns /etc/hosts name resolves" "localhost gai ok 127.0.0.1 ghbn ok 127.0.0.1"
check_line "dns numeric passes" "127.0.0.1 gai ok 127.0.0.1 ghbn ok 127.0.0.1"
# What an offline machine says (a network namespace with nothing but
# loopback; the resolver's send fails there): the shim must say the same,
# EAI_AGAIN (-3 in glibc), not "no such name".
offline=$(unshare -n timeout 30 "$PY" "$T/dns.py" example.com 2>&1)
off_gai=$(grep '^example.com ' <<<"$offline")
off_gni=$(grep '^gni 192.0.2.1 ' <<<"$offline")
off_req=$(grep '^gni_req 192.0.2.1 ' <<<"$offline")
if [ "$off_gai" = "example.com gai gaierror -3 ghbn gaierror -3" ]; then
	pass "offline control: a name fails with EAI_AGAIN bare in a network namespace"
else
	fail "offline control: a name fails with EAI_AGAIN bare in a network namespace" "$offline"
fi
check_line "dns other names refused as offline ($off_gai)" "$off_gai"
check_line "dns reverse lookup fails as offline ($off_gni)" "$off_gni"
check_line "dns reverse lookup with NI_NAMEREQD fails as offline ($off_req)" "$off_req"
grep -q "^gni 127.0.0.1 ok " <<<"$out" && pass "dns reverse lookup of /etc/hosts address" ||
	fail "dns reverse lookup of /etc/hosts address" "$out"
[ "$elapsed" -lt 3000 ] && pass "dns refusal is fast" || fail "dns refusal is fast" "${elapsed} ms"

# perl's gethostbyname goes through gethostbyname(3)
if command -v perl >/dev/null; then
	out=$(shim_run 42 timeout 30 perl -e 'print defined(gethostbyname("example.com")) ? "found\n" : "refused\n"')
	[ "$out" = refused ] && pass "dns gethostbyname refused" || fail "dns gethostbyname refused" "$out"
fi

# An allowed name goes to the real resolver, a refused one never gets there:
# watch for the resolver reading /etc/resolv.conf or talking to port 53.
if command -v strace >/dev/null; then
	resolver() {
		SHIM_DNS_ALLOW=$1 shim_run 42 timeout 30 strace -f -e trace=openat,connect "$PY" -c '
import socket
try: socket.getaddrinfo("example.com", 80)
except OSError: pass' 2>&1 | grep -c 'resolv.conf\|htons(53)'
	}
	[ "$(resolver example.com,other.test:443)" -gt 0 ] && pass "dns allowed name reaches the resolver" ||
		fail "dns allowed name reaches the resolver" "no resolver activity seen"
	[ "$(resolver other.test)" = 0 ] && pass "dns refused name never reaches the resolver" ||
		fail "dns refused name never reaches the resolver" "resolver activity seen"
	[ "$(resolver '*.com')" -gt 0 ] && [ "$(resolver '*.example.com')" = 0 ] &&
		pass "dns *.NAME lets the names below NAME through, not NAME" ||
		fail "dns *.NAME lets the names below NAME through, not NAME" "resolver activity not as expected"
else
	skip "dns allowed name reaches the resolver" "strace not installed"
fi

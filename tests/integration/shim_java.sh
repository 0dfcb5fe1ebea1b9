#!/usr/bin/env bash
# Java 17 under the shim: currentTimeMillis, UUID, SecureRandom, Thread.sleep,
# and a JVM that neither hangs nor spins.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built java || exit 0
have java java || exit 0

cat >"$T/T.java" <<'JEOF'
import java.security.SecureRandom;
import java.util.UUID;

public class T {
	public static void main(String[] args) throws Exception {
		long t0 = System.currentTimeMillis();
		System.out.println("millis " + t0);
		System.out.println("uuid " + UUID.randomUUID());
		System.out.println("securerandom " + new SecureRandom().nextLong());
		long n0 = System.nanoTime(); /* each reading ticks: take it right before */
		Thread.sleep(10000);
		System.out.println("slept " + (System.currentTimeMillis() - t0) + " "
				   + (System.nanoTime() - n0) / 1000000);
	}
}
JEOF

start=$(now_ms)
det "java deterministic" java "$T/T.java"
elapsed=$(($(now_ms) - start))
grep -qx "millis 1577836800000" <<<"$DET_OUT" && pass "java currentTimeMillis" || fail "java currentTimeMillis" "$(tr '\n' '|' <<<"$DET_OUT")"
grep -qx "slept 10000 10000" <<<"$DET_OUT" && pass "java Thread.sleep(10000)" || fail "java Thread.sleep(10000)" "$(tr '\n' '|' <<<"$DET_OUT")"
# three JVMs that each sleep 10 s: far less than 30 s of wall time, no hang
[ "$elapsed" -lt 25000 ] && pass "java sleep at once, no hang" || fail "java sleep at once, no hang" "3 runs took ${elapsed} ms"
a=$(shim_run 42 timeout 60 java "$T/T.java") c=$(shim_run 43 timeout 60 java "$T/T.java")
for k in uuid securerandom; do
	va=$(grep "^$k " <<<"$a") vc=$(grep "^$k " <<<"$c")
	[ -n "$va" ] && [ "$va" != "$vc" ] && pass "java $k follows the seed" ||
		fail "java $k follows the seed" "$va / $vc"
done

# user.home comes from the password database, not HOME: --fs isolate moves
# it into the run's root too (preload/passwd.c).
mkdir -p "$T/tp"
out=$("$HERMETIC" enroll $SHIM_DAEMON_OPT --fs isolate --temp-parent "$T/tp" --print-boundary -- \
	java -XshowSettings:properties -version 2>&1)
root=$(sed -n 's/.*"root": *"\([^"]*\)".*/\1/p' <<<"$out" | head -n 1)
if [ -n "$root" ] && grep -q "^ *user.home = $root/home$" <<<"$out"; then
	pass "java user.home under --fs isolate is the run's HOME"
else
	fail "java user.home under --fs isolate is the run's HOME" "root '$root': $(grep -m 1 'user.home' <<<"$out")"
fi

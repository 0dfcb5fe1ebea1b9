#!/usr/bin/env bash
# Node 20 under the shim: Date.now, Math.random, crypto.randomUUID, timers.
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built node || exit 0
have node node || exit 0

cat >"$T/t.js" <<'JSEOF'
const crypto = require('crypto');
const t0 = Date.now();
console.log('date', t0);
console.log('random', Math.random());
console.log('uuid', crypto.randomUUID());
console.log('bytes', crypto.randomBytes(8).toString('hex'));
setTimeout(() => console.log('timeout fired after', Date.now() - t0), 10000);
JSEOF

start=$(now_ms)
det "node deterministic" node "$T/t.js"
elapsed=$(($(now_ms) - start))
grep -qx "date 1577836800000" <<<"$DET_OUT" && pass "node Date.now()" || fail "node Date.now()" "$DET_OUT"
grep -qx "timeout fired after 10000" <<<"$DET_OUT" && pass "node setTimeout 10 s fires" ||
	fail "node setTimeout 10 s fires" "$(tr '\n' '|' <<<"$DET_OUT")"
# three runs, each with a 10 s timer: well under 10 s of wall time in all
[ "$elapsed" -lt 9000 ] && pass "node setTimeout at once in wall time" ||
	fail "node setTimeout at once in wall time" "3 runs took ${elapsed} ms"
a=$(shim_run 42 timeout 60 node "$T/t.js") c=$(shim_run 43 timeout 60 node "$T/t.js")
for k in random uuid bytes; do
	va=$(grep "^$k " <<<"$a") vc=$(grep "^$k " <<<"$c")
	[ -n "$va" ] && [ "$va" != "$vc" ] && pass "node $k follows the seed" ||
		fail "node $k follows the seed" "$va / $vc"
done

#!/usr/bin/env bash
# Time-based UUIDs under the shim: Python's uuid.uuid1() and libuuid's
# uuid_generate_time from C work any number of times under the frozen
# clock, repeat under one seed, change with another, and never repeat within
# a process or between a parent and its fork child (preload/uuid.c).
source "$(dirname "$0")/../lib.sh"
source "$(dirname "$0")/shim_lib.sh"
shim_built uuid || exit 0
cd "$T" || exit 1

for py in python3 /usr/bin/python3; do
	command -v "$py" >/dev/null || continue
	det "uuid1: $py, 40 calls" "$py" -c '
import uuid
u = [uuid.uuid1() for _ in range(40)]
assert len(set(u)) == 40, "repeated"
assert all(x.version == 1 for x in u)
print(u[0], u[-1], uuid.getnode())'
done

# libuuid from C, without its headers (libuuid1 is part of every Debian).
LIBUUID=$(ldconfig -p | sed -n 's/.*libuuid\.so\.1 (libc6,x86-64) => //p' | head -n 1)
cat >"$T/gen.c" <<'EOF'
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
void uuid_generate_time(unsigned char out[16]);
int uuid_generate_time_safe(unsigned char out[16]);
void uuid_generate_random(unsigned char out[16]);
void uuid_generate(unsigned char out[16]);
static void put(const char *what, const unsigned char u[16])
{
	printf("%s ", what);
	for (int i = 0; i < 16; i++)
		printf("%02x", u[i]);
	printf("\n");
}
int main(void)
{
	unsigned char u[16], first[16], prev[16] = { 0 };
	int repeated = 0;

	for (int i = 0; i < 100; i++) {
		uuid_generate_time(u);
		repeated += !memcmp(u, prev, 16);
		memcpy(prev, u, 16);
		if (i == 0)
			memcpy(first, u, 16);
	}
	put("time0", first);
	put("time99", u);
	uuid_generate_time_safe(u);
	put("safe", u);
	uuid_generate_random(u);
	put("random", u);
	uuid_generate(u);
	put("generate", u);
	fflush(stdout);
	if (fork() == 0) {
		uuid_generate_time(u);
		put("child", u);
		return 0;
	}
	wait(NULL);
	printf("repeated %d version %d\n", repeated, u[6] >> 4);
	return 0;
}
EOF
if [ -z "$LIBUUID" ] || ! "$SHIM_CC" -o "$T/gen" "$T/gen.c" "$LIBUUID" 2>"$T/cc.err"; then
	fail "libuuid: build" "${LIBUUID:-no libuuid.so.1} $(head -n 3 "$T/cc.err" | tr '\n' '|')"
else
	det "libuuid: uuid_generate_time and friends from C" "$T/gen"
	out=$DET_OUT
	t0=$(sed -n 's/^time0 //p' <<<"$out") child=$(sed -n 's/^child //p' <<<"$out")
	if grep -q "^repeated 0 version 4$" <<<"$out" && [ "${t0:12:1}" = 1 ] && [ -n "$child" ] &&
		! grep -q "^time.* $child$" <<<"$out" && [ "${child:20}" != "${t0:20}" ]; then
		pass "libuuid: version 1, never repeated, a fork child has its own node"
	else
		fail "libuuid: version 1, never repeated, a fork child has its own node" "$(tr '\n' '|' <<<"$out")"
	fi
fi

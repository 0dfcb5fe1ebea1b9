// SPDX-License-Identifier: MIT
/*
 * libuuid's generators, answered by the shim. libuuid keeps the state of its
 * time-based UUIDs across processes (/var/lib/libuuid/clock.txt, or the
 * uuidd daemon over a unix socket), and mixes the pid, the parent's pid and
 * the thread id into every random byte it hands out (random() seeded from
 * them, XORed over getrandom's bytes). So its UUIDs differ between runs with
 * one seed whatever the shim does with the clock and getrandom. And
 * uuid_generate_time waits for the microsecond to change after ten UUIDs in
 * one, which a frozen virtual clock never does.
 *
 * Under seeded entropy the shim generates them itself, as RFC 4122 describes,
 * from the virtual clock and the seeded stream, both through the shim's own
 * entry points (so recording and replay see them):
 *   uuid_generate, uuid_generate_random   version 4: 16 bytes of getrandom
 *   uuid_generate_time, ..._time_safe     version 1: the virtual wall clock in
 *       100 ns steps since 1582-10-15, one step past the last UUID's when the
 *       clock has not moved (a process never repeats a UUID and never waits);
 *       a clock sequence and a node drawn once per process, the node with
 *       the multicast bit set (RFC 4122 4.5: no MAC address, so a UUID
 *       depends on the seed, the process's place in the run and the virtual
 *       clock only).
 * Nothing coordinates the processes of a run, as with libuuid without its
 * state file: uuid_generate_time_safe returns -1 ("not known to be
 * unique"). Python's uuid1() and uuid.getnode() come here through
 * uuid_generate_time_safe. With --rng off these are libuuid's own.
 */
#include <dlfcn.h>
#include <string.h>
#include <sys/random.h>
#include "shim.h"

#define UUID_EPOCH 0x01B21DD213814000ULL /* 100 ns steps from 1582-10-15 to 1970 */

static struct {
	pthread_mutex_t lock;
	pid_t pid; /* process that drew node and clock sequence: a fork child redraws */
	uint64_t last; /* timestamp of the last time-based UUID */
	uint16_t clock_seq;
	uint8_t node[6];
} uu = { .lock = PTHREAD_MUTEX_INITIALIZER };

typedef void (*gen_fn)(unsigned char out[16]);

/* libuuid's own function, when the stream is off. */
static void *real_fn(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static bool ours(void)
{
	return hm_ready() && hm.active && hm.rng;
}

static void random_v4(unsigned char out[16])
{
	getrandom(out, 16, 0);
	out[6] = (out[6] & 0x0f) | 0x40;
	out[8] = (out[8] & 0x3f) | 0x80;
}

static void time_v1(unsigned char out[16])
{
	struct timespec ts;
	uint64_t t;

	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 10000000ULL + (uint64_t)ts.tv_nsec / 100 + UUID_EPOCH;
	pthread_mutex_lock(&uu.lock);
	if (uu.pid != hm.pid) {
		uint8_t b[8];

		getrandom(b, sizeof(b), 0);
		uu.clock_seq = (b[0] << 8 | b[1]) & 0x3fff;
		memcpy(uu.node, b + 2, 6);
		uu.node[0] |= 0x01; /* multicast: not a hardware address */
		uu.last = 0;
		uu.pid = hm.pid;
	}
	if (t <= uu.last)
		t = uu.last + 1;
	uu.last = t;
	pthread_mutex_unlock(&uu.lock);
	out[0] = t >> 24;
	out[1] = t >> 16;
	out[2] = t >> 8;
	out[3] = t;
	out[4] = t >> 40;
	out[5] = t >> 32;
	out[6] = ((t >> 56) & 0x0f) | 0x10;
	out[7] = t >> 48;
	out[8] = (uu.clock_seq >> 8) | 0x80;
	out[9] = uu.clock_seq;
	memcpy(out + 10, uu.node, 6);
}

HM_EXPORT void uuid_generate_random(unsigned char out[16])
{
	gen_fn real;

	if (ours())
		random_v4(out);
	else if ((real = (gen_fn)real_fn("uuid_generate_random")))
		real(out);
}

HM_EXPORT void uuid_generate(unsigned char out[16])
{
	gen_fn real;

	if (ours())
		random_v4(out);
	else if ((real = (gen_fn)real_fn("uuid_generate")))
		real(out);
}

HM_EXPORT void uuid_generate_time(unsigned char out[16])
{
	gen_fn real;

	if (ours())
		time_v1(out);
	else if ((real = (gen_fn)real_fn("uuid_generate_time")))
		real(out);
}

HM_EXPORT int uuid_generate_time_safe(unsigned char out[16])
{
	int (*real)(unsigned char[16]);

	if (ours()) {
		time_v1(out);
		return -1;
	}
	real = (int (*)(unsigned char[16]))real_fn("uuid_generate_time_safe");
	return real ? real(out) : -1;
}

// SPDX-License-Identifier: MIT
/* hermetic hunt's pure parts: the Wilson interval, the masking of a
 * failure's last line, --vary parsing, and the settings each try draws
 * (fixed by the hunt seed; the clock's draws land on month ends, Feb 29 and
 * near DST changes as often as docs/hunting.md says). */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>
#include "../../cli/hunt_stats.c"
#include "../../cli/hunt_axes.c"
#include "test.h"
#include "die_stub.h"

static int near(double a, double b)
{
	return fabs(a - b) < 0.0005;
}

static int masked(const char *in, const char *want)
{
	char out[256];

	hunt_mask(in, out, sizeof(out));
	if (strcmp(out, want))
		printf("# mask '%s': '%s', want '%s'\n", in, out, want);
	return !strcmp(out, want);
}

/* hunt_sqrt against libm's (correctly rounded) sqrt over x from 2^-1074 to
 * 2^1023 and the variances hunt takes (p(1-p)/n): the greatest distance in
 * ulps (SIZE_MAX when a result is not finite). */
static size_t sqrt_worst(size_t *n_exact, size_t *n_all)
{
	size_t worst = 0, d;
	double x, got, want;
	uint64_t gi, wi, k, n;

	*n_exact = *n_all = 0;
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < 20000; i++) {
			if (!pass) { /* spread over the exponents, odd mantissas */
				x = ldexp(1.0 + (i % 97) / 97.0, -1074 + i * 2097 / 20000);
			} else { /* what hunt_wilson asks: k of n tries */
				n = 1 + (uint64_t)i % 5000;
				k = ((uint64_t)i * 7919) % (n + 1);
				x = ((double)k / n) * (1 - (double)k / n) / n + 3.84 / (4.0 * n * n);
			}
			got = hunt_sqrt(x);
			want = sqrt(x);
			memcpy(&gi, &got, 8);
			memcpy(&wi, &want, 8);
			d = !isfinite(got) ? SIZE_MAX : (size_t)(gi > wi ? gi - wi : wi - gi);
			worst = d > worst ? d : worst;
			*n_exact += d == 0;
			(*n_all)++;
		}
	}
	return worst;
}

int main(void)
{
	double lo, hi;
	unsigned axes;
	char why[256];
	struct hunt h = { .hunt_seed = 7, .vary = HUNT_AX_DEFAULT };
	struct hunt_settings a, b, v[8];
	int month_end = 0, leap = 0, dst_near = 0, differ = 0, n = 1000;

	{
		size_t exact, all, worst = sqrt_worst(&exact, &all);

		printf("# hunt_sqrt: %zu of %zu exactly libm's, the rest within %zu ulp\n", exact, all,
		       worst);
		CHECK("hunt_sqrt is within 1 ulp of libm's sqrt (hermetic links no libm)", worst <= 1);
		CHECK("hunt_sqrt: 0 and exact squares",
		      hunt_sqrt(0) == 0 && hunt_sqrt(4) == 2 && hunt_sqrt(0.25) == 0.5 &&
			      hunt_sqrt(1e-300 * 1e-8) == sqrt(1e-308));
	}
	hunt_wilson(0, 100, &lo, &hi);
	CHECK("wilson: 0 of 100 is below 3.7%", lo == 0 && near(hi, 0.0370));
	hunt_wilson(3, 100, &lo, &hi);
	CHECK("wilson: 3 of 100 is 1.0%-8.5%", near(lo, 0.0103) && near(hi, 0.0845));
	hunt_wilson(20, 20, &lo, &hi);
	CHECK("wilson: 20 of 20 reaches 1", hi == 1 && near(lo, 0.8389));
	hunt_wilson(0, 0, &lo, &hi);
	CHECK("wilson: no runs says nothing (0-1)", lo == 0 && hi == 1);

	CHECK("mask: digits", masked("random byte 0 < 8", "random byte # < #"));
	CHECK("mask: hex, addresses and hex words",
	      masked("at 0x7fff1234 id deadbeef01", "at 0x# id 0x#"));
	CHECK("mask: temporary paths", masked("open /tmp/pytest-12/x.txt: no", "open /tmp/*: no"));
	CHECK("mask: month and weekday names",
	      masked("expected Sat Apr 01 2028 in March", "expected @ @ # # in @"));
	CHECK("mask: words that merely start like a month stay",
	      masked("Mayday Decimal Sunny", "Mayday Decimal Sunny"));

	CHECK("--vary entropy,tick", !hunt_axes_parse("entropy,tick", &axes, why, sizeof(why)) &&
					     axes == (HUNT_AX_ENTROPY | HUNT_AX_TICK));
	CHECK("--vary clock,identity,sched",
	      !hunt_axes_parse("clock,identity,sched", &axes, why, sizeof(why)) &&
		      axes == (HUNT_AX_CLOCK | HUNT_AX_IDENTITY | HUNT_AX_SCHED));
	CHECK("the identity's parts are causes, not axes",
	      hunt_axes_parse("entropy,", &axes, why, sizeof(why)) == 0 && axes == HUNT_AX_ENTROPY);
	CHECK("--vary moon: unknown", hunt_axes_parse("moon", &axes, why, sizeof(why)) == -EINVAL);

	setenv("TZ", "UTC", 1);
	tzset();
	h.base_now = 1796119200LL * 1000000000LL; /* 2026-12-01T10:00:00Z */
	hunt_axes_init(&h);
	CHECK("DST changes of New York and Berlin are in the window", n_dst >= 16);
	hunt_draw(&h, 5, &a);
	hunt_draw(&h, 5, &b);
	CHECK("a try's settings are a function of the hunt seed and its index",
	      !memcmp(&a, &b, sizeof(a)));
	for (int i = 0; i < n; i++) {
		char d[256];

		hunt_draw(&h, (uint64_t)i, &a);
		hunt_describe_time(a.now_ns, d, sizeof(d));
		month_end += strstr(d, "last day of a month") != NULL;
		leap += strstr(d, "Feb 29") != NULL;
		dst_near += strstr(d, "DST change") != NULL;
		hunt_draw(&h, (uint64_t)i + 1, &b);
		differ += a.seed != b.seed;
	}
	printf("# of %d draws: %d month ends, %d Feb 29, %d near a DST change\n", n, month_end,
	       leap, dst_near);
	CHECK("draws visit month ends (about 20% + the uniform share)", month_end > n / 7);
	CHECK("draws visit Feb 29 (about 12%)", leap > n / 12);
	CHECK("draws visit DST changes (about 20%)", dst_near > n / 7);
	CHECK("entropy varied: consecutive tries have other seeds", differ == n);
	h.vary = HUNT_AX_ENTROPY;
	hunt_draw(&h, 3, &a);
	CHECK("clock not varied: the start is --now", a.now_ns == h.base_now);
	CHECK("entropy variants keep the clock and change the seed",
	      hunt_variants(&h, &a, 3, HUNT_AX_ENTROPY, v, 8) == 6 && v[0].now_ns == a.now_ns &&
		      v[0].seed != a.seed);
	CHECK("clock variants keep the seed and move the start by a day at most",
	      hunt_variants(&h, &a, 3, HUNT_AX_CLOCK, v, 8) == 6 && v[0].seed == a.seed &&
		      v[0].now_ns == a.now_ns - 86400LL * 1000000000LL);
	T_EXIT();
}

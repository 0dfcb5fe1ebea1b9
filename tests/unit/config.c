// SPDX-License-Identifier: MIT
/* Option values: times, durations, choices. */
#include <errno.h>
#include <stdint.h>
#include "config.h"
#include "util.h"
#include <time.h>
#include "test.h"

int main(void)
{
	struct hm_config c;
	const char *why;
	int64_t ns;
	uint64_t d;
	char buf[64];

	hm_config_init(&c);
	CHECK("config default now is 2020-01-01", c.now_ns == 1577836800000000000LL);
	CHECK("config default tick 1us", c.tick_ns == 1000);
	CHECK("config default lag bound 10", c.lag_milli == 10000);
	CHECK("lag bound 2.5", !hm_config_set(&c, "lag-bound", "2.5", &why) && c.lag_milli == 2500);
	CHECK("lag bound inf", !hm_config_set(&c, "lag-bound", "inf", &why) && c.lag_milli == 0);
	CHECK("lag bound 0 refused", hm_config_set(&c, "lag-bound", "0", &why) == -EINVAL);
	CHECK("lag bound 1.0001 refused", hm_config_set(&c, "lag-bound", "1.0001", &why) == -EINVAL);
	CHECK("lag bound -1 refused", hm_config_set(&c, "lag-bound", "-1", &why) == -EINVAL);
	CHECK("lag bound empty refused", hm_config_set(&c, "lag-bound", "", &why) == -EINVAL);
	hm_config_init(&c);
	CHECK("time iso Z", !hm_parse_time("2020-01-01T00:00:00Z", &ns) && ns == 1577836800000000000LL);
	CHECK("time iso offset",
	      !hm_parse_time("2020-01-01T02:00:00+02:00", &ns) && ns == 1577836800000000000LL);
	CHECK("time iso fraction",
	      !hm_parse_time("2020-01-01T00:00:00.25Z", &ns) && ns == 1577836800250000000LL);
	CHECK("time date only", !hm_parse_time("2021-03-04", &ns) && ns == 1614816000000000000LL);
	CHECK("time epoch", !hm_parse_time("@1577836800", &ns) && ns == 1577836800000000000LL);
	CHECK("time epoch fraction", !hm_parse_time("@1.5", &ns) && ns == 1500000000LL);
	CHECK("time without zone refused", hm_parse_time("2020-01-01T00:00:00", &ns) == -EINVAL);
	CHECK("time garbage refused", hm_parse_time("yesterday", &ns) == -EINVAL);
	CHECK("time trailing refused", hm_parse_time("2020-01-01T00:00:00Zx", &ns) == -EINVAL);
	CHECK("time month 13 refused", hm_parse_time("2020-13-01", &ns) == -EINVAL);
	CHECK("time epoch overflow refused", hm_parse_time("@99999999999999999999", &ns) < 0);
	CHECK("time empty refused", hm_parse_time("", &ns) == -EINVAL && hm_parse_time("@", &ns) < 0);
	CHECK("format time", !strcmp(hm_format_time(1577836800000000000LL, buf, sizeof(buf)),
				     "2020-01-01T00:00:00Z"));
	CHECK("format time fraction",
	      !strcmp(hm_format_time(1577836800500000000LL, buf, sizeof(buf)),
		      "2020-01-01T00:00:00.5Z"));
	CHECK("format time before 1970, a fraction counted back",
	      !strcmp(hm_format_time(-500000000LL, buf, sizeof(buf)), "1969-12-31T23:59:59.5Z"));
	{
		/* The date arithmetic (no gmtime_r: issue 30) against gmtime_r,
		 * from 1700 to 2250 (what nanoseconds in 64 bits hold), leap days and centuries included. */
		int bad = 0;
		int64_t first = 0;

		for (int64_t t = -8520336000LL; t < 8836128000LL; t += 86400 * 13 + 3607) {
			struct tm tm;
			time_t tt = (time_t)t;
			char want[80];

			gmtime_r(&tt, &tm);
			snprintf(want, sizeof(want), "%d-%02d-%02dT%02d:%02d:%02dZ", tm.tm_year + 1900,
				 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
			if (strcmp(hm_format_time(t * 1000000000LL, buf, sizeof(buf)), want) && !bad++)
				first = t;
		}
		CHECK("format time as gmtime_r, 1700 to 2250", !bad);
		if (bad)
			printf("# first difference at %lld: %s\n", (long long)first,
			       hm_format_time(first * 1000000000LL, buf, sizeof(buf)));
	}
	CHECK("duration us", !hm_parse_duration("1us", &d) && d == 1000);
	CHECK("duration 0", !hm_parse_duration("0", &d) && d == 0);
	CHECK("duration bare seconds", !hm_parse_duration("5", &d) && d == 5000000000ULL);
	CHECK("duration ms", !hm_parse_duration("250ms", &d) && d == 250000000ULL);
	CHECK("duration bad unit refused", hm_parse_duration("5 parsecs", &d) == -EINVAL);
	CHECK("duration negative refused", hm_parse_duration("-1s", &d) == -EINVAL);
	CHECK("duration overflow refused", hm_parse_duration("99999999999999d", &d) == -ERANGE);
	CHECK("seed ok", !hm_config_set(&c, "seed", "42", &why) && c.seed == 42 && c.seed_set);
	CHECK("seed negative refused", hm_config_set(&c, "seed", "-1", &why) == -EINVAL);
	CHECK("seed overflow refused",
	      hm_config_set(&c, "seed", "18446744073709551616", &why) == -ERANGE);
	CHECK("clock off", !hm_config_set(&c, "clock", "off", &why) && !c.clock_virtual);
	CHECK("clock bad refused", hm_config_set(&c, "clock", "frozen", &why) == -EINVAL);
	CHECK("rng bad refused", hm_config_set(&c, "rng", "some", &why) == -EINVAL);
	CHECK("network off", !hm_config_set(&c, "network", "off", &why) && c.network == HM_NETWORK_OFF);
	CHECK("network audit", !hm_config_set(&c, "network", "audit", &why) && c.network == HM_NETWORK_AUDIT &&
				       !strcmp(hm_network_name(c.network), "audit"));
	CHECK("network bad refused", hm_config_set(&c, "network", "open", &why) == -EINVAL);
	CHECK("unknown option", hm_config_set(&c, "colour", "x", &why) == -ENOENT);
	/* File-time shift: E - now, E the first 1 January after the real start + 1 day. */
	{
		const int64_t s = 1000000000LL, now = 1577836800LL * s; /* 2020-01-01 */
		const int64_t y2025 = 1735689600LL, y2026 = 1767225600LL, y2027 = 1798761600LL;

		CHECK("fs shift: mid-year start", hm_fs_shift_s(1750000000LL * s, now) == y2026 - 1577836800LL);
		CHECK("fs shift: same all year",
		      hm_fs_shift_s((y2025 + 10) * s, now) == hm_fs_shift_s((y2026 - 86401) * s, now));
		CHECK("fs shift: the last day of a year moves to the next",
		      hm_fs_shift_s((y2026 - 86400) * s, now) == y2027 - 1577836800LL &&
			      hm_fs_shift_s((y2026 - 86401) * s, now) == y2026 - 1577836800LL);
		CHECK("fs shift: whole seconds of --now",
		      hm_fs_shift_s(1750000000LL * s, now + s / 2) == y2026 - 1577836800LL);
		CHECK("fs shift: a file written at the start is a day before now or more",
		      1750000000LL - hm_fs_shift_s(1750000000LL * s, now) <= 1577836800LL - 86400);
		CHECK("fs shift: --now after the real start",
		      hm_fs_shift_s(1750000000LL * s, (y2027 + 5) * s) == y2026 - y2027 - 5);
		CHECK("fs shift: before 1970", hm_fs_shift_s(-86400LL * 2 * s, 0) == 0);
	}
	T_EXIT();
}

// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <time.h>
#include <inttypes.h>
#include "util.h"
#include "config.h"

void hm_config_init(struct hm_config *c)
{
	*c = (struct hm_config){
		.now_ns = HM_DEFAULT_NOW_NS,
		.tick_ns = HM_DEFAULT_TICK_NS,
		.clock_virtual = true,
		.rng = true,
		.spin_limit = HM_DEFAULT_SPIN_LIMIT,
		.lag_milli = HM_DEFAULT_LAG_MILLI,
		.aslr = false,
		.network = HM_NETWORK_BLOCK,
		.loopback = true,
		.unix_sockets = true,
	};
}

static int parse_choice(const char *v, const char *yes, const char *no, bool *ret)
{
	if (!strcmp(v, yes))
		*ret = true;
	else if (!strcmp(v, no))
		*ret = false;
	else
		return -EINVAL;
	return 0;
}

/* "inf", or a positive number with at most 3 decimals ("10", "2.5") as
 * thousandths. */
static int parse_lag(const char *v, uint64_t *ret)
{
	uint64_t milli = 0;
	int dec = -1;

	if (!strcmp(v, "inf")) {
		*ret = 0;
		return 0;
	}
	if (!*v)
		return -EINVAL;
	for (const char *p = v; *p; p++) {
		if (*p == '.' && dec < 0) {
			dec = 0;
			continue;
		}
		if (!isdigit((unsigned char)*p) || dec >= 3)
			return -EINVAL;
		if (dec >= 0)
			dec++;
		milli = milli * 10 + (uint64_t)(*p - '0');
		if (milli > 1000000000000ULL)
			return -ERANGE;
	}
	for (int i = dec < 0 ? 0 : dec; i < 3; i++)
		milli *= 10;
	if (!milli)
		return -EINVAL;
	*ret = milli;
	return 0;
}

int hm_config_set(struct hm_config *c, const char *name, const char *v, const char **ret_why)
{
	int r;

	if (!strcmp(name, "seed")) {
		*ret_why = "expected an unsigned 64-bit integer";
		r = hm_parse_u64(v, &c->seed);
		if (!r)
			c->seed_set = true;
		return r;
	}
	if (!strcmp(name, "now")) {
		*ret_why = "expected ISO 8601 (2020-01-01T00:00:00Z) or @EPOCH_SECONDS";
		return hm_parse_time(v, &c->now_ns);
	}
	if (!strcmp(name, "tick")) {
		*ret_why = "expected a duration such as 0, 1us, 10ms or 1s";
		return hm_parse_duration(v, &c->tick_ns);
	}
	if (!strcmp(name, "clock")) {
		*ret_why = "expected 'virtual' or 'off'";
		return parse_choice(v, "virtual", "off", &c->clock_virtual);
	}
	if (!strcmp(name, "rng")) {
		*ret_why = "expected 'all' or 'off'";
		return parse_choice(v, "all", "off", &c->rng);
	}
	if (!strcmp(name, "aslr")) {
		*ret_why = "expected 'on' or 'off'";
		return parse_choice(v, "on", "off", &c->aslr);
	}
	if (!strcmp(name, "spin-limit")) {
		*ret_why = "expected a count (0 disables the limit)";
		return hm_parse_u64(v, &c->spin_limit);
	}
	if (!strcmp(name, "lag-bound")) {
		*ret_why = "expected a factor above 0 (10, 2.5) or 'inf'";
		return parse_lag(v, &c->lag_milli);
	}
	if (!strcmp(name, "network")) {
		*ret_why = "expected 'block', 'audit' or 'off'";
		if (!strcmp(v, "block"))
			c->network = HM_NETWORK_BLOCK;
		else if (!strcmp(v, "audit"))
			c->network = HM_NETWORK_AUDIT;
		else if (!strcmp(v, "off"))
			c->network = HM_NETWORK_OFF;
		else
			return -EINVAL;
		return 0;
	}
	*ret_why = "unknown option";
	return -ENOENT;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
 * days_from_civil). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	const int64_t era = (y >= 0 ? y : y - 399) / 400;
	const unsigned yoe = (unsigned)(y - era * 400);
	const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

/* The proleptic Gregorian year of a day count since 1970-01-01 (Howard
 * Hinnant's civil_from_days, the year only). */
static int64_t year_from_days(int64_t z)
{
	z += 719468;
	const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	const unsigned doe = (unsigned)(z - era * 146097);
	const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	const unsigned mp = (5 * doy + 2) / 153;

	return (int64_t)yoe + era * 400 + (mp >= 10);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

int64_t hm_fs_shift_s(int64_t real_start_ns, int64_t now_ns)
{
	int64_t later = floor_div(real_start_ns, 1000000000LL) + HM_FS_SLACK_S;
	int64_t epoch = days_from_civil(year_from_days(floor_div(later, 86400)) + 1, 1, 1) * 86400;

	return epoch - floor_div(now_ns, 1000000000LL);
}

static int digits(const char **p, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++, (*p)++) {
		if (!isdigit((unsigned char)**p))
			return -EINVAL;
		v = v * 10 + (**p - '0');
	}
	*ret = v;
	return 0;
}

/* Parse ".123456789" (1..9 digits) into ns. */
static int fraction(const char **p, int64_t *ret_ns)
{
	int64_t ns = 0, scale = 100000000;
	int n = 0;

	if (**p != '.')
		return 0;
	(*p)++;
	while (isdigit((unsigned char)**p)) {
		if (++n > 9)
			return -EINVAL;
		ns += (**p - '0') * scale;
		scale /= 10;
		(*p)++;
	}
	if (!n)
		return -EINVAL;
	*ret_ns = ns;
	return 0;
}

int hm_parse_time(const char *s, int64_t *ret_ns)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0;
	int64_t frac = 0, off = 0;

	if (!s)
		return -EINVAL;
	if (*p == '@') {
		int64_t secs = 0;

		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p)) {
			if (secs > (INT64_MAX / 1000000000LL - 9) / 10)
				return -ERANGE;
			secs = secs * 10 + (*p++ - '0');
		}
		if (fraction(&p, &frac) < 0 || *p)
			return -EINVAL;
		*ret_ns = secs * 1000000000LL + frac;
		return 0;
	}
	if (digits(&p, 4, &y) || *p++ != '-' || digits(&p, 2, &mo) || *p++ != '-' ||
	    digits(&p, 2, &d))
		return -EINVAL;
	if (*p == 'T' || *p == ' ') {
		p++;
		if (digits(&p, 2, &h) || *p++ != ':' || digits(&p, 2, &mi))
			return -EINVAL;
		if (*p == ':') {
			p++;
			if (digits(&p, 2, &sec) || fraction(&p, &frac))
				return -EINVAL;
		}
		if (*p == 'Z') {
			p++;
		} else if (*p == '+' || *p == '-') {
			int sign = *p++ == '-' ? -1 : 1, oh, om;

			if (digits(&p, 2, &oh))
				return -EINVAL;
			if (*p == ':')
				p++;
			if (digits(&p, 2, &om) || oh > 23 || om > 59)
				return -EINVAL;
			off = sign * (oh * 3600 + om * 60);
		} else {
			return -EINVAL; /* a time without a zone is ambiguous */
		}
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 ||
	    y < 1970)
		return -EINVAL;
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off;
	if (secs < 0 || secs > INT64_MAX / 1000000000LL - 1)
		return -ERANGE;
	*ret_ns = secs * 1000000000LL + frac;
	return 0;
}

/* The proleptic Gregorian date of a day counted from 1970-01-01 (Howard
 * Hinnant's civil_from_days): what gmtime_r computes, without the time
 * zone file glibc's gmtime_r reads on its first call (issue 30: one
 * open, two reads, a seek and fstats in every enroll's seed line). */
static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t era;
	unsigned doe, yoe, doy, mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = (unsigned)(z - era * 146097);
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = (int64_t)yoe + era * 400 + (*m <= 2);
}

const char *hm_format_time(int64_t ns, char *buf, size_t size)
{
	int64_t secs = ns / 1000000000LL, days, y;
	long frac = ns % 1000000000LL;
	unsigned m, d, sod;
	char base[80];

	/* (a time before 1970 counts back: the day and the second of it) */
	if (frac < 0) {
		frac += 1000000000LL;
		secs--;
	}
	days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
	sod = (unsigned)(secs - days * 86400);
	civil_from_days(days, &y, &m, &d);
	/* What strftime's "%Y-%m-%dT%H:%M:%S" writes (glibc's %Y is the year
	 * as %d), without the time zone file strftime reads first. */
	snprintf(base, sizeof(base), "%" PRId64 "-%02u-%02uT%02u:%02u:%02u", y, m, d, sod / 3600,
		 sod / 60 % 60, sod % 60);
	if (frac) {
		char f[16];
		int n = snprintf(f, sizeof(f), "%09ld", frac);

		while (n > 1 && f[n - 1] == '0')
			f[--n] = 0;
		snprintf(buf, size, "%s.%sZ", base, f);
	} else {
		snprintf(buf, size, "%sZ", base);
	}
	return buf;
}

int hm_config_export(const struct hm_config *c, bool with_seed)
{
	char v[32];

#define SET(k, val)                                                                               \
	do {                                                                                       \
		if (setenv((k), (val), 1) < 0)                                                     \
			return -errno;                                                             \
	} while (0)
	if (with_seed) {
		snprintf(v, sizeof(v), "%" PRIu64, c->seed);
		SET(HM_ENV_SEED, v);
	} else {
		unsetenv(HM_ENV_SEED);
	}
	snprintf(v, sizeof(v), "%" PRId64, c->now_ns);
	SET(HM_ENV_NOW, v);
	snprintf(v, sizeof(v), "%" PRIu64, c->tick_ns);
	SET(HM_ENV_TICK, v);
	SET(HM_ENV_CLOCK, c->clock_virtual ? "virtual" : "off");
	SET(HM_ENV_RNG, c->rng ? "all" : "off");
	snprintf(v, sizeof(v), "%" PRIu64, c->spin_limit);
	SET(HM_ENV_SPIN_LIMIT, v);
	SET(HM_ENV_ASLR, c->aslr ? "on" : "off");
	SET(HM_ENV_NETWORK, hm_network_name(c->network));
#undef SET
	return 0;
}

const char *hm_network_name(enum hm_network n)
{
	return n == HM_NETWORK_OFF ? "off" : n == HM_NETWORK_AUDIT ? "audit" : "block";
}

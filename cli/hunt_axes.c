// SPDX-License-Identifier: MIT
/*
 * hermetic hunt's axes: what each try draws from the hunt seed (--vary),
 * and the variants of a failing try that change one axis only.
 *
 * The clock's start is drawn in a window of two years either side of the
 * default start, and more often at the instants where date bugs live: the
 * last day of a month, the minutes before midnight, a leap day (Feb 29) and
 * the hours around a DST change (of the zone the runs see, and of
 * America/New_York and Europe/Berlin, for programs that set TZ themselves).
 * Times of day are those of the runs' own zone (TZ, /etc/localtime).
 */
#include <inttypes.h>
#include <time.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"

#define NS 1000000000LL
#define DAY_S 86400LL
#define WINDOW_S (2 * 36525LL * DAY_S / 100) /* two years either side */
#define MAX_DST 64
#define SEED(x) ((x) % 999999999ULL + 1)

/* DST changes in the window, found once by hunt_axes_init (before any
 * worker thread starts; read-only after). */
static struct dst {
	int64_t t; /* seconds */
	const char *zone;
} dst[MAX_DST];
static size_t n_dst;

/* By bit (HUNT_AX_*): the identity's two parts are causes, not axes of
 * --vary, and have no name here. */
static const char *const axis_names[] = { "entropy", "clock", "tick", "identity", NULL, NULL,
					  "sched" };

/* --vary identity: one CPU or the machine's many (at least two), and a zone
 * west of, at or far east of UTC (Kiritimati: +14, where today is already
 * tomorrow everywhere else). */
static const char *const zones[] = { "UTC", "Asia/Tokyo", "Pacific/Kiritimati",
				     "America/New_York", "America/Los_Angeles", "Europe/Berlin" };
static unsigned many_cpus = 2;

uint64_t hunt_mix(uint64_t a, uint64_t b)
{
	/* splitmix64 of a and b: a fixed, well-mixed function of both */
	uint64_t z = a ^ (b + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;

	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int hunt_axes_parse(const char *list, unsigned *ret, char *why, size_t size)
{
	_cleanup_free_ char *copy = strdup(list);
	char *save, *tok;
	unsigned axes = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < ARRAY_SIZE(axis_names); i++)
			if (axis_names[i] && !strcmp(tok, axis_names[i]))
				break;
		if (i == ARRAY_SIZE(axis_names)) {
			if (!strcmp(tok, "sched=chaos")) {
				axes |= HUNT_AX_SCHED | HUNT_AX_SCHED_CHAOS;
				continue;
			}
			if (!strcmp(tok, "sched=serial")) {
				axes |= HUNT_AX_SCHED | HUNT_AX_SCHED_SERIAL;
				continue;
			}
			snprintf(why, size,
				 "--vary %s: unknown axis '%s' (entropy, clock, tick, identity, sched, "
				 "sched=chaos, sched=serial)",
				 list, tok);
			return -EINVAL;
		}
		axes |= 1u << i;
	}
	/* sched with sched=MODE, or both modes named: both */
	if ((axes & HUNT_AX_SCHED_CHAOS) && (axes & HUNT_AX_SCHED_SERIAL))
		axes &= ~(unsigned)(HUNT_AX_SCHED_CHAOS | HUNT_AX_SCHED_SERIAL);
	if (!axes) {
		snprintf(why, size, "--vary: no axis given (entropy, clock, tick, identity, sched)");
		return -EINVAL;
	}
	*ret = axes;
	return 0;
}

const char *hunt_axes_name(unsigned axes, char *buf, size_t size)
{
	size_t used = 0;

	buf[0] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(axis_names); i++)
		if (axis_names[i] && (axes & (1u << i)))
			used += snprintf(buf + used, used < size ? size - used : 0, "%s%s%s",
					 used ? "," : "", axis_names[i],
					 (1u << i) != HUNT_AX_SCHED		? ""
					 : (axes & HUNT_AX_SCHED_CHAOS)	? "=chaos"
					 : (axes & HUNT_AX_SCHED_SERIAL) ? "=serial"
									 : "");
	return buf;
}

/* The DST changes of zone (NULL: the process's own) in [from, to). */
static void find_dst(const char *zone, const char *label, int64_t from, int64_t to)
{
	struct tm tm;
	time_t t = (time_t)from;
	int last;

	if (zone)
		setenv("TZ", zone, 1);
	tzset();
	localtime_r(&t, &tm);
	last = tm.tm_isdst;
	for (t += 3600; t < to && n_dst < MAX_DST; t += 3600) {
		localtime_r(&t, &tm);
		if (tm.tm_isdst != last && tm.tm_isdst >= 0 && last >= 0) {
			dst[n_dst].t = t - (t % 3600); /* these zones change on the hour */
			dst[n_dst++].zone = label;
		}
		last = tm.tm_isdst;
	}
}

void hunt_axes_init(struct hunt *h)
{
	const char *tz = getenv("TZ");
	_cleanup_free_ char *saved = tz ? strdup(tz) : NULL;
	int64_t from = h->base_now / NS - WINDOW_S, to = h->base_now / NS + WINDOW_S;
	char link[256];
	ssize_t n;

	if (tz && *tz) {
		snprintf(h->zone, sizeof(h->zone), "%.63s", tz[0] == ':' ? tz + 1 : tz);
	} else if ((n = readlink("/etc/localtime", link, sizeof(link) - 1)) > 0) {
		link[n] = 0;
		snprintf(h->zone, sizeof(h->zone), "%.63s",
			 strstr(link, "zoneinfo/") ? strstr(link, "zoneinfo/") + 9 : link);
	} else {
		snprintf(h->zone, sizeof(h->zone), "UTC");
	}
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	many_cpus = cpus > 2 ? (unsigned)cpus : 2;
	n_dst = 0;
	find_dst(NULL, h->zone, from, to);
	if (strcmp(h->zone, "America/New_York"))
		find_dst("America/New_York", "America/New_York", from, to);
	if (strcmp(h->zone, "Europe/Berlin"))
		find_dst("Europe/Berlin", "Europe/Berlin", from, to);
	/* The runs inherit our environment: TZ as it was. */
	if (saved)
		setenv("TZ", saved, 1);
	else
		unsetenv("TZ");
	tzset();
}

/* Local time y-m-d (m 0-based, d may be 0: the last of the month before)
 * plus secs into that day, as nanoseconds. */
static int64_t local_ns(int y, int m, int d, int64_t secs)
{
	struct tm tm = { .tm_year = y, .tm_mon = m, .tm_mday = d, .tm_isdst = -1 };

	tm.tm_hour = (int)(secs / 3600);
	tm.tm_min = (int)(secs / 60 % 60);
	tm.tm_sec = (int)(secs % 60);
	return (int64_t)mktime(&tm) * NS;
}

/* The clock's start for draw u of category c (0-99). */
static int64_t draw_now(const struct hunt *h, unsigned c, uint64_t u)
{
	int64_t from = h->base_now / NS - WINDOW_S;
	time_t t0 = (time_t)from;
	struct tm w;
	uint64_t hi = u >> 20;

	localtime_r(&t0, &w);
	if (c < 20) { /* the last day of a month */
		int m = w.tm_mon + 1 + (int)(u % 48);

		return local_ns(w.tm_year, m + 1, 0, (int64_t)(hi % DAY_S));
	}
	if (c < 32) /* the last ten minutes of a day */
		return local_ns(w.tm_year, w.tm_mon,
				w.tm_mday + 1 + (int)(u % (2 * WINDOW_S / DAY_S)),
				23 * 3600 + 50 * 60 + (int64_t)(hi % 600));
	if (c < 44) { /* a leap day: the first Feb 29 of the window */
		int y = w.tm_year + 1900 + (w.tm_mon >= 2);

		while (!(y % 4 == 0 && (y % 100 || y % 400 == 0)))
			y++;
		return local_ns(y - 1900, 1, 29, (int64_t)(hi % DAY_S));
	}
	if (c < 64 && n_dst) /* an hour either side of a DST change */
		return (dst[u % n_dst].t + (int64_t)(hi % 7200) - 3600) * NS;
	return (from + (int64_t)(u % (2 * WINDOW_S))) * NS; /* anywhere in the window */
}

static const uint64_t ticks[] = { 1, 10000, 1000000 }; /* 1ns, 10us, 1ms */

void hunt_draw(const struct hunt *h, uint64_t index, struct hunt_settings *ret)
{
	uint64_t k = hunt_mix(h->hunt_seed, index);

	/* 1 to 999999999: short enough to retype from a CI log */
	ret->seed = SEED(h->vary & HUNT_AX_ENTROPY ? hunt_mix(k, 1)
						   : hunt_mix(h->hunt_seed, ~0ULL));
	ret->now_ns = h->base_now;
	if (h->vary & HUNT_AX_CLOCK)
		ret->now_ns = draw_now(h, (unsigned)(hunt_mix(k, 2) % 100), hunt_mix(k, 3));
	ret->tick_ns = h->base_tick;
	ret->tick_set = h->base_tick_set;
	if (h->vary & HUNT_AX_TICK) {
		ret->tick_ns = ticks[hunt_mix(k, 4) % ARRAY_SIZE(ticks)];
		ret->tick_set = true;
	}
	ret->id_cpus = 0;
	ret->id_tz[0] = 0;
	if (h->vary & HUNT_AX_IDENTITY) {
		ret->id_cpus = hunt_mix(k, 5) % 2 ? 1 : many_cpus;
		snprintf(ret->id_tz, sizeof(ret->id_tz), "%s",
			 zones[hunt_mix(k, 6) % ARRAY_SIZE(zones)]);
	}
	ret->sched_set = false;
	ret->sched_serial = false;
	if (h->vary & HUNT_AX_SCHED) {
		ret->sched_seed = SEED(hunt_mix(k, 7));
		ret->sched_set = true;
		/* Both modes: chaos, which preempts anywhere, for 3 tries in 4;
		 * serial, whose failures repeat from their seed, for the rest. */
		ret->sched_serial = (h->vary & HUNT_AX_SCHED_SERIAL) ||
				    (!(h->vary & HUNT_AX_SCHED_CHAOS) && hunt_mix(k, 8) % 4 == 0);
	}
}

const char *hunt_sched_mode(const struct hunt_settings *s)
{
	return s->sched_serial ? "serial" : "chaos";
}

void hunt_identity_spec(const struct hunt_settings *s, char *buf, size_t size)
{
	buf[0] = 0;
	if (s->id_cpus)
		snprintf(buf, size, "cpus=%u,tz=%s", s->id_cpus, s->id_tz);
}

size_t hunt_variants(const struct hunt *h, const struct hunt_settings *s, uint64_t index,
		     unsigned axis, struct hunt_settings *out, size_t max)
{
	static const int64_t shifts[] = { -DAY_S, -6 * 3600, -3600, 3600, 6 * 3600, DAY_S };
	size_t n = 0;

	if (axis == HUNT_AX_ENTROPY) {
		for (uint64_t k = 0; n < max && n < 6; k++) {
			out[n] = *s;
			out[n].seed = SEED(hunt_mix(hunt_mix(h->hunt_seed, index), 100 + k));
			if (out[n].seed != s->seed)
				n++;
		}
	} else if (axis == HUNT_AX_CLOCK) {
		for (size_t i = 0; i < ARRAY_SIZE(shifts) && n < max; i++) {
			out[n] = *s;
			out[n++].now_ns = s->now_ns + shifts[i] * NS;
		}
	} else if (axis == HUNT_AX_ID_CPUS && s->id_cpus) {
		const unsigned counts[] = { 1, 2, many_cpus };

		for (size_t i = 0; i < ARRAY_SIZE(counts) && n < max; i++) {
			if (counts[i] == s->id_cpus || (i == 2 && many_cpus == 2))
				continue;
			out[n] = *s;
			out[n++].id_cpus = counts[i];
		}
	} else if (axis == HUNT_AX_ID_TZ && s->id_cpus) {
		for (size_t i = 0; i < ARRAY_SIZE(zones) && n < max; i++) {
			if (!strcmp(zones[i], s->id_tz))
				continue;
			out[n] = *s;
			snprintf(out[n++].id_tz, sizeof(out[0].id_tz), "%s", zones[i]);
		}
	} else if (axis == HUNT_AX_SCHED) {
		/* Other schedules of the same mode, the same seed and clock. */
		for (uint64_t k = 0; n < max && n < 6; k++) {
			out[n] = *s;
			out[n].sched_set = true;
			out[n].sched_seed = SEED(hunt_mix(hunt_mix(h->hunt_seed, index), 200 + k));
			if (!s->sched_set || out[n].sched_seed != s->sched_seed)
				n++;
		}
	} else if (axis == HUNT_AX_TICK) {
		for (size_t i = 0; i < ARRAY_SIZE(ticks) && n < max; i++) {
			if (s->tick_set && s->tick_ns == ticks[i])
				continue;
			out[n] = *s;
			out[n].tick_ns = ticks[i];
			out[n++].tick_set = true;
		}
	}
	return n;
}

void hunt_describe_time(int64_t ns, char *buf, size_t size)
{
	time_t t = (time_t)(ns / NS), next = t + DAY_S;
	struct tm tm, tn;
	size_t used = 0;

	buf[0] = 0;
	localtime_r(&t, &tm);
	localtime_r(&next, &tn);
#define TAG(...) (used += snprintf(buf + used, used < size ? size - used : 0, __VA_ARGS__))
	if (tm.tm_mon == 1 && tm.tm_mday == 29)
		TAG("%sFeb 29, a leap day", used ? ", " : "");
	else if (tn.tm_mday == 1)
		TAG("%sthe last day of a month", used ? ", " : "");
	if (tm.tm_hour == 23 && tm.tm_min >= 50)
		TAG("%s%d min before midnight", used ? ", " : "", 60 - tm.tm_min);
	for (size_t i = 0; i < n_dst; i++) {
		int64_t d = (int64_t)t - dst[i].t;

		if (d > -7200 && d < 7200) {
			TAG("%s%s%" PRId64 " min %s a DST change in %s", used ? ", " : "",
			    d < 0 ? "" : "", (d < 0 ? -d : d) / 60, d < 0 ? "before" : "after",
			    dst[i].zone);
			break;
		}
	}
#undef TAG
}

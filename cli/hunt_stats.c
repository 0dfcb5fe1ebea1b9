// SPDX-License-Identifier: MIT
/*
 * hermetic hunt's statistics: a failure's key (its kind, status and last
 * line with what changes from run to run masked), the grouping of tries by
 * key, and the Wilson score interval of a rate (docs/hunting.md).
 */
#include <ctype.h>
#include <inttypes.h>
#include "util.h"
#include "cli.h"
#include "hunt.h"

#define Z95 1.959963984540054

/* The square root of x >= 0 by Newton's iteration, within one ulp of
 * libm's (tests/unit/hunt.c): the one function hermetic took from libm, not
 * worth loading a library for at every start. From above, the iterates fall
 * until rounding stops them. */
double hunt_sqrt(double x)
{
	double r, next;
	int i;

	if (!(x > 0))
		return x == 0 ? 0 : -1; /* -1: never asked for (x is a variance) */
	/* A start at or above the root: x itself, or 1 below 1. */
	r = x > 1 ? x : 1;
	for (i = 0; i < 2100; i++) {
		next = 0.5 * (r + x / r);
		if (!(next < r))
			break;
		r = next;
	}
	return r;
}

/* The Wilson score interval at 95%: unlike p +- z*sqrt(p(1-p)/n) it stays
 * inside [0, 1] and means something at k = 0 (the upper bound of a rate no
 * run showed) and for small n. */
void hunt_wilson(uint64_t k, uint64_t n, double *lo, double *hi)
{
	double p, z2 = Z95 * Z95, denom, centre, half;

	if (!n) {
		*lo = 0;
		*hi = 1;
		return;
	}
	p = (double)k / (double)n;
	denom = 1 + z2 / n;
	centre = (p + z2 / (2.0 * n)) / denom;
	half = Z95 * hunt_sqrt(p * (1 - p) / n + z2 / (4.0 * n * n)) / denom;
	*lo = centre - half < 0 || k == 0 ? 0 : centre - half;
	*hi = centre + half > 1 || k == n ? 1 : centre + half;
}

static bool word_end(char c)
{
	return !isalnum((unsigned char)c) && c != '_';
}

/* A month's or weekday's English name (or its three letters) at s, as a
 * word: its length, or 0. A date printed in words changes with the clock. */
static size_t date_word(const char *s)
{
	static const char *const names[] = { "January",	  "February", "March",	   "April",
					     "May",	  "June",     "July",	   "August",
					     "September", "October",  "November",  "December",
					     "Monday",	  "Tuesday",  "Wednesday", "Thursday",
					     "Friday",	  "Saturday", "Sunday" };

	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t full = strlen(names[i]);

		if (!strncmp(s, names[i], full) && word_end(s[full]))
			return full;
		if (!strncmp(s, names[i], 3) && word_end(s[3]))
			return 3;
	}
	return 0;
}

/* Mask what differs between runs of one failure: temporary paths
 * (/tmp/..., /var/tmp/...) to "/tmp/" and a star, hex numbers (0x...) and hex words
 * of 8 digits or more to "0x#", every run of decimal digits to "#", the
 * names of months and weekdays to "@". */
void hunt_mask(const char *s, char *out, size_t size)
{
	size_t o = 0;

#define PUT(str)                                                                                   \
	do {                                                                                       \
		for (const char *_p = (str); *_p && o + 1 < size; _p++)                            \
			out[o++] = *_p;                                                            \
	} while (0)
	while (*s && o + 1 < size) {
		bool start = o == 0 || word_end(s[-1]);
		size_t hex = strspn(s, "0123456789abcdefABCDEF");

		if ((!strncmp(s, "/tmp/", 5) || !strncmp(s, "/var/tmp/", 9)) &&
		    (o == 0 || s[-1] != '/')) {
			PUT(!strncmp(s, "/tmp/", 5) ? "/tmp/*" : "/var/tmp/*");
			s += strcspn(s, " \t'\":,;)]}");
		} else if (start && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') &&
			   isxdigit((unsigned char)s[2])) {
			PUT("0x#");
			s += 2;
			s += strspn(s, "0123456789abcdefABCDEF");
		} else if (start && hex >= 8 && word_end(s[hex])) {
			PUT("0x#");
			s += hex;
		} else if (start && date_word(s)) {
			PUT("@");
			s += date_word(s);
		} else if (isdigit((unsigned char)*s)) {
			PUT("#");
			s += strspn(s, "0123456789");
		} else {
			out[o++] = *s++;
		}
	}
#undef PUT
	out[o] = 0;
}

void hunt_key(struct hunt_result *r)
{
	char masked[HUNT_LINE];

	hunt_mask(r->last, masked, sizeof(masked));
	switch (r->kind) {
	case HUNT_PASS:
		snprintf(r->key, sizeof(r->key), "pass");
		break;
	case HUNT_EXIT:
		snprintf(r->key, sizeof(r->key), "exit %d: %s", r->status, masked);
		break;
	case HUNT_TIMEOUT:
		snprintf(r->key, sizeof(r->key), "timeout: %s", masked);
		break;
	case HUNT_OUTPUT:
		snprintf(r->key, sizeof(r->key), "output: %s", masked);
		break;
	case HUNT_ERROR:
		snprintf(r->key, sizeof(r->key), "error %d", r->status);
		break;
	}
}

void hunt_group(struct hunt *h)
{
	free(h->groups);
	h->groups = NULL;
	h->n_groups = 0;
	h->runs_done = h->failures = 0;
	for (size_t i = 0; i < h->n_tries; i++) {
		struct hunt_try *t = &h->tries[i];
		struct hunt_group *g = NULL;

		if (!t->done)
			continue;
		h->runs_done++;
		if (t->r.kind == HUNT_PASS)
			continue;
		h->failures++;
		for (size_t j = 0; j < h->n_groups && !g; j++)
			if (!strcmp(h->groups[j].key, t->r.key))
				g = &h->groups[j];
		if (!g) {
			struct hunt_group *more =
				realloc(h->groups, (h->n_groups + 1) * sizeof(*more));

			if (!more)
				die(EXIT_INTERNAL, "out of memory");
			h->groups = more;
			g = &h->groups[h->n_groups++];
			memset(g, 0, sizeof(*g));
			snprintf(g->key, sizeof(g->key), "%s", t->r.key);
			snprintf(g->last, sizeof(g->last), "%s", t->r.last);
			g->kind = t->r.kind;
			g->status = t->r.status;
			g->first = t;
			g->c.state = -1;
		}
		g->count++;
		if (t->index < g->first->index)
			g->first = t;
		if (g->n_seeds < HUNT_MAX_SEEDS)
			g->seeds[g->n_seeds++] = t->s.seed;
	}
}

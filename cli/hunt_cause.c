// SPDX-License-Identifier: MIT
/*
 * hermetic hunt's verification and cause analysis. For each distinct
 * failure, its first try (lowest index) is rerun: R times as it was (the
 * reproduction rate), then changing one axis at a time and keeping the
 * others (six other seeds; the start moved by 1 h, 6 h and a day either
 * way; other ticks). An axis whose variants pass where the try fails is a
 * cause. The hunt's first passing try is rerun too: if it fails now, with
 * the same settings, what changed is state outside the run.
 * Every rerun is a function of the try's index and the hunt seed, so two
 * shards analyse a failure as one hunt would (docs/hunting.md).
 */
#include <dirent.h>
#include <inttypes.h>
#include "util.h"
#include "config.h"
#include "cli.h"
#include "hunt.h"

#define MAX_NAMES 4096
#define MAX_ANALYSED 10 /* distinct failures analysed */
#define MAX_VARIANTS 6

enum role {
	VERIFY,
	AXIS0,
	STATE = AXIS0 + HUNT_CAUSES
};

struct rerun {
	size_t group;
	int role; /* VERIFY, AXIS0 + axis bit index, STATE */
};

static const unsigned axes[HUNT_CAUSES] = { HUNT_AX_ENTROPY, HUNT_AX_CLOCK, HUNT_AX_TICK,
					    HUNT_AX_ID_CPUS, HUNT_AX_ID_TZ, HUNT_AX_SCHED };

static void free_names(char **names)
{
	for (size_t i = 0; names && names[i]; i++)
		free(names[i]);
	free(names);
}

char **hunt_cwd_names(void)
{
	char **names = calloc(MAX_NAMES + 1, sizeof(char *));
	DIR *d = opendir(".");
	struct dirent *de;
	size_t n = 0;

	if (!names || !d) {
		if (d)
			closedir(d);
		return names;
	}
	while ((de = readdir(d)) && n < MAX_NAMES)
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
		    !(names[n++] = strdup(de->d_name)))
			break; /* out of memory: the list ends here */
	closedir(d);
	return names;
}

static bool has_name(char **names, const char *name)
{
	for (size_t i = 0; names && names[i]; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

void hunt_cwd_new(struct hunt *h, char **before)
{
	char **after = hunt_cwd_names();
	size_t used = 0;

	for (size_t i = 0; after && after[i]; i++) {
		if (!has_name(before, after[i]) &&
		    used + strlen(after[i]) + 8 < sizeof(h->new_entries))
			used += snprintf(h->new_entries + used, sizeof(h->new_entries) - used,
					 "%s%s", used ? ", " : "", after[i]);
		free(after[i]);
	}
	free(after);
	free_names(before);
}

/* The first try of the hunt that passed, or NULL. */
static const struct hunt_try *first_pass(const struct hunt *h)
{
	for (size_t i = 0; i < h->n_tries; i++)
		if (h->tries[i].done && h->tries[i].r.kind == HUNT_PASS)
			return &h->tries[i];
	return NULL;
}

static void name_cause(const struct hunt *h, struct hunt_group *g)
{
	struct hunt_cause *c = &g->c;
	char desc[HUNT_LINE], now[64];
	size_t used = 0;

#define SAY(...)                                                                                   \
	(used += snprintf(c->cause + used, used < sizeof(c->cause) ? sizeof(c->cause) - used : 0,  \
			  __VA_ARGS__))
	/* Under --vary sched the schedule is the one axis that moved: a
	 * failure that came under some schedules and not under others, and
	 * that reruns of its own chaos schedule do not repeat, is still the
	 * interleaving's; a chaos seed fixes the controller's decisions, not
	 * every interleaving the kernel makes between them. */
	if (c->verify_runs && !c->verified && (h->vary & HUNT_AX_SCHED) && g->kind != HUNT_TIMEOUT) {
		SAY("scheduling: the failure came under some of the varied schedules, and reruns "
		    "of its chaos schedule passed (a chaos seed fixes the scheduler's decisions, "
		    "not every interleaving between them)");
		return;
	}
	if (c->verify_runs && !c->verified) {
		SAY("outside the axes: the same settings passed on every rerun (%s)",
		    g->kind == HUNT_TIMEOUT ? "real time, scheduling or the machine"
					    : "scheduling, real time, the machine or state");
		return;
	}
	/* Under --vary sched a rerun of a passing try is a new schedule, not
	 * the same run: a schedule that flips the outcome says more. */
	if (c->state == 1 && !((h->vary & HUNT_AX_SCHED) && c->flips[HUNT_CAUSE_SCHED])) {
		SAY("state left between runs: a try that passed in this hunt fails now with the "
		    "same settings");
		if (h->new_entries[0])
			SAY(" (new in the working directory: %s)", h->new_entries);
		return;
	}
	if (c->flips[0])
		SAY("randomness (entropy): %u of %u other seeds pass with the same clock",
		    c->flips[0], c->tried[0]);
	if (c->flips[1]) {
		hunt_format_now(g->first->s.now_ns, now, sizeof(now));
		hunt_describe_time(g->first->s.now_ns, desc, sizeof(desc));
		SAY("%sdate/time (the clock's start): fails at %s%s%s%s; passes at %s",
		    used ? "; " : "", now, desc[0] ? " (" : "", desc, desc[0] ? ")" : "",
		    c->flipped_at);
	}
	if (c->flips[2])
		SAY("%sthe clock's tick: %u of %u other ticks pass", used ? "; " : "", c->flips[2],
		    c->tried[2]);
	if (c->flips[3])
		SAY("%sthe machine's CPU count (identity (cpus)): fails with %u CPU%s; %u of %u "
		    "other counts pass", used ? "; " : "", g->first->s.id_cpus,
		    g->first->s.id_cpus == 1 ? "" : "s", c->flips[3], c->tried[3]);
	if (c->flips[4])
		SAY("%sthe time zone (identity (time zone)): fails in %s; %u of %u other zones pass",
		    used ? "; " : "", g->first->s.id_tz, c->flips[4], c->tried[4]);
	if (c->flips[HUNT_CAUSE_SCHED])
		SAY("%sscheduling: %u of %u other schedules (--sched %s seeds) pass with the "
		    "same seed and clock",
		    used ? "; " : "", c->flips[HUNT_CAUSE_SCHED], c->tried[HUNT_CAUSE_SCHED],
		    hunt_sched_mode(&g->first->s));
	if (!used)
		SAY("none of the axes: fails whatever the seed, clock and tick (a constant "
		    "failure, or something outside the run)");
#undef SAY
}

void hunt_analyse(struct hunt *h)
{
	size_t n_groups = h->n_groups < MAX_ANALYSED ? h->n_groups : MAX_ANALYSED;
	size_t max = n_groups * (h->verify + HUNT_CAUSES * MAX_VARIANTS + 1), n = 0;
	_cleanup_free_ struct hunt_try *tries = calloc(max ? max : 1, sizeof(*tries));
	_cleanup_free_ struct rerun *what = calloc(max ? max : 1, sizeof(*what));

	if (!tries || !what)
		die(EXIT_INTERNAL, "out of memory");
	for (size_t g = 0; g < n_groups; g++) {
		const struct hunt_try *f = h->groups[g].first, *p = first_pass(h);
		struct hunt_settings v[MAX_VARIANTS];

		for (unsigned i = 0; i < h->verify; i++) {
			tries[n].s = f->s;
			what[n++] = (struct rerun){ g, VERIFY };
		}
		for (int a = 0; a < HUNT_CAUSES; a++) {
			size_t k;

			/* The schedule is varied only in a hunt that varies it:
			 * without --vary sched the runs keep the kernel's. */
			if (axes[a] == HUNT_AX_SCHED && !(h->vary & HUNT_AX_SCHED))
				continue;
			k = hunt_variants(h, &f->s, f->index, axes[a], v, MAX_VARIANTS);

			for (size_t i = 0; i < k; i++) {
				tries[n].s = v[i];
				what[n++] = (struct rerun){ g, AXIS0 + a };
			}
		}
		if (p) {
			tries[n].s = p->s;
			what[n++] = (struct rerun){ g, STATE };
		}
	}
	for (size_t i = 0; i < n; i++)
		tries[i].index = i;
	hunt_run_batch(h, tries, n, false, false);
	for (size_t i = 0; i < n; i++) {
		struct hunt_group *g = &h->groups[what[i].group];
		struct hunt_cause *c = &g->c;
		const struct hunt_result *r = &tries[i].r;

		c->done = true;
		c->index = g->first->index;
		if (what[i].role == VERIFY) {
			c->verify_runs++;
			c->verified += !strcmp(r->key, g->key);
		} else if (what[i].role == STATE) {
			c->state = r->kind != HUNT_PASS;
		} else {
			int a = what[i].role - AXIS0;

			c->tried[a]++;
			if (r->kind == HUNT_PASS) {
				if (!c->flips[a] && a == 1)
					hunt_format_now(tries[i].s.now_ns, c->flipped_at,
							sizeof(c->flipped_at));
				c->flips[a]++;
			}
		}
	}
	for (size_t g = 0; g < n_groups; g++)
		if (h->groups[g].c.done)
			name_cause(h, &h->groups[g]);
}

// SPDX-License-Identifier: MIT
/* HERMETIC_DEBUG=phases: marks taken at the steps of enroll, printed as the
 * milliseconds each step took. Off (one getenv) unless asked for; a mark is
 * a clock read and a store, so the figures are the run's own.
 *
 * HERMETIC_TEST_PAUSE_AT=NAME[,NAME...], for tests (tests/integration/
 * cancel.sh, clone_vm.sh): enroll stops itself (SIGSTOP) the first time
 * each phase NAME ends, so that a test can send it a signal at that very
 * point, or look at it, and then let it go on (SIGCONT). Unset, it does
 * nothing; it gives the process no power it lacks (anyone who can set its
 * environment can stop it). */
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "engine.h"
#include "phases.h"

#define MAX_PHASES 24
#define MAX_NOTES 4

static struct {
	const char *name;
	uint64_t ns;
} marks[MAX_PHASES];
static int n_marks;
static char notes[MAX_NOTES][96]; /* lines of their own under the phases */
static int n_notes;
static int enabled = -1; /* -1: not asked yet */
static const char *pause_at;
static unsigned paused; /* bit i: item i of pause_at was paused at */
static uint64_t t0;

/* name's place in the comma-separated pause_at, or -1 (no allocation: it
 * runs beside enroll's child, launch.c). */
static int pause_index(const char *name)
{
	size_t n = strlen(name);
	const char *p = pause_at;

	for (int i = 0; i < 32; i++) {
		const char *end = strchrnul(p, ',');

		if ((size_t)(end - p) == n && !strncmp(p, name, n))
			return i;
		if (!*end)
			break;
		p = end + 1;
	}
	return -1;
}

static void init_once(void)
{
	if (enabled < 0) {
		const char *d = getenv("HERMETIC_DEBUG");

		enabled = d && strstr(d, "phases");
		pause_at = getenv("HERMETIC_TEST_PAUSE_AT");
		t0 = hm_now_ns();
	}
}

bool cli_phases_enabled(void)
{
	init_once();
	return enabled > 0;
}

void cli_phase_note(const char *fmt, ...)
{
	va_list ap;

	if (!cli_phases_enabled() || n_notes >= MAX_NOTES)
		return;
	va_start(ap, fmt);
	(void)vsnprintf(notes[n_notes++], sizeof(notes[0]), fmt, ap); /* cut short: still a note */
	va_end(ap);
}

void cli_phase(const char *name)
{
	init_once();
	if (enabled && name && n_marks < MAX_PHASES)
		marks[n_marks++] = (typeof(marks[0])){ name, hm_now_ns() };
	if (pause_at && name) {
		int i = pause_index(name);

		if (i >= 0 && !(paused & (1u << i))) {
			paused |= 1u << i; /* once: a phase may end more than once */
			(void)raise(SIGSTOP);
		}
	}
}

void cli_phases_print(void)
{
	char line[1024];
	size_t off = 0;
	uint64_t prev = t0;

	if (enabled <= 0 || !n_marks)
		return;
	for (int i = 0; i < n_marks && off < sizeof(line); i++) {
		int n = snprintf(line + off, sizeof(line) - off, "%s%s %.2f", i ? ", " : "",
				 marks[i].name, (marks[i].ns - prev) / 1e6);

		if (n < 0)
			break;
		off += (size_t)n;
		prev = marks[i].ns;
	}
	eng_warn("phases (ms): %s; total %.2f", line, (prev - t0) / 1e6);
	for (int i = 0; i < n_notes; i++)
		eng_warn("phases: %s", notes[i]);
}

/* SPDX-License-Identifier: MIT */
/*
 * The run engine: the library that starts, confines, clocks, supervises,
 * records and ends a run (engine/README.md maps which file does which).
 * The verbs in cli/ parse, call it and report; it never exits, never
 * prints: a failure is -errno with a reason in a struct eng_error the
 * caller passes (crun's libcrun_error_t), and what it has to tell the
 * user on the way goes to the warning sink the verb installed.
 */
#ifndef HERMETIC_ENGINE_H
#define HERMETIC_ENGINE_H

#include <stdarg.h>

/* Why a call failed: code the positive errno the call returned negated,
 * msg a sentence for the user ("Failed to open '/tmp': ..."). */
struct eng_error {
	int code;
	char msg[512];
};

/* Fill err (when not NULL) and return -code: `return eng_fail(err, errno,
 * "Failed to open '%s': %s", p, strerror(errno));`. */
int eng_fail(struct eng_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What the engine has to say to the user while it works (a kept root, a
 * process that runs without the clock): one line, no program name, no
 * newline. Handed to the sink the verb set, dropped without one (libcrun's
 * output handler). The sink is the process's: the verb sets it once,
 * before the first run. */
typedef void (*eng_warn_fn)(const char *line);
void eng_set_warn(eng_warn_fn sink);
void eng_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

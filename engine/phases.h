/* SPDX-License-Identifier: MIT */
/* HERMETIC_DEBUG=phases: where one enroll's wall time goes, printed as one
 * line on standard error when enroll ends (docs/performance.md). */
#ifndef HERMETIC_ENGINE_PHASES_H
#define HERMETIC_ENGINE_PHASES_H

#include <stdbool.h>

void cli_phase(const char *name); /* the phase that ends now; NULL: the start */
void cli_phases_print(void);
/* Whether HERMETIC_DEBUG asks for phases; a note is a line of its own
 * printed after them ("phases: NOTE"). */
bool cli_phases_enabled(void);
void cli_phase_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif

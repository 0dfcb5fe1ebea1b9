/* SPDX-License-Identifier: MIT */
/* HERMETIC_DEBUG=phases: where one enroll's wall time goes, printed as one
 * line on standard error when enroll ends (docs/performance.md). */
#ifndef HERMETIC_ENGINE_PHASES_H
#define HERMETIC_ENGINE_PHASES_H

void cli_phase(const char *name); /* the phase that ends now; NULL: the start */
void cli_phases_print(void);

#endif

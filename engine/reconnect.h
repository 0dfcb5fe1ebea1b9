/* SPDX-License-Identifier: MIT */
/*
 * A run's connection to hermeticd across a restart of the daemon
 * (engine/reconnect.c): lost, reclaimed from the next daemon, or given up
 * on, and what the run was without meanwhile.
 */
#ifndef HERMETIC_ENGINE_RECONNECT_H
#define HERMETIC_ENGINE_RECONNECT_H

#include <stdbool.h>
#include <stdint.h>

struct run_reconnect {
	bool lost; /* the connection closed; not reclaimed yet */
	bool restarted; /* reclaimed from a restarted daemon */
	bool given_up;
	uint64_t lost_ns, lost_mono, last_try;
	uint64_t restarted_ns, away_ns, events_lost;
	char note[160]; /* the summary's and the journal's note */
};

#endif

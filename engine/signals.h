/* SPDX-License-Identifier: MIT */
/*
 * The run's child and the signals that end or reach it (signals.c).
 *
 * From run_signals_arm (the start of a run, or replay's before it) SIGINT,
 * SIGTERM, SIGHUP and SIGQUIT (those not ignored when hermetic started) and
 * SIGCHLD are blocked and read from s->fd. run_signals_take reads what
 * arrived: while CMD runs a signal is forwarded to it; at any other moment
 * it cancels the run (s->cancel, the child killed if there is one, before
 * its exec). Returns whether the run is cancelled. run_signals_wait polls
 * fd (when >= 0) for events and the signals for at most timeout_ms (-1: no
 * limit): 1 when fd is ready, 0 at the timeout, -ECANCELED once the run is
 * cancelled, -errno when poll fails. The signals stay blocked until
 * hermetic exits: one that comes after the run ended is not acted on.
 */
#ifndef HERMETIC_ENGINE_SIGNALS_H
#define HERMETIC_ENGINE_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>
#include "engine.h"
#include "clone_vm.h"

/* CMD's process: launch.c starts it, run.c reaps it. */
struct run_child {
	pid_t pid; /* -1: none started */
	int status; /* its wait status, once done */
	bool done;
	bool cmd_started; /* it reached CMD's exec */
	int exec_err; /* the errno CMD's exec failed with (launch.c), or 0 */
	/* its stack until its exec, when started with CLONE_VM (clone_vm.c):
	 * freed once it is past its exec or dead (launch.c, run.c's reap) */
	struct clone_vm_stack stack;
};

/* SIGINT, SIGTERM, SIGHUP, SIGQUIT */
struct run_signals {
	bool armed;
	int fd; /* the signalfd every wait of the run watches */
	sigset_t oldmask; /* CMD's mask: the one hermetic started with */
	int cancel; /* the signal that cancelled the run, or 0 */
};

int run_signals_arm(struct run_signals *s, struct eng_error *err);
bool run_signals_take(struct run_signals *s, const struct run_child *c);
int run_signals_wait(struct run_signals *s, const struct run_child *c, int fd, short events,
		     int timeout_ms);

#endif

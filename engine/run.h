/* SPDX-License-Identifier: MIT */
/*
 * A run's life (run_start.c, then run.c), in the order a verb calls it:
 * run_begin, run_adopt_orphans, run_create_send and run_create_recv
 * (unless --no-daemon),
 * run_export_env, then the launch (launch.c), run_wait, run_settle,
 * run_end. Each works on the verb's struct enroll (still cli/enroll.h:
 * engine/README.md, "Not yet here"); none exits or prints.
 */
#ifndef HERMETIC_ENGINE_RUN_H
#define HERMETIC_ENGINE_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include "engine.h"

struct enroll;

/* No run yet: descriptors closed, no child; the cancelling signals are
 * read from e->sig.fd from here on (run_signals_arm); the clock unset. */
int run_begin(struct enroll *e, struct eng_error *err);
/* This process becomes the subreaper of the run's orphans, and SIGPIPE is
 * ignored (the daemon may close a socket we write). */
int run_adopt_orphans(struct eng_error *err);
/* Ask hermeticd for the run, on e->conn (the caller connected it, and
 * says how when it cannot): run_create_send sends the request (-errno
 * only when the connection is broken; a send that failed otherwise is
 * told by the answer's read) and returns at once, so that the caller does
 * what needs no answer while the daemon makes the run (cli/enroll.c);
 * run_create_recv waits for the answer: e->run, e->cgroup_fd, e->events_fd
 * and the clock page's descriptor. -ECANCELED: a signal came before the
 * daemon answered (the connection closes unanswered and the daemon ends
 * what it made for it, as it ends every closed connection's runs);
 * -EPERM: the daemon refused a run inside a run; else -errno
 * (e->fail_reason "refused" when the daemon refused). */
int run_create_send(struct enroll *e, struct eng_error *err);
int run_create_recv(struct enroll *e, struct eng_error *err);
/* CMD's environment, in this process's (it is forked from here): the run,
 * the clock page, the file-time shift, the shim in LD_PRELOAD; records
 * the real start in e->started_ns. -ENOENT: no shim where one is needed. */
int run_export_env(struct enroll *e, struct eng_error *err);
/* Until CMD ends, then until the run's cgroup is empty: its stragglers get
 * the grace period (a cancelling signal cuts it short), then are killed
 * or, with --stragglers keep, left running. 1: they were kept; 0: not;
 * -errno when waiting failed. */
int run_wait(struct enroll *e, struct eng_error *err);
/* After run_wait: reap what exited, and, only when the run is provably
 * empty, the run's dying processes too; the supervisor ends; e->end.wall_ns.
 * Returns whether the run is empty (only then may its root go). */
bool run_settle(struct enroll *e, bool have_run, bool kept);
/* Ask hermeticd to end the run (keeping its cgroup when kept); daemon:
 * it is there (enroll_daemon_wait); once cancelled, a daemon that does not
 * answer at once is left to end the run when the connection closes. */
void run_end(struct enroll *e, bool daemon, bool have_run, bool kept);
/* The child's wait status as an exit code (128+N for a signal). */
int run_status_code(int st);
/* A library next to the shim (the build tree, ../lib/hermetic,
 * HERMETIC_SHIMDIR): its real path into buf, or -ENOENT. */
int enroll_find_lib(const char *name, char *buf, size_t size);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The supervisor (docs/static.md): how processes of a run that do not load
 * the shim (static binaries, Go) get the run's clock and seeded entropy.
 *
 * enroll's child installs a seccomp filter that hands every execve and
 * execveat, and every getrandom, to a listener it passes to enroll (this
 * process, outside the run). At an exec of an image the shim does not
 * cover, enroll ptraces the process for the exec, and before its first
 * instruction maps a synthetic vDSO (vdso/vdso.c) that reads the run's
 * clock page and points AT_SYSINFO_EHDR at it, then detaches. Its
 * getrandom calls are answered from its seeded stream; everyone else's go
 * on to the kernel. supervise.c: the filter, the listener, the decisions,
 * entropy; supervise_exec.c: the exec stop.
 */
#ifndef HERMETIC_CLI_SUPERVISE_H
#define HERMETIC_CLI_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/filter.h>
#include "chacha20.h"

#define SV_MAX_PROCS 256
#define SV_MAX_INSNS 16

struct sv_proc {
	int pid; /* tgid; 0: free */
	uint64_t start; /* its start time (/proc/PID/stat field 22): pids are reused */
	struct hm_chacha_stream rng;
	bool rng_on;
};

struct supervise {
	bool want; /* --supervise on, and the run virtualises something */
	bool on; /* the listener is ours */
	bool clock, rng; /* the run's settings */
	bool debug; /* HERMETIC_DEBUG=supervise: a line per decision */
	uint64_t seed;
	const char *clock_path;
	int sock[2]; /* the child passes the listener over it */
	int listener;
	struct sock_filter insns[SV_MAX_INSNS];
	struct sock_fprog prog;
	/* the synthetic vDSO's image, and the kernel vDSO's functions as
	 * offsets from its base (0: absent) */
	uint8_t *image;
	size_t image_len;
	uint64_t real_off[4];
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	struct sv_proc procs[SV_MAX_PROCS];
	int n_procs; /* entries in use (dead ones included, until reused) */
	/* what happened, for the summary */
	uint64_t execs, supervised, refused, entropy_calls;
	char off_why[160]; /* why not on, when wanted */
};

/* Before the fork: everything the child needs (the filter, the socket),
 * and the vDSO image. Never fails the run: a supervisor that cannot be had
 * is off, and says why in off_why. */
void supervise_prepare(struct supervise *s, bool want, uint64_t seed, bool clock, bool rng,
		       const char *clock_path, const char *vdso_path);

/* hermetic status: can this machine supervise? The vDSO's path (or "")
 * into vdso; why not (or a limit) into why. */
bool supervise_probe(char *vdso, size_t vsize, char *why, size_t wsize);

/* In the child, after confine_child, before exec: install the filter and
 * pass its listener. Async-signal-safe; never fails the child. */
void supervise_child(struct supervise *s);

/* In the parent after the fork: the descriptors to poll (-1: none), and
 * what to do when they are ready. */
void supervise_parent(struct supervise *s);
int supervise_sock_fd(const struct supervise *s);
int supervise_listener_fd(const struct supervise *s);
void supervise_recv_listener(struct supervise *s);
void supervise_notify(struct supervise *s);

/* A traced process stopped (waitpid status st): handle it. True if pid was
 * a tracee of ours (the stop is consumed). */
bool supervise_stopped(struct supervise *s, int pid, int st);

/* The listener hung up: no process has the filter any more (so none ever
 * will): stop polling it. */
void supervise_gone(struct supervise *s);

/* The run is over: close the listener. */
void supervise_finish(struct supervise *s);

/* supervise_exec.c: the exec stop of pid, a seized process; detaches it. */
void sv_exec_stop(struct supervise *s, int pid);
/* supervise.c, for supervise_exec.c */
struct sv_proc *sv_proc_new(struct supervise *s, int pid);
uint64_t sv_start_time(int pid);
enum sv_kind { SV_NOT_ELF, SV_SHIM, SV_STATIC, SV_GO_DYNAMIC };
enum sv_kind sv_classify(int fd);
void sv_warn_pid(int pid, const char *what, int err);
void sv_warn_path(int pid, const char *exe, const char *what, int err);

#endif

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
 * on to the kernel; its timed waits are done on the run's clock.
 * supervise.c: the filter, the listener, the processes, entropy;
 * supervise_exec.c: execs (what one loads, the exec stop);
 * supervise_wait.c: the waits.
 */
#ifndef HERMETIC_ENGINE_SUPERVISE_H
#define HERMETIC_ENGINE_SUPERVISE_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <linux/filter.h>
#include "confine.h"
#include "chacha20.h"
#include "lineage.h"
#include "engine.h"

#define SV_MAX_PROCS 256
#define SV_MAX_INSNS 64
#define SV_MAX_WAITS 64
#define SV_THREADS 128 /* threads whose process is known (supervise_threads.c): a pidfd each */
#define SV_POLL_FDS 16 /* a poll of more descriptors waits in the kernel */
#define SV_NR_NANOSLEEP 35
#define SV_NR_CLOCK_NANOSLEEP 230
#define SV_NR_EPOLL_WAIT 232
#define SV_NR_EPOLL_PWAIT 281
#define SV_NR_FUTEX 202
#define SV_NR_POLL 7 /* the poll family (supervise_wait.c, poll_sleep) */
#define SV_NR_SELECT 23
#define SV_NR_PSELECT6 270
#define SV_NR_PPOLL 271
/* What a wait on a descriptor waits on (supervise_fds.c). */
enum {
	SV_FD_RUN, /* the run's: a wait on it is on the run's clock */
	SV_FD_GONE, /* closed since its set was read: the world's, this once (not kept) */
	SV_FD_WORLD, /* the world's: a wait on it keeps its real deadline */
};

struct pollfd;
struct hm_vclock;
struct hm_vslot;
struct seccomp_notif;
struct seccomp_notif_resp;

struct sv_proc {
	int pid; /* tgid; 0: free */
	uint64_t start; /* its start time (/proc/PID/stat field 22): pids are reused */
	uint64_t image; /* its image id (lib/lineage.c) */
	struct hm_chacha_stream rng;
	bool rng_on;
	bool vmono; /* its monotonic clock is the run's: its waits are ours */
	uint64_t seed; /* the seed its stream is keyed by (its HERMETIC_SEED) */
	uint32_t children; /* fork children numbered so far (supervise.c, inherit) */
	uint32_t gen; /* which use of this entry (supervise_threads.c) */
	int pidfd; /* for pidfd_getfd, or -1 */
	int ep_fd, ep_ours; /* its epoll descriptor and our duplicate of it, or -1 */
	/* what its fdinfo said when its set was last classified (epoll_internal):
	 * the same text, the same answer */
	int epi_fd, epi_num; /* /proc/PID/fdinfo/EPI_NUM, open, or -1 */
	char *epi_text;
	size_t epi_len;
	bool epi_internal;
	char epi_why[96];
};

/* A thread known to be of process p (while pidfd, of the thread, lives). */
struct sv_thread {
	int tid, pidfd;
	struct sv_proc *p;
	uint32_t gen; /* p's gen then */
};

/* A binary's symbols for Go's getrandom in the process (supervise_gorand.c),
 * by its identity; ok: it has them all. */
#define SV_GOSYMS 8
struct sv_gosyms {
	bool used, ok;
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	uint64_t e_entry, getrandom, errno_itab, small_ints; /* link-time addresses */
};

/* What became of the timed waits handed over, for HERMETIC_DEBUG=supervise's
 * summary (supervise_wait.c): where a supervised Go program's time goes. */
enum sv_wstat {
	SV_WS_SLEEP, /* nanosleep, clock_nanosleep handed over */
	SV_WS_FUTEX,
	SV_WS_EPOLL,
	SV_WS_POLL, /* poll, ppoll, select, pselect6 */
	SV_WS_KERNEL, /* let go to the kernel (a clock not ours, too many) */
	SV_WS_BACKOFF, /* a sleep of SHORT_NS or less: over at once */
	SV_WS_AT_ONCE, /* answered at once: ready, the word changed, past */
	SV_WS_EVENT, /* ended by its event (descriptors ready, futex word) */
	SV_WS_CLOCK, /* ended by the run's clock reaching its deadline */
	SV_WS_LAG, /* the lag bound fired it: the run's clock went there */
	SV_WS_REAL, /* on the world: its real deadline came */
	SV_WS_HOLD, /* a futex poll: its real hold passed */
	SV_WS_N
};

/* A timed wait the supervisor does on a thread's behalf (supervise_wait.c). */
struct sv_wait {
	bool used;
	bool external; /* on the world: a real deadline */
	bool poll; /* a futex wait of SHORT_NS or less: ends at real_deadline too */
	bool lagged; /* the lag bound ended it (HERMETIC_DEBUG=waits says so) */
	uint64_t id; /* the notification */
	int tid, nr;
	struct sv_proc *p;
	int64_t deadline; /* the run's monotonic clock, ns */
	int64_t real_deadline; /* CLOCK_MONOTONIC, ns (external, poll) */
	uint32_t seq; /* its slot's wait (the keeper's lag bound names it) */
	uint64_t faddr; /* a futex wait: the word, and the value it waits while */
	uint32_t fval;
	int epfd; /* our duplicate of its epoll set, or -1 (a sleep) */
	uint64_t events;
	int maxevents;
	/* select, pselect6 and ppoll write back the time left (Linux does):
	 * where, and as a timeval (1) or a timespec (2); 0: nothing */
	uint64_t left_addr;
	int left_kind;
	/* a poll or ppoll of descriptors: its array (events: where), their
	 * numbers in the process and ours (-1: a negative number, ignored),
	 * and our epoll set of them (epfd, ours alone: own_ep) */
	int n_pfd;
	int pfd_num[SV_POLL_FDS], pfd_ours[SV_POLL_FDS];
	short pfd_events[SV_POLL_FDS];
	bool own_ep;
	struct hm_vslot *slot;
};

struct supervise {
	bool prepared; /* supervise_prepare ran on it: not all zeros (as struct confine) */
	bool want; /* --supervise on, and the run virtualises something */
	bool on; /* the listener is ours */
	bool clock, rng; /* the run's settings */
	bool waits; /* a keeper moves the run's clock: waits can be virtual */
	struct hm_vclock *vc; /* the run's clock page, as enroll maps it */
	int page_fd; /* the page's file, to poke the keeper (supervise_wait.c) */
	uint64_t tick_ns;
	bool debug; /* HERMETIC_DEBUG=supervise: a line per decision */
	bool debug_waits; /* HERMETIC_DEBUG=waits: a line per wait, its start and end */
	uint64_t seed;
	int cmd_page_fd; /* the page's number in CMD (HERMETIC_CLOCK_FD), -1: none */
	/* A descriptor of the page put into a process at its exec (seccomp
	 * ADDFD), for one whose program closed its own: mapped, then closed,
	 * at the exec stop (supervise_exec.c). */
	struct {
		int pid, fd;
	} added[16];
	int sock[2]; /* the child passes the listener over it */
	int listener;
	struct sock_filter insns[SV_MAX_INSNS + FAST_MAX_INSNS]; /* (seccomp_fast's room) */
	struct sock_fprog prog;
	/* the synthetic vDSO's image, and the kernel vDSO's functions as
	 * offsets from its base (0: absent) */
	uint8_t *image;
	size_t image_len;
	uint64_t real_off[4];
	struct seccomp_notif *req;
	struct seccomp_notif_resp *resp;
	size_t req_size, resp_size;
	/* Entries past procs_hi were never used: they are neither read nor
	 * initialised (a run that supervises one process touches one entry's
	 * pages, not the 256's; docs/performance.md). */
	struct sv_proc procs[SV_MAX_PROCS];
	int procs_hi; /* entries [0, procs_hi) have been used */
	int n_procs; /* entries in use (dead ones included, until reused) */
	uint32_t proc_gen;
	struct sv_thread threads[SV_THREADS];
	bool no_thread_pidfd; /* the kernel has no PIDFD_THREAD (before 6.9) */
	struct sv_wait waits_[SV_MAX_WAITS];
	int n_waits; /* 0: the table is not read at all */
	/* the helper thread that sees the keeper's futex wakes (supervise_wait.c) */
	bool wv_started;
	pthread_t wv_thread;
	pthread_mutex_t wv_lock;
	uint32_t wv_ctl, wv_stop;
	int wv_efd;
	uint64_t waits_total;
	uint64_t wstat[SV_WS_N];
	/* what happened, for the summary */
	uint64_t execs, supervised, refused, entropy_calls, gorand;
	struct sv_gosyms gosyms[SV_GOSYMS];
	unsigned gosyms_next;
	char off_why[160]; /* why not on, when wanted */
	/* --identity: what uname and sysinfo say to supervised processes
	 * ("" and 0: the machine's; supervise_identity.c) */
	struct {
		char release[65], hostname[65], domain[65];
		uint64_t memkb;
		unsigned cpus; /* a count above the machine's, or 0 */
		int dir_order; /* 0 host, 1 sorted, 2 seeded (enum identity_dir_order) */
		uint64_t dir_key;
		/* --sched: the run's CPUs before the daemon pinned it, which
		 * sched_getaffinity says (cpu_set: a count of 0 is none) */
		cpu_set_t sched_cpus;
	} id;
	void *dirs; /* supervise_dirorder.c's lists */
};

/* Before the fork: everything the child needs (the filter, the socket),
 * and the vDSO image. A supervisor that cannot be had is off, and says why
 * in off_why: that is 0 all the same; -ENOMEM (err says so) is the one
 * failure that ends the run. */
int supervise_prepare(struct supervise *s, bool want, uint64_t seed, bool clock, bool rng,
		       int page_fd, const char *vdso_path, struct hm_vclock *vc,
		       bool waits, uint64_t tick_ns, struct eng_error *err);

/* hermetic status: can this machine supervise? vdso: the synthetic vDSO
 * was found (the caller looks, as enroll does); why not (or a limit) into
 * why. */
bool supervise_probe(bool vdso, char *why, size_t wsize);

/* In the child, after confine_child, before exec: install the filter (or
 * prog, the confinement's and the supervisor's as one: confine_merge) and
 * pass its listener. Async-signal-safe. 1 when it is in and its listener
 * passed, 0 when not (no supervision wanted, or the filter could not go in:
 * then it says why over the socket, and a merged program's confinement
 * must go in alone), or -errno: the filter is in but its listener could
 * not be passed, and the child must not exec. */
int supervise_child(struct supervise *s, const struct sock_fprog *prog);

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

/* supervise_wait.c: a timed wait of p's (true: it is ours now, or was
 * answered; false: resp says what to answer); the main loop's descriptors
 * (their count), its poll timeout (timeout_ms, or shorter while waits are
 * pending), what to do after each poll; p's waits (all, for NULL) dropped. */
bool sv_wait_begin(struct supervise *s, struct sv_proc *p, const struct seccomp_notif *req,
		   struct seccomp_notif_resp *resp);
/* A slot of the run's clock page held on thread tid's behalf (NULL: none
 * free, or no page); EXTERNAL keeps the run from counting as idle. */
struct hm_vslot *sv_slot_begin(struct supervise *s, int pid, uint64_t order, int tid,
			       int64_t deadline, bool external);
void sv_slot_end(struct supervise *s, struct hm_vslot *sl);
int supervise_wait_pollfds(struct supervise *s, struct pollfd *pfd, int max);
int supervise_wait_timeout(struct supervise *s, int timeout_ms);
void supervise_wait_tick(struct supervise *s);
void supervise_wait_drop(struct supervise *s, struct sv_proc *p);
void supervise_wait_stop(struct supervise *s); /* the helper thread ends */

/* supervise_fds.c: what a wait on process p's descriptor tfd waits on
 * (SV_FD_*, with why). */
int sv_fd_classify(struct supervise *s, struct sv_proc *p, int tfd, char *why, size_t wsize);

/* supervise_threads.c: the process of a notifying thread, if known and
 * still its (NULL: look it up, then put it); put needs req pending. */
struct sv_proc *sv_thread_get(struct supervise *s, int tid);
void sv_thread_put(struct supervise *s, const struct seccomp_notif *req, struct sv_proc *p);
void sv_threads_init(struct supervise *s);
void sv_threads_clear(struct supervise *s);

/* supervise_exec.c: the exec stop of pid, a seized process; detaches it. */
void sv_exec_stop(struct supervise *s, int pid);

/* At the exec stop of a process whose synthetic vDSO is at vdso_base (its
 * AT_ENTRY at_entry, its /proc/PID/mem memfd): if it is a Go image, serve
 * its crypto/rand reads in the process from key's stream (supervise_gorand.c).
 * 0, or -errno (not Go, not as expected: the supervisor keeps answering). */
int sv_gorand_setup(struct supervise *s, int pid, int memfd, uint64_t at_entry, uint64_t vdso_base,
		    const uint8_t key[32]);
/* supervise.c, for supervise_exec.c */
struct sv_proc *sv_proc_new(struct supervise *s, int pid);
/* The name the shim gives pid's executable (hm_exe_name of /proc/PID/exe). */
void sv_exe_name(int pid, char exe[HM_EXE_MAX]);
/* SV_NO_SHIM: dynamic, but its environment does not load the shim */
enum sv_kind { SV_NOT_ELF, SV_SHIM, SV_STATIC, SV_GO_DYNAMIC, SV_NO_SHIM };
enum sv_kind sv_classify(int fd);
/* What the execve/execveat of req would load, opened read-only; its path
 * (as the caller gave it) in path. -errno if it cannot be seen. */
int sv_open_target(const struct seccomp_notif *req, char *path, size_t size);
/* Whether that image's environment loads the shim (LD_PRELOAD names it). */
bool sv_env_has_shim(const struct seccomp_notif *req);
/* supervise.c: the process a notification is from, if we serve it */
struct sv_proc *sv_served(struct supervise *s, const struct seccomp_notif *req);
/* supervise_identity.c: --identity's uname and sysinfo for supervised
 * processes; the identity set after supervise_prepare (the filter is
 * rebuilt to send those calls here) */
void sv_identity_call(struct supervise *s, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp);
/* supervise_dirorder.c: getdents64 in the run's --dir-order; its lists freed */
void sv_dirorder_call(struct supervise *s, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp);
void sv_dirorder_free(struct supervise *s);
void supervise_set_dir_order(struct supervise *s, int order, uint64_t key);
/* --sched chaos or serial: sched_getaffinity of a supervised process says
 * these CPUs (the run's before the pinning), unless --identity's count. */
void supervise_set_sched_cpus(struct supervise *s, const cpu_set_t *cpus);
void supervise_set_identity(struct supervise *s, const char *release, const char *hostname,
			    const char *domain, uint64_t memkb, unsigned cpus);
void sv_warn_pid(int pid, const char *what, int err);
void sv_warn_path(int pid, const char *exe, const char *what, int err);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The preload shim's shared state. One struct shim_state per process (hm),
 * one struct shim_thread per thread (hm_t, initial-exec TLS). Every wrapper
 * starts with hm_ready(): real symbols are resolved once, from the
 * constructor or from the first wrapper called, under pthread_once; a
 * wrapper called re-entrantly during that initialisation falls back to raw
 * syscalls. Nothing here allocates before initialisation is complete.
 *
 * One file per concern:
 *   init.c     state, environment snapshot, real symbols, thread bookkeeping
 *   vclock.c   the run's shared clock page, this thread's slot, virtual waits
 *   clock.c    clock reads (clock_gettime & co), setting the clock, spin limit
 *   wait.c     sleeps and timed waits
 *   timers.c   alarm, interval timers, POSIX timers, timerfd on the run's clock
 *   signals.c  SIGURG (the keeper's wake-up) kept for us, masks without it
 *   entropy.c  getrandom & co, /dev/urandom fds, syscall()
 *   spawn.c    fork/vfork/exec/posix_spawn/system/popen, lineage, wait(2) merge
 *   files.c    stat/utime families: the file-time mapping
 *   pyc.c      Python bytecode caches: their source mtime follows the mapping
 *   uuid.c     libuuid's generators, from the virtual clock and the seeded stream
 *   passwd.c   the password database's home directory under --fs isolate
 *   net.c      DNS refusal
 *   record.c   recording and replay of the values the wrappers return
 *   scope.c    per-test scopes: clock offset, rekeyed streams, /dev/hermetic/...
 *   exports.c  hermetic_shim_* functions behind include/hermetic/hermetic.h
 */
#ifndef HERMETIC_SHIM_H
#define HERMETIC_SHIM_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "chacha20.h"
#include "jstream.h"
#include "lineage.h"
#include "clockfd.h"
#include "fdtab.h"

#define HM_EXPORT __attribute__((visibility("default")))
#define HM_HIDDEN __attribute__((visibility("hidden")))
#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define NSEC_PER_SEC 1000000000LL
/* TAI - UTC since 2017. */
#define HM_TAI_OFFSET (37LL * NSEC_PER_SEC)
/* A thread's clock readings tick (--tick each) only after this many readings
 * without a wait in between (clock.c). */
#define HM_TICK_AFTER 100000
/* ... and then the tick doubles every 2^HM_TICK_RAMP_SHIFT readings, up to
 * --tick << HM_TICK_RAMP_MAX (32 us by default): a thread that has polled
 * the clock long is polling for a long time (docs/virtual-time.md). */
#define HM_TICK_RAMP_SHIFT 13
#define HM_TICK_RAMP_MAX 5
/* What the reads-th reading without a wait adds (reads > after). */
static inline uint64_t hm_tick_at(uint64_t tick, uint64_t reads, uint64_t after)
{
	uint64_t k = (reads - after - 1) >> HM_TICK_RAMP_SHIFT;

	return tick << (k < HM_TICK_RAMP_MAX ? k : HM_TICK_RAMP_MAX);
}
/* Exit status of a process ended by the spin limit (also in hermetic.h). */
#define HM_EXIT_SPIN 86

/* Real functions, resolved with dlsym(RTLD_NEXT). X(name, return type, args) */
#define HM_REAL_FUNCS(X)                                                                           \
	X(clock_gettime, int, (clockid_t, struct timespec *))                                      \
	X(clock_getres, int, (clockid_t, struct timespec *))                                       \
	X(gettimeofday, int, (struct timeval *, void *))                                           \
	X(time, time_t, (time_t *))                                                                \
	X(timespec_get, int, (struct timespec *, int))                                             \
	X(ftime, int, (struct timeb *))                                                            \
	X(clock, clock_t, (void))                                                                  \
	X(sleep, unsigned, (unsigned))                                                             \
	X(usleep, int, (useconds_t))                                                               \
	X(clock_nanosleep, int, (clockid_t, int, const struct timespec *, struct timespec *))      \
	X(nanosleep, int, (const struct timespec *, struct timespec *))                            \
	X(poll, int, (struct pollfd *, nfds_t, int))                                               \
	X(ppoll, int, (struct pollfd *, nfds_t, const struct timespec *, const sigset_t *))        \
	X(select, int, (int, fd_set *, fd_set *, fd_set *, struct timeval *))                      \
	X(pselect, int,                                                                            \
	  (int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *))          \
	X(epoll_wait, int, (int, struct epoll_event *, int, int))                                  \
	X(epoll_pwait, int, (int, struct epoll_event *, int, int, const sigset_t *))               \
	X(epoll_pwait2, int,                                                                       \
	  (int, struct epoll_event *, int, const struct timespec *, const sigset_t *))             \
	X(pthread_cond_timedwait, int,                                                             \
	  (pthread_cond_t *, pthread_mutex_t *, const struct timespec *))                          \
	X(pthread_cond_clockwait, int,                                                             \
	  (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))               \
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *))              \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *))   \
	X(sem_timedwait, int, (sem_t *, const struct timespec *))                                  \
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *))          \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *))          \
	X(pthread_rwlock_clockrdlock, int,                                                         \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *))                                \
	X(pthread_rwlock_clockwrlock, int,                                                         \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *))                                \
	X(thrd_sleep, int, (const struct timespec *, struct timespec *))                           \
	X(cnd_timedwait, int, (cnd_t *, mtx_t *, const struct timespec *))                         \
	X(mtx_timedlock, int, (mtx_t *, const struct timespec *))                                  \
	X(sigtimedwait, int, (const sigset_t *, siginfo_t *, const struct timespec *))             \
	X(sem_clockwait, int, (sem_t *, clockid_t, const struct timespec *))                       \
	X(pthread_create, int,                                                                     \
	  (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))                        \
	X(sigaction, int, (int, const struct sigaction *, struct sigaction *))                     \
	X(signal, sighandler_t, (int, sighandler_t))                                               \
	X(sigprocmask, int, (int, const sigset_t *, sigset_t *))                                   \
	X(pthread_sigmask, int, (int, const sigset_t *, sigset_t *))                               \
	X(sigsuspend, int, (const sigset_t *))                                                     \
	X(sigwaitinfo, int, (const sigset_t *, siginfo_t *))                                       \
	X(sigwait, int, (const sigset_t *, int *))                                                 \
	X(clock_settime, int, (clockid_t, const struct timespec *))                                \
	X(settimeofday, int, (const struct timeval *, const struct timezone *))                               \
	X(alarm, unsigned, (unsigned))                                                             \
	X(setitimer, int, (__itimer_which_t, const struct itimerval *, struct itimerval *))                     \
	X(getitimer, int, (__itimer_which_t, struct itimerval *))                                               \
	X(timer_create, int, (clockid_t, struct sigevent *, timer_t *))                            \
	X(timer_settime, int, (timer_t, int, const struct itimerspec *, struct itimerspec *))      \
	X(timer_gettime, int, (timer_t, struct itimerspec *))                                      \
	X(timer_getoverrun, int, (timer_t))                                                        \
	X(timer_delete, int, (timer_t))                                                            \
	X(timerfd_create, int, (int, int))                                                         \
	X(timerfd_settime, int, (int, int, const struct itimerspec *, struct itimerspec *))        \
	X(timerfd_gettime, int, (int, struct itimerspec *))                                        \
	X(getrandom, ssize_t, (void *, size_t, unsigned))                                          \
	X(getentropy, int, (void *, size_t))                                                       \
	X(arc4random, uint32_t, (void))                                                            \
	X(arc4random_buf, void, (void *, size_t))                                                  \
	X(arc4random_uniform, uint32_t, (uint32_t))                                                \
	X(open, int, (const char *, int, ...))                                                     \
	X(open64, int, (const char *, int, ...))                                                   \
	X(openat, int, (int, const char *, int, ...))                                              \
	X(openat64, int, (int, const char *, int, ...))                                            \
	X(__open_2, int, (const char *, int))                                                      \
	X(__open64_2, int, (const char *, int))                                                    \
	X(__openat_2, int, (int, const char *, int))                                               \
	X(__openat64_2, int, (int, const char *, int))                                             \
	X(fopen, FILE *, (const char *, const char *))                                             \
	X(fopen64, FILE *, (const char *, const char *))                                           \
	X(fflush, int, (FILE *))                                                                   \
	X(ftruncate, int, (int, off_t))                                                            \
	X(truncate, int, (const char *, off_t))                                                    \
	X(copy_file_range, ssize_t, (int, off_t *, int, off_t *, size_t, unsigned))               \
	X(close, int, (int))                                                                       \
	X(connect, int, (int, const struct sockaddr *, socklen_t))                                 \
	X(bind, int, (int, const struct sockaddr *, socklen_t))                                    \
	X(accept, int, (int, struct sockaddr *, socklen_t *))                                      \
	X(accept4, int, (int, struct sockaddr *, socklen_t *, int))                                \
	X(socket, int, (int, int, int))                                                            \
	X(getsockopt, int, (int, int, int, void *, socklen_t *))                                   \
	X(setsockopt, int, (int, int, int, const void *, socklen_t))                               \
	X(recv, ssize_t, (int, void *, size_t, int))                                               \
	X(recvfrom, ssize_t, (int, void *, size_t, int, struct sockaddr *, socklen_t *))           \
	X(recvmsg, ssize_t, (int, struct msghdr *, int))                                           \
	X(epoll_ctl, int, (int, int, int, struct epoll_event *))                                   \
	X(fclose, int, (FILE *))                                                                   \
	X(read, ssize_t, (int, void *, size_t))                                                    \
	X(__read_chk, ssize_t, (int, void *, size_t, size_t))                                      \
	X(pread, ssize_t, (int, void *, size_t, off_t))                                            \
	X(pread64, ssize_t, (int, void *, size_t, off_t))                                          \
	X(readv, ssize_t, (int, const struct iovec *, int))                                        \
	X(write, ssize_t, (int, const void *, size_t))                                             \
	X(pwrite, ssize_t, (int, const void *, size_t, off_t))                                     \
	X(writev, ssize_t, (int, const struct iovec *, int))                                       \
	X(fread, size_t, (void *, size_t, size_t, FILE *))                                         \
	X(fread_unlocked, size_t, (void *, size_t, size_t, FILE *))                                \
	X(dup2, int, (int, int))                                                                   \
	X(dup3, int, (int, int, int))                                                              \
	X(close_range, int, (unsigned, unsigned, int))                                             \
	X(closefrom, void, (int))                                                                  \
	X(syscall, long, (long, ...))                                                              \
	X(execve, int, (const char *, char *const[], char *const[]))                               \
	X(execvpe, int, (const char *, char *const[], char *const[]))                              \
	X(fexecve, int, (int, char *const[], char *const[]))                                       \
	X(execveat, int, (int, const char *, char *const[], char *const[], int))                   \
	X(posix_spawn, int,                                                                        \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,   \
	   char *const[], char *const[]))                                                          \
	X(posix_spawnp, int,                                                                       \
	  (pid_t *, const char *, const posix_spawn_file_actions_t *, const posix_spawnattr_t *,   \
	   char *const[], char *const[]))                                                          \
	X(popen, FILE *, (const char *, const char *))                                             \
	X(vfork, pid_t, (void))                                                                    \
	X(waitpid, pid_t, (pid_t, int *, int))                                                     \
	X(wait4, pid_t, (pid_t, int *, int, struct rusage *))                                      \
	X(waitid, int, (idtype_t, id_t, siginfo_t *, int))                                         \
	X(_exit, void, (int))                                                                      \
	X(_Exit, void, (int))                                                                      \
	X(abort, void, (void))                                                                     \
	X(system, int, (const char *))                                                             \
	X(stat, int, (const char *, struct stat *))                                                \
	X(lstat, int, (const char *, struct stat *))                                               \
	X(fstat, int, (int, struct stat *))                                                        \
	X(fstatat, int, (int, const char *, struct stat *, int))                                   \
	X(__xstat, int, (int, const char *, struct stat *))                                        \
	X(__lxstat, int, (int, const char *, struct stat *))                                       \
	X(__fxstat, int, (int, int, struct stat *))                                                \
	X(__fxstatat, int, (int, int, const char *, struct stat *, int))                           \
	X(statx, int, (int, const char *, int, unsigned, struct statx *))                          \
	X(utime, int, (const char *, const struct utimbuf *))                                      \
	X(utimes, int, (const char *, const struct timeval[2]))                                    \
	X(lutimes, int, (const char *, const struct timeval[2]))                                   \
	X(futimes, int, (int, const struct timeval[2]))                                            \
	X(futimesat, int, (int, const char *, const struct timeval[2]))                            \
	X(utimensat, int, (int, const char *, const struct timespec[2], int))                      \
	X(futimens, int, (int, const struct timespec[2]))                                          \
	X(getaddrinfo, int,                                                                        \
	  (const char *, const char *, const struct addrinfo *, struct addrinfo **))               \
	X(gethostbyname, struct hostent *, (const char *))                                         \
	X(gethostbyname2, struct hostent *, (const char *, int))                                   \
	X(gethostbyname_r, int,                                                                    \
	  (const char *, struct hostent *, char *, size_t, struct hostent **, int *))              \
	X(gethostbyname2_r, int,                                                                   \
	  (const char *, int, struct hostent *, char *, size_t, struct hostent **, int *))         \
	X(getnameinfo, int,                                                                        \
	  (const struct sockaddr *, socklen_t, char *, socklen_t, char *, socklen_t, int))        \
	X(getpwuid, struct passwd *, (uid_t))                                                      \
	X(getpwnam, struct passwd *, (const char *))                                               \
	X(getpwuid_r, int, (uid_t, struct passwd *, char *, size_t, struct passwd **))             \
	X(getpwnam_r, int, (const char *, struct passwd *, char *, size_t, struct passwd **))

#include <stdio.h>
#include <poll.h>
#include <semaphore.h>
#include <signal.h>
#include <threads.h>
#include <spawn.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/timeb.h>
#include <utime.h>

/* Recording and replay (record.c), bits of shim_state.jr. */
#define HM_JR_RECORD 1 /* HERMETIC_RECORD: journal every value returned */
#define HM_JR_REPLAY 2 /* HERMETIC_REPLAY: return the recorded values */

struct hm_jr_thread; /* one thread's streams, record.c */

struct hm_real {
#define X(name, ret, args) ret(*name) args;
	HM_REAL_FUNCS(X)
#undef X
};

/* The executables one process ran, as HERMETIC_IMAGE carries them. */
#define HM_RUNS_MAX 512

/* Snapshot of the HERMETIC_* environment, re-injected on every exec. */
#define HM_ENV_BUF 16384
#define HM_ENV_MAX 64

struct shim_state {
	bool ready; /* initialisation done (active or not); release/acquire */
	bool active; /* enrolled: HERMETIC_CLOCK_FD (or, shim alone, HERMETIC_SEED) was given */
	bool clock; /* virtual clock */
	bool rng; /* seeded entropy */
	bool net_block; /* DNS refusal */
	/* What the clock/wait and entropy wrappers must do at all: the one flag
	 * each checks first (clock || jr, rng || jr). */
	bool clock_hook;
	bool rng_hook;
	uint8_t jr; /* HM_JR_* */
	bool jr_strict; /* HERMETIC_REPLAY_STRICT != 0 */
	bool jr_closed; /* the image is ending (exit): no new streams, no mismatches */
	const char *rec_dir; /* HERMETIC_RECORD's value, in env_buf */
	const char *rep_dir; /* HERMETIC_REPLAY's value, in env_buf */
	const char *rep_report; /* HERMETIC_REPLAY_REPORT's value, in env_buf, or NULL */
	pid_t jr_closer; /* tid ending every stream (exit, exec), else 0 */
	struct hm_jr_thread *jr_list; /* every thread's streams, under jr_lock */
	pthread_mutex_t jr_lock;
	uint64_t seed;
	bool sched; /* --sched chaos or serial (sched.c) */
	bool sched_serial; /* --sched serial */
	bool sched_cpus_set; /* sched_cpus holds the run's CPUs before the pinning */
	uint64_t sched_seed;
	cpu_set_t sched_cpus;
	int64_t now0; /* HERMETIC_NOW */
	uint64_t tick;
	uint64_t spin_limit;
	int64_t fs_shift; /* real - virtual for file times (files.c) */
	int64_t fs_since; /* real stamps after this the run caused (filetab.c); 0: none */
	pid_t pid; /* real pid of this process (updated in fork children) */
	pid_t ppid; /* its parent then: reparented orphans do not publish their exit */
	/* Who we are (lib/lineage.h; spawn.c hands it on in HERMETIC_LINEAGE and
	 * HERMETIC_IMAGE). */
	char lineage[HM_LINEAGE_MAX]; /* display key: the place among the parent image's children */
	uint64_t proc; /* this process */
	uint64_t parent; /* the image that created it, 0 for the run's first */
	uint64_t image; /* this image: hm_image_id(proc, exe, exe_count) */
	char exe[HM_EXE_MAX]; /* the executable it runs, hm_exe_name of /proc/self/exe */
	uint32_t exe_count; /* how many times this process ran exe (0: a fork child's inherited image) */
	uint32_t gen; /* images of this process before this one (for people, not identity) */
	char runs[HM_RUNS_MAX]; /* "name=count,..." of this process so far (hm_runs_*) */
	_Atomic uint64_t children; /* children this image created so far */
	_Atomic uint32_t threads; /* threads created so far (main thread is 0) */
	struct hm_vclock *vc; /* the run's clock page (vclock.c); NULL: clock off */
	/* The page's descriptor, kept open for children (fdkeep.c); fd -1: none. */
	struct hm_clockfd page;
	bool debug_waits; /* HERMETIC_DEBUG has "waits": print every timed wait */
	bool start_wait; /* a new image of a run with a keeper: its start costs time (wait.c) */
	/* The scope this process is in (scope.c); read on every clock reading. */
	bool sc_on;
	uint32_t sc_epoch; /* +1 at every entry and exit: threads rekey */
	int64_t sc_mono; /* monotonic reading = run's view + sc_mono (0: no scope) */
	int64_t sc_wall; /* in a scope, realtime = run's monotonic view + sc_wall */
	/* HERMETIC_* (except LINEAGE/IMAGE) as "NAME=value" strings in env_buf. */
	const char *env[HM_ENV_MAX];
	int nenv;
	char env_buf[HM_ENV_BUF];
	const char *preload; /* HERMETIC_PRELOAD's value, in env_buf */
	const char *dns_allow; /* HERMETIC_DNS_ALLOW's value, in env_buf, or "" */
	const char *home; /* HERMETIC_HOME's value, in env_buf, or NULL (passwd.c) */
	pthread_mutex_t environ_lock; /* orders system()/popen()'s environ swaps */
	/* fds open on /dev/urandom or /dev/random, as a bitmap (fdtab.h). */
	struct hm_fdtab rand_fds;
	/* fds open on Python bytecode caches (pyc.c), while pyc is on: the
	 * virtual clock shifts file times (fs_shift, whole seconds, not 0). */
	bool pyc;
	struct hm_fdtab pyc_fds; /* a bitmap (fdtab.h) */
	/* fds whose kind is known (opened here, or written once), and those of
	 * them that may be regular files: writes to them are recorded (files.c).
	 * Bitmaps (fdtab.h). */
	struct hm_fdtab fs_known;
	struct hm_fdtab fs_file;
	struct hm_fdtab fs_stamp; /* per descriptor: struct hm_fsstamp (files.c) */
	struct hm_real real;
};

struct shim_thread {
	bool inited;
	bool in_init; /* this thread runs the initialisation */
	bool rng_ready;
	uint32_t index; /* thread index within the process, creation order */
	uint64_t pending_child; /* number of the child being forked/vforked from this thread */
	int depth; /* re-entry guard */
	/* This thread's view of the run's clock (clock.c): the page's mono when
	 * last read, the ticks added since, the last value handed out, readings
	 * since the last wait. */
	int64_t base, off, last;
	/* Time the lag bound gave this thread alone (vclock.c): its readings
	 * are the view above plus this; its deadlines, published in the page,
	 * minus this, so that no other thread sees it. */
	int64_t lagoff;
	/* A series of this thread's waits the bound ended while the run's
	 * clock stood at lag_a_mono (vclock.c's self_lag, as quiesce.c's
	 * lag_at): when the first began (real), what the series waited. */
	int64_t lag_a_mono, lag_a_real, lag_a_credit;
	uint64_t reads;
	int64_t cpu; /* virtual CPU time, ns */
	uint32_t tid; /* gettid(), cached */
	int32_t slot; /* 1 + this thread's slot in the page, 0: none yet */
	struct hm_vwait *vw; /* the virtual wait in progress, for the SIGURG handler */
	uint32_t wakes; /* our SIGURGs received */
	uint32_t shorts; /* short sleeps in a row (vclock.c) */
	bool no_short; /* the timer helper: its waits are never back-offs */
	struct timespec dl; /* the absolute real deadline a primitive is waiting for */
	struct timespec rel; /* the relative timeout a raw syscall is waiting for */
	struct hm_chacha_stream rng;
	struct hm_jr_thread *jr; /* this thread's streams, NULL until first used */
	bool jr_done; /* this thread's streams are closed (it is exiting) */
	bool jw_event; /* replay: the wait in progress saw an event, wait for it */
	bool lagged; /* the last virtual wait was ended by the lag bound (journal) */
	uint32_t sc_epoch; /* hm.sc_epoch this thread's stream and CPU clock follow */
};

extern struct shim_state hm HM_HIDDEN;
extern __thread struct shim_thread hm_t HM_HIDDEN;

bool hm_init_slow(void) HM_HIDDEN;
void hm_thread_init(void) HM_HIDDEN;

/* True when the shim is initialised; false only inside the initialisation
 * itself (then use raw syscalls). Initialises the calling thread's state. */
static inline bool hm_ready(void)
{
	if (likely(__atomic_load_n(&hm.ready, __ATOMIC_ACQUIRE))) {
		if (unlikely(!hm_t.inited))
			hm_thread_init();
		return true;
	}
	return hm_init_slow();
}

/* vclock.c */
#include <linux/types.h>
#include "hermetic/vclock.h"
struct hm_vwait {
	int64_t deadline; /* virtual monotonic ns */
	struct hm_vslot *s; /* NULL: no slot (no page, page full) */
	bool external; /* on the real world: keeps the run busy, real deadline */
	uint32_t wakes; /* hm_t.wakes when it began */
	struct hm_vwait *prev; /* a wait this one interrupted (a signal handler's) */
	const char *what; /* "poll", "sleep", ... for HERMETIC_DEBUG=waits */
	int64_t start; /* the run's clock when it began */
	bool short_wait; /* HM_VSF_SHORT: ends when the keeper says, clock unmoved */
	uint32_t seq; /* the slot's seq for this wait */
	uint64_t activity; /* the page's activity when last looked at (no keeper) */
	uint32_t quiet; /* graces in a row with no activity (no keeper) */
	int64_t asked; /* the deadline as the caller computed it (its view, lagoff included) */
	int64_t real_begin; /* real CLOCK_MONOTONIC when it began (the lag bound) */
	int64_t lag_mono, lag_moved; /* no keeper: the clock last seen, and when */
	bool at_once; /* a poll whose descriptors were ready: not a wait (poll.c) */
	bool self_lagged; /* no keeper: the lag bound ended it (vclock.c) */
};
/* page: the run's page (fdkeep.c), or NULL for a private one (why: a
 * warning's text, NULL for none). */
void hm_vc_init(struct hm_vclock *page, const char *why) HM_HIDDEN;
/* fdkeep.c: the run's page from HERMETIC_CLOCK_FD (or asked of hermeticd),
 * its descriptor kept in hm.page; NULL with a warning's text in *ret_why
 * when the variable is set but no page can be had. */
struct hm_vclock *hm_page_init(const char **ret_why) HM_HIDDEN;
/* After snapshot_env: HERMETIC_CLOCK_FD in hm.env names hm.page. */
void hm_page_env_publish(void) HM_HIDDEN;
/* Wrapper hooks: is fd the page descriptor (fdkeep.c); the program closed
 * it (it stays open, marked for the next exec); make room at fd (move the
 * page) before a dup2/dup3 onto it; close_range(2) around it. */
static inline bool hm_page_fd_is(int fd)
{
	return fd >= 0 && fd == __atomic_load_n(&hm.page.fd, __ATOMIC_ACQUIRE);
}
void hm_page_fd_closed(void) HM_HIDDEN;
void hm_page_fd_evict(int fd) HM_HIDDEN;
int hm_page_close_range(unsigned first, unsigned last, int flags) HM_HIDDEN;
bool hm_vc_cas_max(int64_t mono) HM_HIDDEN; /* move the clock to mono if later */
void hm_vc_thread_exit(void) HM_HIDDEN;
void hm_vc_process_exit(void) HM_HIDDEN; /* exit or exec: every slot of ours */
void hm_vc_fork_child(void) HM_HIDDEN;
bool hm_vw_begin(struct hm_vwait *w, int64_t deadline, uint32_t wake, bool external,
		 const char *what) HM_HIDDEN;
void hm_vw_end(struct hm_vwait *w) HM_HIDDEN;
bool hm_vw_due(const struct hm_vwait *w) HM_HIDDEN;
int64_t hm_vw_real_ns(const struct hm_vwait *w) HM_HIDDEN;
void hm_vw_real_timeout(struct hm_vwait *w) HM_HIDDEN;
bool hm_vw_arm_rel(struct hm_vwait *w) HM_HIDDEN;
bool hm_vw_arm_abs(struct hm_vwait *w, clockid_t real_id) HM_HIDDEN;
int hm_vw_sleep(struct hm_vwait *w) HM_HIDDEN;
void hm_vw_on_wake(void) HM_HIDDEN;

/* signals.c */
void hm_signals_init(void) HM_HIDDEN;
const sigset_t *hm_sig_strip(const sigset_t *set, sigset_t *buf) HM_HIDDEN;

/* timers.c */
void hm_timers_fork_child(void) HM_HIDDEN;
int64_t hm_timers_next(void) HM_HIDDEN; /* earliest armed expiry of this process */
/* The same, INT64_MAX when none, for clock readings to compare with. */
extern int64_t hm_timer_due HM_HIDDEN;
/* A thread's readings passed hm_timer_due: fire what is due at now. */
void hm_timers_ticked(int64_t now) HM_HIDDEN;
bool hm_timerfd(int fd) HM_HIDDEN; /* one of our virtual timerfds */
ssize_t hm_timerfd_read(int fd, void *buf, size_t len) HM_HIDDEN;
void hm_timerfd_closed(int fd) HM_HIDDEN;


/* clock.c */
/*
 * What a clock reading's fast path needs, in one cache line of its own:
 * on when the reading is the virtual clock and nothing else (the shim is
 * ready, the clock is virtual, no journal, no scope); the page; and after
 * how many readings without a wait a reading is no longer the plain one
 * (it ticks, or with --tick 0 meets the spin limit). hm_clock_fast_update
 * recomputes it whenever one of its inputs changes.
 */
struct hm_clock_fast {
	uint32_t ids; /* the clock ids the fast path serves now (0: none) */
	struct hm_vclock *vc;
	uint64_t tick; /* hm.tick */
	uint64_t tick_after; /* --tick: HM_TICK_AFTER; --tick 0: never (with a spin limit, ids is 0) */
} __attribute__((aligned(64)));
extern struct hm_clock_fast hm_cf HM_HIDDEN;
void hm_clock_fast_update(void) HM_HIDDEN;
int64_t hm_clock_now(clockid_t id) HM_HIDDEN; /* virtual reading without ticking */
void hm_clock_waited(void) HM_HIDDEN; /* a sleep/wait happened: reset the spin count */
void hm_clock_spun(void) HM_HIDDEN; /* a zero-timeout poll found nothing: readings tick */
/* The thread's last reading was the interpreter's, not the program's (CPython's GIL deadline,
 * locks.c): take it back from the thread's count of readings and its ticks, and from its journal. */
void hm_clock_unread(void) HM_HIDDEN;
/* A virtual absolute time on clock id as a deadline on the run's monotonic clock. */
int64_t hm_clock_to_mono(clockid_t id, int64_t t) HM_HIDDEN;
void hm_clock_follow(clockid_t id, int64_t ns) HM_HIDDEN; /* replay: a reading was id = ns */
void hm_clock_jump(int64_t mono) HM_HIDDEN; /* replay: a wait ended at virtual mono */
/* The lag bound ended a wait: this thread's readings go to view (at least). */
void hm_clock_lag_to(int64_t view) HM_HIDDEN;
bool hm_clock_virtual_id(clockid_t id) HM_HIDDEN; /* a clock id the shim virtualises */

/* wait.c: a futex(2) call made through syscall(); timeouts follow virtual time */
long hm_futex_wait(uint32_t *uaddr, int op, uint32_t val, const struct timespec *tmo,
		   uint32_t *uaddr2, uint32_t val3) HM_HIDDEN;


/* entropy.c */
/* len bytes of this thread's stream (hm_random_bytes, below). */
void hm_random_bytes_slow(void *buf, size_t len) HM_HIDDEN;
void hm_rng_reset(void) HM_HIDDEN;
static inline bool hm_randfd(int fd)
{
	return hm_fdbits_get(&hm.rand_fds, fd);
}
static inline void hm_randfd_set(int fd, bool on)
{
	hm_fdbits_set(&hm.rand_fds, fd, on);
}

/* scope.c */
#include "scope.h"
#define HM_MAGIC_PREFIX "/dev/hermetic/"
static inline bool hm_magic_path(const char *path)
{
	return path && path[0] == '/' && !strncmp(path, HM_MAGIC_PREFIX, sizeof(HM_MAGIC_PREFIX) - 1);
}
int hm_magic_open(const char *path, int flags) HM_HIDDEN;
void hm_scope_init(void) HM_HIDDEN;
void hm_scope_thread_sync(void) HM_HIDDEN; /* this thread follows a new scope */
static inline bool hm_scope_stale(void)
{
	return unlikely(hm_t.sc_epoch != __atomic_load_n(&hm.sc_epoch, __ATOMIC_RELAXED));
}
/* len bytes of this thread's stream: a copy out of its buffered keystream
 * (lib/chacha20.h) when the stream is keyed for the current scope and holds
 * enough; else entropy.c keys it or refills it. No lock: the stream is the
 * thread's own (a fork child rekeys, spawn.c). */
static inline void hm_random_bytes(void *buf, size_t len)
{
	struct hm_chacha_stream *s = &hm_t.rng;

	if (likely(hm_t.rng_ready && !hm_scope_stale() && len <= HM_CHACHA_BUF - s->pos)) {
		const uint8_t *src = s->buf + s->pos;
		uint8_t *dst = buf;

		s->pos += len;
		/* The common draws (4, 8, 16 bytes) without a call to memcpy. */
		if (len >= 8 && len <= 16) {
			uint64_t a, b;

			__builtin_memcpy(&a, src, 8);
			__builtin_memcpy(&b, src + len - 8, 8);
			__builtin_memcpy(dst, &a, 8);
			__builtin_memcpy(dst + len - 8, &b, 8);
		} else if (len >= 4 && len < 8) {
			uint32_t a, b;

			__builtin_memcpy(&a, src, 4);
			__builtin_memcpy(&b, src + len - 4, 4);
			__builtin_memcpy(dst, &a, 4);
			__builtin_memcpy(dst + len - 4, &b, 4);
		} else {
			memcpy(dst, src, len);
		}
		return;
	}
	hm_random_bytes_slow(buf, len);
}
/* This thread's stream key in or between scopes; false: the run's own. */
bool hm_scope_rng_key(uint8_t key[HM_CHACHA_KEY_SIZE]) HM_HIDDEN;
int hm_scope_enter(const char *name, const uint64_t *seed, const int64_t *now) HM_HIDDEN;
int hm_scope_leave(enum hm_scope_status status) HM_HIDDEN;
const char *hm_scope_name(void) HM_HIDDEN; /* NULL outside scopes */
uint64_t hm_scope_seed_now(void) HM_HIDDEN; /* the scope's seed, else the run's */
int hm_scope_advance(int64_t ns) HM_HIDDEN;
int hm_scope_set_wall(int64_t ns, bool mono_too) HM_HIDDEN;
/* Who a thread's journal stream belongs to: this process's identity, or its
 * identity within the scope, and the scope's dir in the spool or replay
 * directory ("" outside scopes). */
struct hm_stream_ident {
	char lineage[HM_LINEAGE_MAX];
	uint32_t thread, gen;
	uint64_t proc, parent, image; /* lib/lineage.h, or lib/scope.h's within a scope */
	char dir[HM_SCOPE_DIR_MAX];
};
void hm_stream_ident(uint32_t index, bool replay, struct hm_stream_ident *id) HM_HIDDEN;
/* exports.c (also called from scope.c's /dev/hermetic/ operations) */
HM_EXPORT uint64_t hermetic_shim_seed(void);
HM_EXPORT uint64_t hermetic_shim_base_seed(void);
HM_EXPORT int64_t hermetic_shim_now_ns(void);
HM_EXPORT int hermetic_shim_advance_ns(int64_t ns);
HM_EXPORT int hermetic_shim_set_now_ns(int64_t ns);

/* pyc.c: Python bytecode caches, their source mtime translated */
bool hm_pyc_path(const char *path) HM_HIDDEN;
static inline bool hm_pycfd(int fd)
{
	return hm_fdbits_get(&hm.pyc_fds, fd);
}
static inline void hm_pycfd_set(int fd, bool on)
{
	hm_fdbits_set(&hm.pyc_fds, fd, on);
}
/* files.c and filetab.c: file times of the run's own writes */
#define HM_FT_N 3 /* mtime, ctime, atime */
#define HM_FT_A_INDEX 2 /* atime: no write stamps it */
#define HM_FT_SKIP INT64_MIN /* not a field to map */
#define HM_FT_SEEN (INT64_MIN + 1) /* keep a known stamp's time, else now */
#define HM_FT_NOW (INT64_MIN + 2) /* this stamp is now, known or not */
/* t: real ns (HM_FT_SKIP: not this field) of the inode (dev, ino), made
 * virtual; set: per field HM_FT_SEEN, HM_FT_NOW or the virtual ns to record.
 * false: no room in the table (t unchanged). */
bool hm_ft_map(uint64_t dev, uint64_t ino, int64_t t[HM_FT_N], const int64_t set[HM_FT_N]) HM_HIDDEN;
int64_t hm_clock_page_wall(void) HM_HIDDEN; /* clock.c: the page's wall time */
void hm_fs_wrote(int fd, bool wrote) HM_HIDDEN; /* fd written (wrote) or created */
FILE *hm_fs_fopened(FILE *f, const char *mode) HM_HIDDEN; /* fwrites.c */
/* The inode a descriptor's last write was stamped on, and the page's clock
 * then: a write at the same page time needs no fstat (files.c). */
struct hm_fsstamp {
	uint64_t dev, ino; /* ino 0: none */
	int64_t mono;
	uint64_t pad;
};
#define HM_FSSTAMP_SHIFT 6
bool hm_ft_rewrote(uint64_t dev, uint64_t ino, int64_t now) HM_HIDDEN;
static inline void hm_fsstamp_forget(int fd)
{
	struct hm_fsstamp *c;

	if (fd < 0)
		return;
	c = hm_fdtab_at(&hm.fs_stamp, (unsigned)fd, sizeof(*c), HM_FSSTAMP_SHIFT, false);
	if (c && c->ino)
		__atomic_store_n(&c->ino, 0, __ATOMIC_RELAXED);
}
static inline void hm_fsfd_set(int fd, bool file)
{
	hm_fdbits_set(&hm.fs_known, fd, true);
	hm_fdbits_set(&hm.fs_file, fd, file);
	hm_fsstamp_forget(fd);
}
static inline void hm_fsfd_forget(int fd)
{
	hm_fdbits_set(&hm.fs_known, fd, false);
	hm_fdbits_set(&hm.fs_file, fd, false);
	hm_fsstamp_forget(fd);
}
/* A write to fd is to be recorded: a file, or not known yet (inherited,
 * made by a call we do not wrap): hm_fs_wrote then looks once. */
static inline bool hm_fsfd(int fd)
{
	if (!hm.fs_since || fd < 0)
		return false;
	if (likely(hm_fdbits_get(&hm.fs_known, fd)))
		return hm_fdbits_get(&hm.fs_file, fd);
	hm_fsfd_set(fd, true);
	return true;
}
/* After a successful write of r bytes to fd. */
static inline void hm_fs_after_write(int fd, ssize_t r)
{
	if (r > 0 && hm_fsfd(fd))
		hm_fs_wrote(fd, true);
}
/* read (off < 0) or pread at off, and readv, on a cache's descriptor */
ssize_t hm_pyc_read(int fd, void *buf, size_t n, off_t off) HM_HIDDEN;
ssize_t hm_pyc_readv(int fd, const struct iovec *iov, int cnt) HM_HIDDEN;

/* peers.c: descriptors that wait on the real world */
bool hm_remote_open(void) HM_HIDDEN; /* any descriptor of ours might */
bool hm_fd_external(int fd) HM_HIDDEN;
/* 1 + the highest descriptor the table has met (select scans no further
 * than this past FD_SETSIZE) */
int hm_fd_high(void) HM_HIDDEN;
bool hm_epoll_external(int epfd) HM_HIDDEN;
void hm_fd_forget(int fd) HM_HIDDEN; /* closed (or about to be replaced) */
void hm_fd_copy(int to, int from) HM_HIDDEN; /* dup */
void hm_peers_note_stdio(void) HM_HIDDEN; /* the run's first process, at start */
struct hm_vwait;
bool hm_fd_block_begin(int fd, struct hm_vwait *w) HM_HIDDEN;
void hm_fd_block_end(struct hm_vwait *w) HM_HIDDEN;

/* spawn.c */
/* HERMETIC_LINEAGE, HERMETIC_IMAGE, /proc/self/exe; true for the run's
 * first process (no HERMETIC_IMAGE). */
bool hm_lineage_init(void) HM_HIDDEN;
void hm_fork_prepare(void) HM_HIDDEN;
void hm_fork_parent(void) HM_HIDDEN;
void hm_fork_child(void) HM_HIDDEN;

/* record.c. Recording appends to the calling thread's stream; replay takes
 * the thread's next recorded value if it is of the kind asked (true), else
 * reports the mismatch (strict: the process ends, exit status 87) and the
 * caller uses a live value (false). */
void hm_jr_init(void) HM_HIDDEN;
void hm_jr_put_clock(enum hm_jclock_call call, clockid_t id, int64_t ns) HM_HIDDEN;
/* Take back the thread's last record when it is the CLOCK_MONOTONIC reading put last (clock.c's
 * hm_clock_unread); nothing otherwise. */
void hm_jr_unput_clock(void) HM_HIDDEN;
/* Replay: give the thread's last question back when it was a CLOCK_MONOTONIC reading: true when it
 * was answered from the recording (the record is back on the timing cursor); a live answer is
 * uncounted (false). */
bool hm_jr_unget_clock(void) HM_HIDDEN;
void hm_jr_put_entropy(enum hm_jentropy_src src, const void *buf, size_t len) HM_HIDDEN;
bool hm_jr_get_clock(enum hm_jclock_call call, clockid_t id, int64_t *ret_ns) HM_HIDDEN;
bool hm_jr_get_entropy(enum hm_jentropy_src src, void *buf, size_t len) HM_HIDDEN;

/* One timed wait or sleep through the journal: hm_jw_begin says whether the
 * recording has it time out (true: return a timeout now, the clock has
 * jumped; w->result is what a sleep returned), hm_jw_end records the outcome
 * or checks it against the recording. errno is preserved. */
struct hm_jw {
	uint8_t call; /* enum hm_jwait_call */
	bool replayed; /* a recorded outcome is being replayed */
	bool rec_timed_out;
	int64_t result; /* recorded result */
	uint64_t vtime; /* recorded virtual monotonic time after the wait */
	uint64_t index; /* call number */
};
bool hm_jw_begin(struct hm_jw *w, enum hm_jwait_call call, bool sleep) HM_HIDDEN;
void hm_jw_end(struct hm_jw *w, bool timed_out, int64_t result) HM_HIDDEN;
/* Wait the virtual way: clock virtual, or replay (which never waits for
 * what the recording says timed out, and keeps its own virtual time). */
static inline bool hm_jw_virtual(const struct hm_jw *w)
{
	return hm.clock || (hm.jr & HM_JR_REPLAY);
}

void hm_jr_exit(void) HM_HIDDEN; /* the process exits: end every stream */
void hm_jr_thread_exit(void) HM_HIDDEN; /* the calling thread exits */
void hm_jr_exec_begin(void) HM_HIDDEN; /* about to exec: end every stream */
void hm_jr_exec_failed(void) HM_HIDDEN; /* ... and the exec failed: reopen them */
void hm_jr_fork_prepare(void) HM_HIDDEN;
void hm_jr_fork_parent(void) HM_HIDDEN;
void hm_jr_fork_child(void) HM_HIDDEN;

/* files.c */
/* The file-time shift from HERMETIC_FS_SHIFT; without it (the shim used
 * without the CLI) the process computes it and hands it on. */
void hm_fs_init_shift(void) HM_HIDDEN;
struct statx;
void hm_fs_fix_statx(struct statx *stx) HM_HIDDEN; /* statx results, shifted */

#include "rawsys.h"

/* errno-setting form, like syscall(2). */
static inline long hm_sys_errno(long r)
{
	if (r < 0 && r > -4096) {
		errno = -r;
		return -1;
	}
	return r;
}

static inline int64_t ts_to_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

static inline struct timespec ns_to_ts(int64_t ns)
{
	struct timespec ts;

	ts.tv_sec = ns / NSEC_PER_SEC;
	ts.tv_nsec = ns % NSEC_PER_SEC;
	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += NSEC_PER_SEC;
	}
	return ts;
}

/* Real time in ns from the real clock_gettime (vDSO). */
int64_t hm_real_ns(clockid_t id) HM_HIDDEN;

/* Write a short message to stderr without stdio. */
void hm_warn(const char *a, const char *b, const char *c) HM_HIDDEN;

/* Add "NAME=value" to the HERMETIC_* variables every exec passes on (init). */
void hm_env_add(const char *name, const char *value) HM_HIDDEN;

/* This image's identity from hm.proc, hm.exe, hm.exe_count (init.c). */
void hm_image_set(void) HM_HIDDEN;

/* sched.c: a seeded spin at a start point (--sched chaos), n the thread
 * or fork number. */
enum hm_sched_where { HM_SCHED_THREAD, HM_SCHED_CREATOR, HM_SCHED_FORK_CHILD, HM_SCHED_FORK_PARENT };
void hm_sched_point(enum hm_sched_where where, uint64_t n);
/* The shared start gate, at initialisation when --sched chaos is on; the
 * mode and the run's CPUs before the pinning (HERMETIC_SCHED_CPUS). */
void hm_sched_init(void);
/* --sched serial: this image's main thread takes its own priority, once
 * hm.proc is known (init.c). */
void hm_sched_image(void);
/* wait.c: under --sched serial, a replayed sleep (or timed-out wait) still
 * blocks, on the run's virtual clock until the monotonic time the
 * recording's ended at (record.c): the recorded run let the others run
 * there, so the replay must, for the seed's order to repeat. */
void hm_serial_replay_wait(int64_t deadline) HM_HIDDEN;
/* wait.c: what a process start costs on the run's clock (a new image's
 * constructor sleeps it: docs/virtual-time.md, "A process start takes
 * time"), and the sleep itself. */
#define HM_START_COST_NS (2LL * 1000 * 1000)
/* A start sleep nobody ended in this much real time ends (wait.c). */
#define HM_START_REAL_MAX_NS (2000LL * 1000 * 1000)
#define HM_START_POLL_NS (100LL * 1000 * 1000)
void hm_start_wait(void) HM_HIDDEN;
/* The CPUs sched_getaffinity answers for the calling process under
 * --sched (identity.c): true and *mask set when the run was pinned. */
bool hm_sched_affinity(pid_t pid, size_t size, cpu_set_t *mask);

#endif

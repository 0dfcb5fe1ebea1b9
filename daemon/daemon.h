/* SPDX-License-Identifier: MIT */
/* hermeticd: shared declarations of its parts (cgroup, bpf, runs, server). */
#ifndef HERMETICD_H
#define HERMETICD_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>
#include <time.h>
#include <sys/types.h>
#include <linux/types.h>
#include "hermetic/net.h"
#include "hermetic/trace.h"
#include "hermetic/sched.h"
#include "chaos.h"
#include "hermetic/vclock.h"
#include "proto.h"
#include "audit.h"

/* Limits on what a client can make the daemon hold (docs/reliability.md).
 * Per-user limits apply to every uid but root; root has connection slots
 * of its own, so that root's `hermetic status` always gets in. */
#define HMD_MAX_CONNS 1024
#define HMD_ROOT_RESERVED_CONNS 32 /* of HMD_MAX_CONNS, only uid 0 may use */
#define HMD_MAX_CONNS_PER_USER_DEFAULT 64
#define HMD_MAX_RUNS_PER_USER_DEFAULT 64
#define HMD_MAX_RUNS_PER_CONN 8
#define HMD_STORE_QUEUE_MAX 64 /* journal uploads waiting for the store thread */
#define HMD_STORE_QUEUE_PER_USER 4
#define HMD_MAX_REFUSAL_KINDS 64 /* distinct destinations remembered per run */
#define HMD_ENDED_MAX 256 /* recently ended runs remembered */
#define HMD_ENDED_TTL_NS (600ULL * 1000000000ULL) /* for 10 minutes */
#define HMD_KSTREAM_MAX_DEFAULT (64ULL << 20)
#define HMD_KSTREAM_TOTAL_MAX_DEFAULT (512ULL << 20)
#define HMD_KSTREAM_USER_MAX_DEFAULT (256ULL << 20)
#define HMD_RINGBUF_SIZE_DEFAULT (8U << 20)
#define HMD_STORE_DEFAULT "/var/lib/hermetic/journals"
#define HMD_STORE_MAX_JOURNALS_DEFAULT 100
#define HMD_STORE_MAX_BYTES_DEFAULT (1ULL << 30)
/* Upload buffers one uid may hold at once: four journals of the largest
 * size the store takes (HM_JOURNAL_STORE_MAX, 256 MiB). */
#define HMD_MAX_UPLOAD_PER_USER_DEFAULT (1ULL << 30)

/* Log one line with a syslog priority (service.c: "<N>" prefixes for the
 * journal, "hermeticd: " by hand). */
void hmd_log_at(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define hmd_log(...) hmd_log_at(LOG_INFO, __VA_ARGS__)
#define hmd_warn(...) hmd_log_at(LOG_WARNING, __VA_ARGS__)
#define hmd_err(...) hmd_log_at(LOG_ERR, __VA_ARGS__)
extern bool hmd_verbose;
#define hmd_debug(...)                                                                            \
	do {                                                                                       \
		if (hmd_verbose)                                                                   \
			hmd_log(__VA_ARGS__);                                                      \
	} while (0)

static inline uint64_t hmd_wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* ---- cgroup.c ---- */
struct hmd_cgroup {
	char mount[256]; /* cgroup2 mount point */
	char parent[256]; /* where the subtree is, relative to mount ("" = root) */
	char subtree[512]; /* absolute path of our subtree */
	int subtree_fd;
	bool mounted_by_us;
};

/* Find (or mount under runtime_dir) cgroup v2 and the subtree's path: at
 * the cgroup2 root, or with delegated inside hermeticd's own cgroup (a
 * systemd unit with Delegate=yes). Touches no cgroup. */
int hmd_cgroup_locate(struct hmd_cgroup *cg, const char *name, const char *runtime_dir,
		      bool delegated);
/* Then, with the subtree's lock held (subtree_lock.c): create the subtree,
 * after moving the daemon into the leaf <own cgroup>/daemon when delegated,
 * so that no process lives in an inner cgroup. */
int hmd_cgroup_setup(struct hmd_cgroup *cg);
void hmd_cgroup_teardown(struct hmd_cgroup *cg);
/* Create <subtree>/run-<id>; returns a directory fd, its id and path. */
int hmd_cgroup_create_run(struct hmd_cgroup *cg, uint64_t run_id, int *ret_fd, uint64_t *ret_cgid,
			  char *ret_path, size_t path_size);
int hmd_cgroup_populated(int run_fd); /* 1, 0 or -errno */
int hmd_cgroup_kill(int run_fd);
int hmd_cgroup_remove_run(struct hmd_cgroup *cg, uint64_t run_id);
/* Move pid into the run; only after the caller's ownership checks. */
int hmd_cgroup_move(int run_fd, pid_t pid);
/* Is path (relative to the cgroup2 root, as /proc/<pid>/cgroup shows it)
 * the subtree or inside it? */
bool hmd_cgroup_in_subtree(struct hmd_cgroup *cg, const char *path);

int hmd_cgroup_remove_name(struct hmd_cgroup *cg, const char *name);

/* ---- subtree_lock.c: one daemon per subtree ---- */
#define HMD_SUBTREE_LOCK_DIR "/run/hermetic-subtrees"
/* flock the subtree's lock file (named after the cgroup2 hierarchy and
 * the subtree's path in it, never after --runtime-dir) and write our pid
 * and socket into it; waits a few seconds for a daemon that is stopping.
 * Returns the fd (held for life; path gets the file's path) or -EBUSY
 * with holder saying who has it, or another -errno. */
int hmd_subtree_lock(const struct hmd_cgroup *cg, const char *socket_path, char *path,
		     size_t path_size, char *holder, size_t holder_size);
void hmd_subtree_unlock(int fd, const char *path);
/* How many run-* cgroups the subtree holds. */
int hmd_cgroup_count_runs(struct hmd_cgroup *cg);

/* ---- pin.c: BPF objects pinned in bpffs, per subtree ---- */
struct hmd_pins {
	char mount[256]; /* the bpffs mount */
	char dir[512]; /* <mount>/hermetic/<subtree> */
	bool mounted; /* by us, at <runtime-dir>/bpf */
};
struct bpf_object;
struct bpf_program;
struct bpf_link;
int hmd_pin_setup(struct hmd_pins *p, const char *runtime_dir, const char *subtree);
void hmd_pin_teardown(struct hmd_pins *p);
/* Give every map of obj a pin path in dir: load reuses what is pinned
 * there, and pins what it creates. */
int hmd_pin_maps(struct bpf_object *obj, const char *dir);
void hmd_pin_unpin_maps(struct bpf_object *obj);
/* prog's link pinned in dir, moved to prog where the kernel can; NULL
 * when there is none (or, cgroup_id != 0, it is not on that cgroup). */
struct bpf_link *hmd_pin_link_adopt(const char *dir, struct bpf_program *prog, uint64_t cgroup_id,
				    bool *ret_upgraded);
int hmd_pin_link(const char *dir, struct bpf_program *prog, struct bpf_link *l);
void hmd_pin_link_drop(struct bpf_link *l, bool unpin);

/* ---- detach.c: detaching tracing links off the caller's thread ---- */
#define HMD_DETACH_MAX 32
struct hmd_detacher {
	pthread_t thread;
	bool busy;
};
/* Unpins links[0..n) now and destroys them (then empties the hash map
 * flush_fd with u64 keys, unless -1) in a thread; the array is the caller's. */
int hmd_detach_async(struct hmd_detacher *dt, struct bpf_link **links, int n, int flush_fd);
/* Waits for the last hmd_detach_async to be done: before attaching again. */
void hmd_detach_wait(struct hmd_detacher *dt);

/* ---- peer.c: processes by pidfd ---- */
struct hmd_proc {
	pid_t pid;
	pid_t ppid;
	uid_t uid; /* real uid */
	char cgroup[512]; /* relative to the cgroup2 root */
};
/* Facts about the pidfd's process, checked to be its own (see peer.c):
 * 0, -EBADF (not a pidfd), -ESRCH (it has exited), or -EBADMSG /
 * -ENAMETOOLONG (its /proc/PID/cgroup has no single whole cgroup v2 line
 * that fits: where it runs cannot be told). pid_cache (or NULL) keeps the
 * pidfd's pid number across calls (0 until read); without full, only pid
 * and cgroup are read (ppid 0, uid -1). */
int hmd_pidfd_proc(int pidfd, pid_t *pid_cache, bool full, struct hmd_proc *ret);
/* 0 while the process is not reaped, -ESRCH after. */
int hmd_pidfd_alive(int pidfd);
/* The connected peer of sock as a pidfd (SO_PEERPIDFD, or the checked
 * fallback); -errno when it cannot be had: -ESRCH (gone, or not the
 * connector), -ENOPROTOOPT (the fallback's check cannot be made here; why
 * says what is missing and what to do). */
int hmd_peer_pidfd(int sock, pid_t pid, bool use_peerpidfd, char *why, size_t why_size);

/* ---- bpf.c ---- */
#define HMD_ATTACH_MAX 16
#define HMD_LINKS_MAX 32
struct hmd_attach {
	const char *name; /* "cgroup/connect4", ... */
	bool required;
	bool attached;
	int err; /* positive errno when not attached */
	char why[96];
};

struct hmd_bpf;
/* ringbuf_size: bytes of the event ring buffer (a power of two, >= 4096);
 * ring_wakeup: when a tracer's record wakes us (HM_RING_WAKE_*). */
/* run_level: the depth of run cgroups (the subtree's + 1): a process in a
 * cgroup below its run's counts as the run's. */
/* pin_dir: where maps and links are pinned (pin.c); what is pinned there
 * already is adopted. */
int hmd_bpf_load(struct hmd_bpf **ret, int cgroup_fd, uint32_t run_level, bool lsm_only,
		 uint32_t ringbuf_size, uint32_t ring_wakeup, const char *pin_dir,
		 struct hmd_attach *att, int *ret_n_att);
/* keep: runs stay enrolled after this process; leave the pins. */
void hmd_bpf_unload(struct hmd_bpf *b, bool keep);
/* Remove the policy, allow and counter entries of every cgroup for which
 * keep() says false (after adoption: those of runs that are gone). */
void hmd_bpf_prune(struct hmd_bpf *b, bool (*keep)(void *ctx, uint64_t cgid), void *ctx);
/* The run's policy entry: 0, or -ENOENT when the cgroup is not enrolled. */
int hmd_bpf_get_policy(struct hmd_bpf *b, uint64_t cgid, struct hm_net_policy *ret);
/* The DNS maps (docs/network.md), for the resolver (dns.c). */
struct hmd_bpf_dns_fds {
	int dns, ports, allow;
	bool redirect; /* the cgroup hooks that redirect DNS are attached */
};
int hmd_bpf_dns_fds(struct hmd_bpf *b, struct hmd_bpf_dns_fds *ret);
int hmd_bpf_set_policy(struct hmd_bpf *b, uint64_t cgid, uint32_t flags, const struct hm_allow *allow,
		       uint32_t n_allow);
void hmd_bpf_clear_policy(struct hmd_bpf *b, uint64_t cgid, const struct hm_allow *allow,
			  uint32_t n_allow);
uint64_t hmd_bpf_refused(struct hmd_bpf *b, uint64_t cgid);
uint64_t hmd_bpf_dropped(struct hmd_bpf *b, uint64_t cgid);
int hmd_bpf_open_events(struct hmd_bpf *b, void *ctx);
/* Attach (on) or detach a set of tracing programs: the process lifecycle
 * and the shim's announcement while runs exist, the syscall tracepoints
 * (which put every syscall of the machine on its slow path) only while
 * runs that count syscalls exist (docs/performance.md). */
#define HMD_TRACE_RUNS 0
#define HMD_TRACE_SYSCALLS 1
int hmd_bpf_trace_lazy(struct hmd_bpf *b, int set, bool on);
/* At start-up: detach the links of set a daemon before us left pinned,
 * when no run it left needs them. */
void hmd_bpf_trace_forget(struct hmd_bpf *b, int set);
int hmd_bpf_events_fd(struct hmd_bpf *b);
/* Drain the ring buffer; calls hmd_runs_event() for each event. */
int hmd_bpf_drain(struct hmd_bpf *b);

/* ---- sched.c: the scheduler's count of runnable tasks per clock domain ---- */
struct hmd_sched;
int hmd_sched_load(struct hmd_sched **ret, int min_level, uint64_t subtree_id, const char *pin_dir);
void hmd_sched_unload(struct hmd_sched *s, bool keep);
/* Take over domain dom of cgid from a daemon before us (pinned maps). */
int hmd_sched_adopt(struct hmd_sched *s, uint32_t dom, uint64_t cgid);
void hmd_sched_settle(struct hmd_sched *s);
/* Give cgroup cgid a domain slot (the programs attach with the first). */
int hmd_sched_add(struct hmd_sched *s, uint64_t cgid, uint32_t *ret_dom);
void hmd_sched_remove(struct hmd_sched *s, uint32_t dom, uint64_t cgid);
/* Detach the scheduler programs if no domain is left (the idle timer of
 * the main loop calls it); true when it did. */
/* How long the scheduler programs stay attached after the last clock. */
#define HMD_SCHED_LINGER_NS 10000000000ULL
bool hmd_sched_detach_idle(struct hmd_sched *s);
int hmd_sched_read(struct hmd_sched *s, uint32_t dom, struct hm_sched_dom *ret);
int hmd_sched_tid(struct hmd_sched *s, uint32_t dom, uint32_t nstid, struct hm_sched_tid *ret);
int hmd_sched_quiet_fd(struct hmd_sched *s);

/* ---- clockpage.c: a run's clock page file ---- */
int hmd_clockpage_init(const char *runtime_dir, char *ret_dir, size_t size);
void hmd_clockpage_fini(const char *dir, bool keep);

/* tmpfs.c */
int hmd_tmpfs_ensure(const char *dir, unsigned long long size);
void hmd_tmpfs_release(const char *dir);
/* Make a page file name in dirfd: exclusive, sized, mapped, the header
 * written but for real_start; its O_RDWR descriptor in *ret_fd. */
int hmd_clockpage_make(int dirfd, const char *name, struct hm_vclock **ret, int *ret_fd);
/* Stamp the run's real start in a page a run takes. */
void hmd_clockpage_begin(struct hm_vclock *vc);
/* Map the page of a run adopted after a restart. */
int hmd_clockpage_open(const char *path, struct hm_vclock **ret);
/* A descriptor of the page for the run (O_RDWR, O_CLOEXEC), or -errno. */
int hmd_clockpage_fd(const char *path);
bool hmd_clockpage_broken(const struct hm_vclock *vc);
/* path NULL: unmap only (the run outlives this daemon). */
void hmd_clockpage_destroy(struct hm_vclock *vc, const char *path);

/* ---- quiesce.c: the clock keeper thread ---- */
struct hmd_keeper;
struct hmd_clock_stats {
	uint64_t advances, wakes, idle_nothing, external;
	uint64_t lag_fires; /* waits the lag bound ended */
	int64_t mono;
	bool broken;
};
int hmd_keeper_start(struct hmd_keeper **ret, struct hmd_sched *s, const char *runtime_dir);
/* keep: runs outlive this daemon; leave their pages and domains. */
void hmd_keeper_stop(struct hmd_keeper *k, bool keep);
/* Keep the clock of a run adopted after a restart (its page, its domain). */
int hmd_keeper_adopt(struct hmd_keeper *k, uint64_t run_id, uint64_t cgid, uint32_t dom,
		     const char *path);
/* A clock page made before a run asks (pool.c): its file (name, in the
 * pool's directory), mapping and descriptor, and the keeper's arrays. */
struct hmd_clock_prep {
	struct hm_vclock *vc;
	int fd;
	uint32_t *woken;
	void *seen;
	char tag[40]; /* random: the file's name cannot be guessed */
	char name[96];
};
/* The directory of runs' pages (the pool's is made inside it). */
const char *hmd_keeper_dir(struct hmd_keeper *k);
int hmd_keeper_prepare(int dirfd, struct hmd_clock_prep *ret);
/* A prepared page no run took: unmapped, removed, freed. */
void hmd_keeper_discard(int dirfd, struct hmd_clock_prep *p);
/* Give run_id a clock: the page pool made ahead (taken over, in pool_dirfd),
 * or, with pool NULL, one made now. Its path in ret_path, its descriptor
 * for the run in *ret_fd (the caller's to close). */
int hmd_keeper_add(struct hmd_keeper *k, uint64_t run_id, uint64_t cgid, struct hmd_clock_prep *pool,
		   int pool_dirfd, uint32_t *ret_dom, char *ret_path, size_t path_size, int *ret_fd);
void hmd_keeper_remove(struct hmd_keeper *k, uint32_t dom);
/* Once the daemon has had no run for a while: detach what only runs need. */
void hmd_keeper_idle(struct hmd_keeper *k);
void hmd_keeper_stats(struct hmd_keeper *k, uint32_t dom, struct hmd_clock_stats *ret);

/* ---- pool.c: runs' parts made before a run asks (docs/performance.md) ---- */
#define HMD_POOL_SIZE 2
struct hmd_pool_cg {
	uint64_t id, cgid;
	int fd; /* the cgroup <subtree>/run-<id>, made ahead, empty, no policy */
};
struct hmd_pool {
	struct hmd_pool_cg cg[HMD_POOL_SIZE];
	int n_cg;
	struct hmd_clock_prep clock[HMD_POOL_SIZE];
	int n_clock;
	int dirfd; /* <clock dir>/pool.<subtree>: the pages made ahead; -1 without */
	char dir[768];
	bool failed; /* the last fill failed: none again until the next tick */
	uint64_t taken, missed; /* runs created from the pool, and without */
};
struct hmd;
/* After adoption (so that no id is an adopted run's): the pages' directory,
 * emptied of what a daemon before us left. Never fails: without it pages
 * are made when a run asks, as cgroups are when the pool is empty. */
void hmd_pool_init(struct hmd *d, const char *subtree);
/* Something to make, and the last try did not fail. */
bool hmd_pool_short(struct hmd *d);
/* Make one missing part: called only once no event came for a moment
 * (main.c). */
void hmd_pool_fill(struct hmd *d);
/* A cgroup made ahead, its id reserved then: -ENOENT when there is none. */
int hmd_pool_take_cgroup(struct hmd *d, uint64_t *ret_id, int *ret_fd, uint64_t *ret_cgid);
/* A run cgroup made now under the next free id (one a crashed daemon left is skipped). */
int hmd_run_cgroup_make(struct hmd *d, uint64_t *ret_id, int *ret_fd, uint64_t *ret_cgid,
			char *ret_path, size_t path_size);
/* A clock page made ahead (in d->pool.dirfd): -ENOENT when there is none. */
int hmd_pool_take_clock(struct hmd *d, struct hmd_clock_prep *ret);
/* At a stop: everything made ahead is removed. */
void hmd_pool_drain(struct hmd *d);

/* ---- runs.c ---- */
struct hmd_refusal_kind {
	struct hm_refusal r; /* count aggregated */
};

#define HMD_MAX_PROCS 256 /* processes tracked per run for the audit */


/* The kernel stream of a recorded run: fixed-size records in chunks of
 * about 1 MiB, so that growing never copies what is already kept. */
#define HMD_KCHUNK_RECS 3120
struct hmd_kchunk {
	struct hmd_kchunk *next;
	uint32_t n;
	uint32_t pad;
	struct hm_trace_event rec[HMD_KCHUNK_RECS];
};

/* Snapshots (KSTREAM replies) one run may have built while its processes
 * still run; once the run's cgroup is empty the last one is reused. */
#define HMD_KSTREAM_MAX_SNAPSHOTS 8

struct hmd_kstream {
	struct hmd_kchunk *first, *last;
	uint64_t records;
	uint64_t bytes; /* memory held by the chunks */
	uint64_t dropped; /* events received but not kept (caps, no memory) */
	int snap_fd; /* last sealed memfd handed out, -1 */
	struct hm_kstream_hdr snap_hdr; /* what snap_fd holds */
	uint32_t snapshots;
};

/* connlog.c: the queue of a HM_RUN_CONNLOG run's connection attempts. */
#define HMD_CONNLOG_MAX 16384 /* records queued per run (1 MiB); beyond, counted */
#define HMD_CONNLOG_KEYS 256 /* processes whose lineage key is remembered */
struct hmd_connlog_key {
	uint32_t pid; /* 0: free */
	char key[32];
};
struct hmd_connlog {
	struct hm_conn_rec *rec;
	uint32_t n, cap;
	struct hmd_connlog_key *keys; /* HMD_CONNLOG_KEYS, allocated at the first */
	uint64_t dropped; /* attempts received but not queued */
	uint64_t allowed; /* allowed attempts received (status) */
};

struct hmd_run {
	uint64_t id;
	uint64_t cgid;
	uid_t uid;
	gid_t gid;
	pid_t client_pid;
	int conn_id; /* owning connection, -1 once detached */
	int fd; /* run cgroup directory */
	int events_fd; /* cgroup.events, watched when ending */
	bool ending;
	uint32_t flags;
	char label[64];
	char path[256];
	struct hm_allow *allow;
	uint32_t n_allow;
	uint32_t n_kinds;
	uint64_t events_seen;
	struct hmd_refusal_kind kinds[HMD_MAX_REFUSAL_KINDS];
	struct hm_audit_acc audit;
	struct hm_audit_proc audit_procs[HMD_MAX_PROCS];
	struct hmd_kstream ks; /* HM_RUN_RECORD runs only */
	bool has_clock; /* HM_RUN_CLOCK: a clock page and domain */
	uint32_t clock_dom;
	char clock_path[256];
	bool adopted; /* RUN_ADOPT moved its first process in */
	uint64_t created_ns; /* CLOCK_REALTIME */
	uint64_t client_start; /* the client's start time (/proc stat field 22) */
	int client_pidfd; /* adopted runs: the client, -1 when gone */
	uint64_t restarted_ns; /* CLOCK_REALTIME when this daemon adopted it, 0 */
	uint64_t received; /* kernel events this daemon received for it */
	struct hmd_dns *dns; /* under block: its resolver (dns.c) */
	struct hmd_connlog conns; /* HM_RUN_CONNLOG runs only */
	struct hmd_chaos *chaos; /* --sched chaos (chaos.c), NULL without */
	struct hmd_run *next;
};

struct hmd;
struct hmd_conn;
/* 1 when the connection's process is inside the subtree (a run, or a cgroup
 * below one), 0 when not, -errno when that cannot be told (see peer.c;
 * -ESRCH without a pidfd). ret gets its pid and cgroup only. */
int hmd_conn_in_run(struct hmd *d, struct hmd_conn *c, struct hmd_proc *ret);
struct hmd_run *hmd_runs_find(struct hmd *d, uint64_t id);
struct hmd_run *hmd_runs_find_cgid(struct hmd *d, uint64_t cgid);
/* The run whose cgroup is cgroup (as /proc/PID/cgroup's 0:: line names it)
 * or an ancestor of it; NULL for none. */
struct hmd_run *hmd_runs_find_cgroup(struct hmd *d, const char *cgroup);
int hmd_runs_count_uid(struct hmd *d, uid_t uid);
/* A run for the connection conn_id: its cgroup and clock page made ahead
 * (pool.c) or now. *ret_page_fd: its clock page's descriptor for the
 * client (the caller closes it), -1 without a clock. */
int hmd_runs_create(struct hmd *d, int conn_id, uid_t uid, gid_t gid, pid_t pid,
		    const struct hm_run_create *req, const struct hm_allow *allow,
		    const struct hm_allow_name *names, uint32_t n_names, struct hmd_run **ret,
		    int *ret_page_fd);
/* Begin the end of a run: kill what is left (unless keep), remove when
 * empty. Never frees r: removal happens in hmd_runs_reap(), which the
 * event loop calls after each batch of events (d->reap_due), so callers
 * may go on walking the run list. */
void hmd_runs_end(struct hmd *d, struct hmd_run *r, bool keep);
/* Called when a watched cgroup.events changed, and periodically. */
void hmd_runs_reap(struct hmd *d);
void hmd_runs_event(struct hmd *d, const void *data, size_t size);
/* How many runs count syscalls (HM_RUN_AUDIT_SYSCALLS). */
int hmd_runs_audit_syscalls(const struct hmd *d);
void hmd_runs_audit(struct hmd *d, struct hmd_run *r, struct hm_audit *out);
/* At a stop: runs that are not ending are left running (keep_running:
 * enforced through the pins) for the next daemon; returns how many were
 * left. Without keep_running every run is killed. */
int hmd_runs_shutdown(struct hmd *d, bool keep_running);
/* Before connections close at a stop: their runs are not theirs to end. */
void hmd_runs_detach_all(struct hmd *d);
/* Events of an adopted run the kernel made that this daemon never got
 * (they went with the daemon before it, or the kernel dropped them). */
uint64_t hmd_runs_lost(struct hmd *d, struct hmd_run *r);
/* Adopted runs whose client is gone are ended (timer). */
void hmd_runs_check_orphans(struct hmd *d);

/* ---- dns.c: the resolvers of blocked runs (docs/network.md) ---- */
struct hmd_dns;
/* --dns-upstream ADDR[:PORT] (repeatable, at most 3); without any,
 * hmd_dns_init reads /etc/resolv.conf's nameservers. */
int hmd_dns_add_upstream(const char *spec);
int hmd_dns_init(void);
/* A blocked run's resolver: with names its own sockets, thread and hm_dns
 * entries; without, its hm_dns entry to the shared refuse-all resolver. */
int hmd_dns_start(struct hmd_bpf *b, uint64_t cgid, const struct hm_allow_name *names,
		  uint32_t n_names, struct hmd_dns **ret);
void hmd_dns_stop(struct hmd_dns *r);
/* The shared resolver of runs without names, at daemon exit. */
void hmd_dns_shutdown(void);
/* ---- connlog.c: enroll --connections ---- */
/* Queue one connection attempt of a HM_RUN_CONNLOG run (others: nothing). */
void hmd_connlog_add(struct hmd_run *r, const struct hm_net_event *e);
/* A trace event of such a run: a process's announced lineage key (HM_EV_SHIM)
 * is remembered until it exits (HM_EV_EXIT). */
void hmd_connlog_trace(struct hmd_run *r, const struct hm_trace_event *e);
/* Move up to max queued records, oldest first, into out; *ret_more says
 * whether some are left. */
uint32_t hmd_connlog_take(struct hmd_run *r, struct hm_conn_rec *out, uint32_t max, bool *ret_more);
void hmd_connlog_free(struct hmd_run *r);

/* ---- adopt.c: run records, and runs adopted from a daemon before us ---- */
int hmd_record_init(struct hmd *d, const char *runtime_dir, const char *subtree);
int hmd_record_write(struct hmd *d, const struct hmd_run *r);
void hmd_record_remove(struct hmd *d, uint64_t run_id);
/* Adopt the run cgroups of the subtree whose record and policy survived;
 * kill and remove the others. Returns how many were adopted. */
int hmd_runs_adopt(struct hmd *d);
/* The run's kernel stream as a sealed memfd (drain the ring buffer first).
 * Returns the fd (the run keeps its own reference) or -errno. */
int hmd_runs_kstream(struct hmd *d, struct hmd_run *r, struct hm_kstream_hdr *ret_hdr);
/* Did uid own run id, live or ended within HMD_ENDED_TTL_NS? */
bool hmd_runs_owned_recently(struct hmd *d, uint64_t id, uid_t uid);

/* ---- store.c: the journal store ---- */
struct hmd_store_worker;
struct hmd_store {
	const char *path;
	int fd; /* the store directory, -1 when unavailable */
	char why[160]; /* why it is unavailable */
	uint64_t max_journals; /* per user */
	uint64_t max_bytes; /* per user */
	struct hmd_store_worker *w;
};

/* Create or check the store directory (root-owned, 0711). */
int hmd_store_open(struct hmd_store *s);
void hmd_store_close(struct hmd_store *s);
/* The biggest journal the store takes (HM_JOURNAL_STORE_MAX, or less). */
uint64_t hmd_store_max_journal(struct hmd_store *s);
/* An upload buffer of size bytes: a memfd the daemon makes, sealed
 * against resizing. Returns the fd or -errno. */
int hmd_store_upload_buffer(struct hmd_store *s, uint64_t size);
/* Seal an upload buffer against writing and check that it holds a
 * journal (a zstd frame). Sets *ret_size; 0 or -errno + why. */
int hmd_store_check_upload(struct hmd_store *s, int fd, uint64_t *ret_size, char *why,
			   size_t why_size);
/* Copy a checked journal of uid's run into the store, then apply
 * retention (runs on the store thread). 0 or -errno + why. */
int hmd_store_put(struct hmd_store *s, uid_t uid, const struct hm_journal_store *req, int fd,
		  uint64_t size, const bool *stop, char *why, size_t why_size);

/* ---- store_worker.c: uploads copied off the event loop ---- */
struct hmd_store_job {
	struct hmd_store_job *next;
	uid_t uid;
	struct hm_journal_store req;
	int fd; /* the sealed upload buffer; the worker closes it */
	uint64_t size;
	uint64_t charged; /* against uid's upload bytes, released when done */
	int conn_id;
	uint32_t conn_gen; /* the reply goes only to the connection that asked */
	uint32_t seq;
	int err; /* result: 0 or -errno */
	char why[200];
};
int hmd_store_worker_start(struct hmd_store *s);
void hmd_store_worker_stop(struct hmd_store *s);
/* Queue a job (taken over: the worker frees it). -EBUSY when the queue,
 * or uid's share of it, is full (job untouched). */
int hmd_store_worker_submit(struct hmd_store *s, struct hmd_store_job *job);
/* A finished job, or NULL; the caller frees it. */
struct hmd_store_job *hmd_store_worker_done(struct hmd_store *s);
int hmd_store_worker_fd(struct hmd_store *s); /* readable when jobs are done */
/* uid's journals as a JSON array, newest first from skip, as many as fit in
 * size bytes. Returns the length or -errno. */
ssize_t hmd_store_list(struct hmd_store *s, uid_t uid, uint32_t skip, char *buf, size_t size);
int hmd_store_fetch(struct hmd_store *s, uid_t uid, uint64_t id, int *ret_fd, uint64_t *ret_size);
int hmd_store_rm(struct hmd_store *s, uid_t uid, uint64_t id, struct hm_journal_count *ret);
int hmd_store_gc(struct hmd_store *s, uid_t uid, uint64_t older_than_s,
		 struct hm_journal_count *ret);

/* ---- service.c: systemd ---- */
struct hmd;
/* The listening socket: systemd's (socket activation) or our own at path. */
int hmd_service_listen(struct hmd *d, const char *path);
int hmd_service_probe_start(struct hmd *d);
int hmd_service_probe_done(struct hmd *d);
void hmd_service_status(struct hmd *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void hmd_service_update(struct hmd *d);
int hmd_service_watchdog_start(struct hmd *d);
void hmd_service_watchdog(struct hmd *d);
void hmd_service_stopping(struct hmd *d, const char *why);

/* ---- server.c: transport, connections, dispatch ---- */
struct hmd_conn {
	int fd; /* -1 when the slot is free */
	uid_t uid;
	gid_t gid;
	pid_t pid; /* as SO_PEERCRED said at connect time: for messages only */
	int pidfd; /* the connecting process; -1 when it could not be identified */
	pid_t pidfd_pid; /* pidfd's pid number, read once (peer.c); 0 until then */
	char peer_why[256]; /* pidfd -1 because the check cannot be made here: why */
	int n_runs;
	uint32_t gen; /* changes whenever the slot is reused */
	int upload_fd; /* JOURNAL_UPLOAD's memfd (the daemon's own), -1 */
	uint64_t upload_size; /* its size, charged to uid (upload_quota.c) */
	bool adopt_only; /* over its uid's limit: may ask RUN_ADOPT, RUN_CLOCK, nothing else */
};
struct hmd_req;
int hmd_server_listen(struct hmd *d);
void hmd_server_accept(struct hmd *d);
void hmd_server_handle(struct hmd *d, int conn_id);
void hmd_server_store_done(struct hmd *d);
void hmd_server_close_all(struct hmd *d);
int hmd_reply(struct hmd_conn *c, uint16_t type, uint32_t seq, const void *p, uint32_t len, int fd);
int hmd_reply_fds(struct hmd_conn *c, uint16_t type, uint32_t seq, const void *p, uint32_t len,
		  const int *fds, int nfds);
int hmd_reply_error(struct hmd_conn *c, uint32_t seq, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- serve_run.c, serve_journal.c: one handler per request type ---- */
void hmd_serve_run(struct hmd *d, int conn_id, const struct hmd_req *req);
void hmd_serve_journal(struct hmd *d, int conn_id, const struct hmd_req *req);

/* ---- the daemon ---- */

struct hmd {
	int epfd;
	int listen_fd;
	const char *socket_path;
	bool activated; /* the socket came from systemd: not ours to remove */
	char activated_path[108];
	int probe_fd; /* readiness probe connection, -1 once answered */
	bool ready;
	int status_runs; /* n_runs when STATUS= was last sent */
	int watchdog_fd; /* WatchdogSec= timer, -1 without */
	struct hmd_cgroup cg;
	struct hmd_pins pins;
	char records[512]; /* <runtime-dir>/<subtree>.runs: one record per run */
	bool records_mounted; /* a tmpfs of ours is on it (tmpfs.c) */
	struct hmd_bpf *bpf;
	struct hmd_sched *sched; /* NULL where the kernel lacks what it needs */
	struct hmd_keeper *keeper;
	char sched_why[128]; /* why there is no keeper */
	struct hmd_attach attach[HMD_ATTACH_MAX];
	int n_attach;
	struct hmd_run *runs;
	int n_runs;
	uint64_t next_run_id;
	struct hmd_pool pool;
	struct hmd_conn conns[HMD_MAX_CONNS];
	int spare_fd; /* released to accept-and-refuse when out of descriptors */
	const char *socket_group; /* NULL: root only */
	gid_t socket_gid;
	bool use_peerpidfd; /* false: testing the pre-6.5 fallback */
	uint32_t max_conns_per_user;
	uint32_t max_runs_per_user;
	bool reap_due; /* a run began ending: reap after this batch */
	uint64_t started_ns;
	uint64_t idle_since_ns; /* when the last run went away */
	uint64_t sys_idle_since_ns; /* when the last run with HM_RUN_AUDIT_SYSCALLS did */
	/* Kernel streams of recorded runs: per-run and global memory caps. */
	uint64_t kstream_max;
	uint64_t kstream_total_max;
	uint64_t kstream_user_max; /* per uid (not root) */
	uint64_t kstream_bytes; /* held by all runs */
	/* Owners of recently ended runs, for JOURNAL_STORE after RUN_END. */
	struct hmd_ended {
		uint64_t id;
		uid_t uid;
		uint64_t ended_ns;
	} ended[HMD_ENDED_MAX];
	uint32_t ended_next;
	struct hmd_store store;
	/* Upload buffers held per uid (upload_quota.c): one slot per uid
	 * with any; there are never more buffers than connections plus jobs. */
	struct hmd_upload_use {
		uid_t uid;
		uint64_t bytes; /* 0: a free slot */
	} upload_use[HMD_MAX_CONNS + HMD_STORE_QUEUE_MAX + 1];
	uint64_t max_upload_per_user;
};

/* ---- upload_quota.c: upload buffer bytes per uid ---- */
/* Charge size bytes to uid, released bytes of its being freed at the same
 * time (a buffer replaced); -EDQUOT past d->max_upload_per_user. */
int hmd_upload_charge(struct hmd *d, uid_t uid, uint64_t size, uint64_t released);
void hmd_upload_release(struct hmd *d, uid_t uid, uint64_t size);
uint64_t hmd_upload_held(struct hmd *d, uid_t uid);

/* epoll data tags: high 32 bits say what, low 32 bits which. */
#define HMD_EP_LISTEN 1ULL
#define HMD_EP_CONN 2ULL
#define HMD_EP_EVENTS 3ULL
#define HMD_EP_SIGNAL 4ULL
#define HMD_EP_RUN 5ULL
#define HMD_EP_TIMER 6ULL
#define HMD_EP_PROBE 7ULL
#define HMD_EP_WATCHDOG 8ULL
#define HMD_EP_STORE 9ULL
#define HMD_EP(kind, idx) (((kind) << 32) | (uint32_t)(idx))

#endif

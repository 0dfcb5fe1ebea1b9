// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * How many tasks of each clock domain (a run's cgroup) are runnable.
 *
 * The run's virtual clock may move only when every task of the run is
 * blocked (docs/virtual-time.md). The scheduler knows; these programs keep,
 * per domain, the number of its tasks that are runnable (nrun), and put a
 * record on a ring buffer each time it falls to 0, for the daemon's clock
 * keeper (daemon/quiesce.c).
 *
 * Per task, one u64 in an array indexed by tid (no locks: these programs run
 * inside the scheduler with interrupts off, where a hash map's bucket lock
 * or task storage could refuse us):
 *   bits 63..32  low 32 bits of the cgroup id the domain was resolved for
 *   bits 31..21  the domain's incarnation (struct hm_sched_dom.gen) then
 *   bit  20      RESOLVED: bits 12..0 are valid for that cgroup
 *   bit  18      SUPER: blocked in a call the supervisor answers (counted
 *                in nrun and in nsuper)
 *   bit  17      RACING: woken while we still counted it running
 *   bit  16      RUNNING: counted in its domain's nrun
 *   bits 12..0   domain slot + 1 (0: in no domain)
 * A task outside the daemon's subtree has 0 (and leaves every program early:
 * entry_of()); one in the subtree but in no domain caches that (RESOLVED).
 *
 * Transitions:
 *   sched_switch, prev blocks (interruptible sleep, stopped, traced)
 *                 RUNNING -> blocked, unless RACING: a wake-up that raced
 *                 with the sleep already fired, so it is not blocked at all.
 *                 Uninterruptible sleeps (disk, vfork) count as running:
 *                 they end without anyone in the run doing anything.
 *   sched_switch, prev dead          the entry is cleared
 *   sched_switch, prev preempted     stays RUNNING
 *   sched_switch, next               RUNNING (a wake-up we never saw)
 *   sched_waking(p)                  blocked -> RUNNING, in the waker's
 *                 context, before the waker can block: nrun never passes
 *                 through 0 between a wake-up and its wakee running. If p is
 *                 still RUNNING (it set its sleeping state but has not been
 *                 switched out yet), RACING.
 *   sched_wakeup(p)                  clears RACING; blocked -> RUNNING
 *   sched_wakeup_new(p)              RUNNING (the parent is running)
 * A task first seen (adopted into the run while blocked) counts as blocked
 * until it wakes, or as running when seen running.
 *
 * An entry can outlive what it counted: a dying task's last switch comes
 * after its cgroup emptied, so after its run's end, when the slot may be a
 * new run's; a thread that execs takes its leader's tid (de_thread), and
 * its old tid's entry would stay RUNNING until some task of the machine
 * reuses the number (pid_max is 32768 on a small machine). Counted in the
 * slot's new run, either makes that run look idle while a task of it runs
 * (its clock jumped to a 10 s alarm within 60 ms). So an entry names the
 * slot's incarnation: one of another counts nothing (the task is as one
 * first seen), and an exec moves the thread's entry to its new tid.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "hermetic/sched.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* cgroups of domains are at this level or deeper (set before load); their
 * ancestor at min_level - 1 is the daemon's subtree, whose cgroup id is
 * subtree_id (0: unknown, every task takes the full path). */
const volatile int min_level = 1;
const volatile __u64 subtree_id = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, HM_SCHED_DOMAINS);
	__type(key, __u32);
	__type(value, struct hm_sched_dom);
} hm_sched_doms SEC(".maps");

/* cgroup id -> domain slot */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_SCHED_DOMAINS);
	__type(key, __u64);
	__type(value, __u32);
} hm_sched_cg SEC(".maps");

/* per tid, see above; max_entries = pid_max, set by the daemon */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 32768);
	__type(key, __u32);
	__type(value, __u64);
} hm_sched_task SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, HM_SCHED_TIDS);
	__type(key, struct hm_sched_tidkey);
	__type(value, struct hm_sched_tid);
} hm_sched_tids SEC(".maps");

/* Work queued by tasks of runs, by the work item's address (struct
 * hm_sched_work). LRU: an entry whose work never ran (cancelled) goes in
 * time. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, HM_SCHED_WORKS);
	__type(key, __u64);
	__type(value, struct hm_sched_work);
} hm_sched_works SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, HM_SCHED_RINGBUF);
} hm_sched_quiet SEC(".maps");

#define T_DOM_MASK 0x1fffULL
#define T_RUNNING (1ULL << 16)
#define T_RACING (1ULL << 17)
#define T_SUPER (1ULL << 18)
#define T_RESOLVED (1ULL << 20)
#define T_GEN_SHIFT 21
#define T_GEN(e) (((e) >> T_GEN_SHIFT) & HM_SCHED_GEN_MAX)

/* prev_state bits (include/linux/sched.h; stable for a decade) */
#define S_INTERRUPTIBLE 0x0001
#define S_UNINTERRUPTIBLE 0x0002
#define S_STOPPED 0x0004
#define S_TRACED 0x0008
#define S_DEAD 0x0080

enum op { OP_BLOCK, OP_SUPER, OP_PREEMPT, OP_DEAD, OP_IN, OP_WAKING, OP_WAKEUP, OP_NEW };

/* The domain of the task's cgroup or of one of its nearest ancestors, or -1. */
/* The domain of cgroup cg, or -2 to look at its parent (*cg moves), or -1.
 * (No loops here: kernels before 6.4 refuse a loop whose back-edge is a
 * fall-through, "back-edge from insn", which clang emits for these; the
 * callers repeat these steps in straight lines instead.) */
static __always_inline int dom_step(struct cgroup **cg)
{
	__u64 id;
	__u32 *dom;

	if (!*cg || BPF_CORE_READ(*cg, level) < min_level)
		return -1;
	id = BPF_CORE_READ(*cg, kn, id);
	dom = bpf_map_lookup_elem(&hm_sched_cg, &id);
	if (dom)
		return *dom < HM_SCHED_DOMAINS ? (int)*dom : -1;
	/* self is the first member of struct cgroup */
	*cg = (struct cgroup *)BPF_CORE_READ(*cg, self.parent);
	return -2;
}

/* The domain of the task's cgroup or of one of its 3 nearest ancestors, or -1. */
static __always_inline int resolve_dom(struct cgroup *cg)
{
	int d;

	if ((d = dom_step(&cg)) != -2 || (d = dom_step(&cg)) != -2 ||
	    (d = dom_step(&cg)) != -2 || (d = dom_step(&cg)) != -2)
		return d;
	return -1;
}

/* A kernfs node's parent: "__parent" since 6.15, "parent" before. */
struct kernfs_node___old {
	struct kernfs_node *parent;
} __attribute__((preserve_access_index));

static __always_inline struct kernfs_node *kn_parent(struct kernfs_node *kn)
{
	if (bpf_core_field_exists(kn->__parent))
		return kn->__parent;
	return ((struct kernfs_node___old *)kn)->parent;
}

/* Up one level, while levels remain (straight-line code: see dom_step). */
#define KN_UP(kn, up)                          \
	do {                                   \
		if ((up) > 0) {                \
			(kn) = kn_parent(kn);  \
			(up)--;                \
		}                              \
	} while (0)

/*
 * The early exit (docs/performance.md): these programs run on every context
 * switch and wake-up of the machine, so a task outside every run must cost
 * no helper call and no map lookup. A task can be counted in a domain only
 * if its cgroup is in the daemon's subtree (every run's cgroup is) or its
 * entry is not 0 (it was counted, or seen, in a run: a task moved out of a
 * run by root is uncounted once, on its next switch, and its entry goes to
 * 0). Plain loads through the BTF pointers the tracepoint hands us (no
 * bpf_probe_read: a fault reads 0, which is "outside").
 */
static __always_inline bool in_subtree(struct task_struct *t)
{
	struct cgroup *cg = t->cgroups->dfl_cgrp;
	struct kernfs_node *kn;
	int up;

	if (!subtree_id)
		return true;
	if (!cg)
		return false;
	/* levels between the task's cgroup and the subtree's */
	up = cg->level - (min_level - 1);
	if (up <= 0)
		return false; /* above or beside: most of the machine leaves here */
	if (up > 8)
		return true; /* nested deeper than we walk: the full path decides */
	kn = cg->kn;
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	KN_UP(kn, up);
	return kn && kn->id == subtree_id;
}

/* The task's entry if the task may be in a run, else NULL. */
static __always_inline __u64 *entry_of(struct task_struct *t)
{
	__u32 tid = t->pid;
	__u64 *e;

	if (!tid || !(e = bpf_map_lookup_elem(&hm_sched_task, &tid)))
		return NULL;
	if (!*(volatile __u64 *)e && !in_subtree(t))
		return NULL;
	return e;
}

static __always_inline __u32 ns_tid(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level;
	struct upid up = {};

	if (!p)
		return 0;
	level = BPF_CORE_READ(p, level) & 31;
	bpf_probe_read_kernel(&up, sizeof(up),
			      (void *)p + bpf_core_field_offset(struct pid, numbers) +
				      level * sizeof(struct upid));
	return up.nr;
}

static __always_inline void remember_tid(struct task_struct *t, __u32 dom)
{
	struct hm_sched_tidkey k = { .dom = dom, .nstid = ns_tid(t) };
	struct hm_sched_tid v = { .tid = BPF_CORE_READ(t, pid), .tgid = BPF_CORE_READ(t, tgid) };

	bpf_map_update_elem(&hm_sched_tids, &k, &v, BPF_ANY);
}

static __always_inline void forget_tid(struct task_struct *t, __u32 dom)
{
	struct hm_sched_tidkey k = { .dom = dom, .nstid = ns_tid(t) };

	bpf_map_delete_elem(&hm_sched_tids, &k);
}

static __always_inline void quiet(struct hm_sched_dom *d, __u32 k)
{
	struct hm_sched_quiet *q = bpf_ringbuf_reserve(&hm_sched_quiet, sizeof(*q), 0);

	if (!q) {
		__sync_fetch_and_add(&d->quiet_seq, 1);
		__sync_fetch_and_add(&d->lost, 1);
		return;
	}
	q->dom = k;
	q->pad = 0;
	q->seq = __sync_fetch_and_add(&d->quiet_seq, 1) + 1;
	bpf_ringbuf_submit(q, 0);
}

/* nrun += delta, nsuper += dsuper: a record when every task counted is
 * blocked on the supervisor, or none is runnable at all (nrun - nsuper fell
 * to 0). The two counters move one after the other: the keeper re-reads
 * both and checks the page before it acts, and ticks every 50 ms. */
static __always_inline void add(struct hm_sched_dom *d, int dom, __s64 delta, __s64 dsuper)
{
	__u32 k = dom;
	__s64 before, sup;

	if (!d || (!delta && !dsuper))
		return;
	sup = dsuper ? __sync_fetch_and_add(&d->nsuper, dsuper) + dsuper : d->nsuper;
	before = delta ? __sync_fetch_and_add(&d->nrun, delta) : d->nrun;
	if (delta < 0 && before <= 0)
		__sync_fetch_and_add(&d->anomalies, 1);
	if (delta - dsuper >= 0 || before + delta != sup)
		return;
	/* nrun just went to 0 (or to the tasks the supervisor holds) */
	quiet(d, k);
}

/* One attempt to move the task's entry e for op: true when done (or
 * nothing to do), false when another CPU changed e meanwhile. */
/* Slot dom's counters, or NULL (dom < 0). */
static __always_inline struct hm_sched_dom *dom_get(int dom)
{
	__u32 k = dom;

	return dom < 0 ? NULL : bpf_map_lookup_elem(&hm_sched_doms, &k);
}

/* The domain entry e names, if it is of the slot's current incarnation (see
 * the top): else NULL, and e counts nothing. */
static __always_inline struct hm_sched_dom *dom_of_entry(__u64 e, int dom)
{
	struct hm_sched_dom *d = dom_get(dom);

	return d && d->cgid && T_GEN(e) == (d->gen & HM_SCHED_GEN_MAX) ? d : NULL;
}

static __always_inline bool try_update(struct task_struct *t, enum op op, struct cgroup *cg,
				       __u64 cg32, __u64 *e)
{
	__u64 old = *(volatile __u64 *)e, new, was;
	int old_dom = (int)(old & T_DOM_MASK) - 1, dom, resolved_now = 0;
	struct hm_sched_dom *od = dom_of_entry(old, old_dom), *nd;

	/* was: what old counts (nothing, if of another incarnation) */
	was = od ? old : 0;
	if (!od)
		old_dom = -1;
	if ((old & T_RESOLVED) && (old & 0xffffffff00000000ULL) == cg32 &&
	    (od || !(old & T_DOM_MASK))) {
		dom = old_dom; /* (or cached: in no domain) */
		nd = od;
	} else {
		dom = resolve_dom(cg);
		nd = dom_get(dom);
		if (!nd)
			dom = -1;
		resolved_now = dom >= 0;
	}
	if (dom < 0 && !(was & T_RUNNING)) {
		/* Not ours: cache that, unless already cached; a task outside
		 * the subtree gets 0, so that it takes the early exit. */
		new = in_subtree(t) ? cg32 | T_RESOLVED : 0;
		return old == new || __sync_val_compare_and_swap(e, old, new) == old;
	}
	new = cg32 | T_RESOLVED | (__u64)(dom + 1) |
	      (nd ? (__u64)(nd->gen & HM_SCHED_GEN_MAX) << T_GEN_SHIFT : 0);
	/* RUNNING of the old entry counts in old_dom; of the new, in dom. */
	switch (op) {
	case OP_BLOCK:
		if ((was & T_RACING) && old_dom == dom)
			new |= T_RUNNING;
		break;
	case OP_SUPER:
		new |= T_RUNNING | T_SUPER;
		break;
	case OP_DEAD:
		new = 0;
		break;
	case OP_PREEMPT:
	case OP_IN:
	case OP_NEW:
	case OP_WAKEUP:
		new |= T_RUNNING;
		break;
	case OP_WAKING:
		new |= T_RUNNING;
		if ((was & T_RUNNING) && old_dom == dom)
			new |= T_RACING;
		break;
	}
	if (dom < 0)
		new &= ~(T_RUNNING | T_RACING | T_SUPER);
	if (__sync_val_compare_and_swap(e, old, new) != old)
		return false;
	if (old_dom == dom) {
		add(nd, dom, (__s64)!!(new & T_RUNNING) - (__s64)!!(was & T_RUNNING),
		    (__s64)!!(new & T_SUPER) - (__s64)!!(was & T_SUPER));
	} else {
		/* moved between domains (or into one): count the new first */
		add(nd, dom, !!(new & T_RUNNING), !!(new & T_SUPER));
		add(od, old_dom, -(__s64)!!(was & T_RUNNING), -(__s64)!!(was & T_SUPER));
	}
	if (op == OP_DEAD && dom >= 0)
		forget_tid(t, dom);
	else if (resolved_now && dom >= 0)
		remember_tid(t, dom);
	return true;
}

/* e: the task's entry, from entry_of(). */
static __always_inline void update(struct task_struct *t, __u64 *e, enum op op)
{
	struct cgroup *cg = t->cgroups->dfl_cgrp;
	__u64 cg32 = (__u64)(__u32)cg->kn->id << 32;

	/* Another CPU may change the entry between our read and our swap: try
	 * again, a few times (it is the same task: a waker and its wakee). */
	if (!try_update(t, op, cg, cg32, e) && !try_update(t, op, cg, cg32, e) &&
	    !try_update(t, op, cg, cg32, e))
		try_update(t, op, cg, cg32, e);
}

/* A task that blocks in one of these syscalls is waiting for the supervisor
 * in enroll (docs/static.md), which answers it (getrandom of a supervised
 * process) or sets the process up (an exec, and its exec stop, traced):
 * work on the run's behalf outside it, so the task counts as running. These
 * calls block for no other reason (getrandom only before the kernel's pool
 * is ready, at boot). x86_64 numbers, the only ABI the supervisor serves.
 * 1: that, and running; 2: a timed wait the supervisor's filter hands over
 * (made from code below 4 GiB, supervise.c) by a process the supervisor
 * serves (its timer slack, HM_SCHED_SUPER_SLACK), running too (SUPER)
 * until the supervisor has published its deadline in the run's clock page,
 * which the keeper checks (daemon/quiesce.c); 0: neither (another
 * process's real wait blocks as any). */
#define FUTEX_CMD(op) ((op) & ~0x180L) /* without PRIVATE, CLOCK_REALTIME */
static __always_inline int waits_for_supervisor(struct task_struct *t)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr;

	if (!regs)
		return 0;
	nr = BPF_CORE_READ(regs, orig_ax);
	if (nr == 318 /* getrandom */ || nr == 59 /* execve */ || nr == 322 /* execveat */)
		return 1;
	if ((BPF_CORE_READ(regs, ip) >> 32) || BPF_CORE_READ(t, timer_slack_ns) != HM_SCHED_SUPER_SLACK)
		return 0;
	if (nr == 35 /* nanosleep */ || nr == 230 /* clock_nanosleep */)
		return 2;
	if (nr == 232 /* epoll_wait */ || nr == 281 /* epoll_pwait */)
		return (int)BPF_CORE_READ(regs, r10) > 0 ? 2 : 0;
	/* the poll family as the filter hands it over: poll and ppoll with a
	 * timeout, select and pselect6 of no descriptors with one */
	if (nr == 7 /* poll */)
		return (int)BPF_CORE_READ(regs, dx) > 0 ? 2 : 0;
	if (nr == 271 /* ppoll */)
		return BPF_CORE_READ(regs, dx) ? 2 : 0;
	if (nr == 23 /* select */ || nr == 270 /* pselect6 */)
		return !(int)BPF_CORE_READ(regs, di) && BPF_CORE_READ(regs, r8) ? 2 : 0;
	if (nr == 202 /* futex */) {
		long op = FUTEX_CMD(BPF_CORE_READ(regs, si));

		return (op == 0 || op == 9) && BPF_CORE_READ(regs, r10) ? 2 : 0;
	}
	return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(hm_sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	enum op op = OP_PREEMPT;
	__u64 *e;
	int sv;

	/* Both sides, each with its early exit first: a switch between two
	 * tasks outside every run costs two of them and nothing else. */
	if ((e = entry_of(prev))) {
		if (prev_state & S_DEAD)
			op = OP_DEAD;
		/* A job-control stop (SIGSTOP, SIGTSTP: not a ptrace stop) waits
		 * for a SIGCONT, not for the supervisor, whatever call it
		 * stopped in: its registers still name the timed wait a
		 * signal interrupted, to be restarted, and counted as the
		 * supervisor's it held the run's clock until the lag bound
		 * (os/exec's TestWaitid stops a sleeping child for 100 ms:
		 * a second). */
		else if (!preempt && (prev_state & S_STOPPED) && !(prev_state & S_TRACED))
			op = OP_BLOCK;
		else if (!preempt && (prev_state & (S_INTERRUPTIBLE | S_STOPPED | S_TRACED)) &&
			 !(prev_state & S_UNINTERRUPTIBLE))
			op = (sv = waits_for_supervisor(prev)) == 2 ? OP_SUPER
			     : sv			      ? OP_PREEMPT
							      : OP_BLOCK;
		update(prev, e, op);
	}
	if ((e = entry_of(next)))
		update(next, e, OP_IN);
	return 0;
}

SEC("tp_btf/sched_waking")
int BPF_PROG(hm_sched_waking, struct task_struct *p)
{
	__u64 *e = entry_of(p);

	if (e)
		update(p, e, OP_WAKING);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(hm_sched_wakeup, struct task_struct *p)
{
	__u64 *e = entry_of(p);

	/* Most wake-ups were counted at sched_waking: only clear RACING. */
	if (!e || (*e & (T_RACING | T_RUNNING)) == T_RUNNING)
		return 0;
	update(p, e, OP_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(hm_sched_wakeup_new, struct task_struct *p)
{
	__u64 *e = entry_of(p);

	if (e)
		update(p, e, OP_NEW);
	return 0;
}

/* Swap *e for 0; its old value (a few tries against concurrent updates,
 * which only ever store what they read plus our change). */
static __always_inline __u64 take_entry(__u64 *e)
{
	__u64 v;

	for (int i = 0; i < 4; i++) {
		v = *(volatile __u64 *)e;
		if (!v || __sync_val_compare_and_swap(e, v, 0) == v)
			return v;
	}
	return 0;
}

/* Uncount what entry v counted (nothing if of another incarnation). */
static __always_inline void uncount(__u64 v)
{
	int dom = (int)(v & T_DOM_MASK) - 1;

	add(dom_of_entry(v, dom), dom, -(__s64)!!(v & T_RUNNING), -(__s64)!!(v & T_SUPER));
}

/*
 * A thread that execs takes its leader's tid (de_thread): its entry is at
 * old_pid. Both entries are taken and uncounted, and the thread, running
 * here, is counted afresh at its new tid; the old leader, dying, counts
 * nothing more (its last switch may come before this, under its own tid,
 * or after, under old_pid: either finds an entry of 0).
 */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(hm_sched_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 otid = old_pid, tid = p->pid;
	__u64 *oe, *e;

	if (otid == tid || !(oe = bpf_map_lookup_elem(&hm_sched_task, &otid)) ||
	    !(e = bpf_map_lookup_elem(&hm_sched_task, &tid)))
		return 0;
	if (!*(volatile __u64 *)oe && !in_subtree(p))
		return 0;
	uncount(take_entry(oe));
	uncount(take_entry(e));
	update(p, e, OP_IN);
	return 0;
}

/*
 * Kernel work in flight for a run. A task of the run writes to a PTY: the
 * kernel hands the bytes to the other side in a worker (flush_to_ldisc on
 * a workqueue), outside the run, and the writer may block before the
 * worker wakes the reader. For that moment no task of the run is runnable
 * while a wake-up of one is on its way: a clock that moved then jumped past
 * data in flight (a select(..., 120) on the master took its 120 s in 1 wait
 * in a few hundred; docs/virtual-time.md). So work a task of a run queued
 * counts in its domain's nwork from the queueing, in the task's context,
 * until the worker has run it to its end; a wake-up it made is counted in
 * nrun before that end (sched_waking runs in the worker). The keeper takes
 * a run with nwork above 0 for busy (daemon/quiesce.c), and the end of the
 * last such work with nothing runnable is a quiet moment like any other.
 * An item queued again while it runs ends twice: the count per item pairs
 * them. Work queued from an interrupt while a task of a run was current is
 * counted too, and ends as soon: a short hold, never a wrong jump.
 */
SEC("tp_btf/workqueue_queue_work")
int BPF_PROG(hm_sched_work_queue, int req_cpu, struct pool_workqueue *pwq, struct work_struct *work)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct hm_sched_work init = {}, *w;
	struct hm_sched_dom *d;
	__u64 *e = entry_of(t), key = (__u64)work, v;
	int dom;

	if (!e)
		return 0;
	v = *(volatile __u64 *)e;
	dom = (int)(v & T_DOM_MASK) - 1;
	if (!(v & T_RESOLVED) || !(d = dom_of_entry(v, dom)))
		return 0;
	if (!(w = bpf_map_lookup_elem(&hm_sched_works, &key))) {
		init.dom = dom;
		init.gen = d->gen;
		(void)bpf_map_update_elem(&hm_sched_works, &key, &init, BPF_NOEXIST);
		if (!(w = bpf_map_lookup_elem(&hm_sched_works, &key)))
			return 0;
	}
	if (w->dom != (__u32)dom || w->gen != d->gen) {
		/* last counted for another run: take it over only once that
		 * count is spent (an item two runs share is not held) */
		if (w->n > 0)
			return 0;
		w->dom = dom;
		w->gen = d->gen;
	}
	__sync_fetch_and_add(&w->n, 1);
	d->work_ns = bpf_ktime_get_ns();
	__sync_fetch_and_add(&d->nwork, 1);
	return 0;
}

SEC("tp_btf/workqueue_execute_end")
int BPF_PROG(hm_sched_work_end, struct work_struct *work, work_func_t function)
{
	__u64 key = (__u64)work;
	struct hm_sched_work *w = bpf_map_lookup_elem(&hm_sched_works, &key);
	struct hm_sched_dom *d;

	if (!w || w->n <= 0)
		return 0;
	if (__sync_fetch_and_add(&w->n, -1) <= 0) {
		__sync_fetch_and_add(&w->n, 1); /* another CPU took the last one */
		return 0;
	}
	if (!(d = dom_get((int)(w->dom & T_DOM_MASK))) || !d->cgid || d->gen != w->gen)
		return 0;
	__sync_fetch_and_add(&d->nwork, -1);
	/* (no fetch on 32 bits: read again; two CPUs may both see 0 and both
	 * report, which the keeper takes as one) */
	if (*(volatile __s32 *)&d->nwork <= 0 && d->nrun <= d->nsuper)
		quiet(d, w->dom & T_DOM_MASK);
	return 0;
}

// SPDX-License-Identifier: (MIT OR GPL-2.0)
/*
 * The kernel's view of enrolled runs: process lifecycle, time and entropy
 * syscalls that reached the kernel (the shim answers most of them without
 * a syscall, so every one seen here either bypassed the shim or came from a
 * process without it), and reads of /dev/urandom and /dev/random.
 *
 * Every program first asks whether the current task's cgroup lies in the
 * daemon's subtree (one helper call, no map: outside(), below), and only
 * then looks the run up in hm_policy (shared with net.bpf.c) or in its own
 * maps: processes that are not enrolled leave at once, having touched no
 * map (docs/performance.md). The daemon attaches these programs only while
 * runs exist, so a machine where nothing is enrolled pays nothing.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "net_policy.bpf.h"
#include "hermetic/trace.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/* Syscall arguments kept from enter to exit, per thread. */
struct pending {
	__u64 buf;
	__u64 arg0;
	__u64 arg1;
	__u32 nr;
	__u32 pad;
};

struct {
	/* LRU: a thread that dies inside a syscall leaves its entry behind. */
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct pending);
} hm_pending SEC(".maps");

/* (tgid << 32 | fd) of open /dev/urandom and /dev/random descriptors. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u64);
	__type(value, __u8);
} hm_random_fds SEC(".maps");

/* The cgroup id of the daemon's subtree, the ancestor of every run's cgroup
 * at level hm_run_level - 1 (set before load; 0: unknown). */
const volatile __u64 hm_subtree_id = 0;

/* How a record wakes the daemon (HM_RING_WAKE_*; set before load). */
const volatile __u32 hm_ring_wakeup = HM_RING_WAKE_HALF;

/* The early exit: the current task is in no run. A run's cgroup is always
 * below the subtree, and a process cannot leave its run's cgroup for one
 * outside the subtree without root moving it, after which it is no longer
 * the run's (hm_run_cgid() would not find it either). */
static __always_inline bool outside(void)
{
	if (!hm_subtree_id || !hm_run_level)
		return false;
	return bpf_get_current_ancestor_cgroup_id(hm_run_level - 1) != hm_subtree_id;
}

static __always_inline int enrolled(__u64 *ret_cgid)
{
	__u64 cgid = hm_run_cgid();

	*ret_cgid = cgid;
	return bpf_map_lookup_elem(&hm_policy, &cgid) != NULL;
}

static __always_inline struct hm_trace_event *event(__u64 cgid, __u32 kind)
{
	struct hm_trace_event *e = bpf_ringbuf_reserve(&hm_events, sizeof(*e), 0);
	__u64 id = bpf_get_current_pid_tgid();

	if (!e) {
		hm_count_drop(cgid);
		return NULL;
	}
	hm_count_emit(cgid);
	e->kind = kind;
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->cgroup_id = cgid;
	e->time_ns = bpf_ktime_get_ns();
	e->aux = 0;
	e->ret = 0;
	e->arg0 = 0;
	e->arg1 = 0;
	e->flags = 0;
	e->len = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	return e;
}

/* Put a record on the ring. Each process start of a run makes four (fork,
 * exec, the shim's announcement, exit), and the kernel's adaptive wake-up
 * sends the daemon a self-IPI for any of them that finds it idle: in a
 * virtual machine an exit to the hypervisor each, ~8% of a short process's
 * CPU. Nothing needs them at once: hermeticd drains the ring before it
 * answers any request about a run (report, audit, kernel stream,
 * connection log, status, reclaim) and on its 1 s tick. So no record wakes
 * it, except one that finds the ring over half full: then it must drain
 * before the ring fills and the kernel drops records. */
static __always_inline void submit(struct hm_trace_event *e)
{
	__u64 flags = BPF_RB_NO_WAKEUP;

	if (hm_ring_wakeup == HM_RING_WAKE_EACH)
		flags = 0;
	else if (hm_ring_wakeup == HM_RING_WAKE_HALF &&
		 bpf_ringbuf_query(&hm_events, BPF_RB_AVAIL_DATA) >
			 bpf_ringbuf_query(&hm_events, BPF_RB_RING_SIZE) / 2)
		flags = BPF_RB_FORCE_WAKEUP;
	bpf_ringbuf_submit(e, flags);
}

/* ---- process lifecycle ---- */

/* The task's page faults so far. An image's first instruction faults (the
 * loader's text is not mapped in yet when exec returns), so an exit with
 * as many faults as at the exec ran none of it (lib/audit.c). */
static __always_inline __u64 faults(struct task_struct *p)
{
	return BPF_CORE_READ(p, min_flt) + BPF_CORE_READ(p, maj_flt);
}

#define AUXV_PAIRS 32 /* more than the kernel's AT_VECTOR_SIZE pairs */
#define AT_BASE_ 7 /* the program interpreter's base (elf.h's AT_BASE) */

/* Whether the image exec has just loaded has a program interpreter (a
 * dynamic ELF, which loads the shim): AT_BASE in the auxiliary vector the
 * kernel saved for it. */
static __always_inline bool dynamic_image(struct task_struct *p)
{
	struct mm_struct *mm = BPF_CORE_READ(p, mm);
	unsigned long key, val;

	if (!mm)
		return false;
	for (int i = 0; i < AUXV_PAIRS; i++) {
		if (bpf_core_read(&key, sizeof(key), &mm->saved_auxv[2 * i]) ||
		    bpf_core_read(&val, sizeof(val), &mm->saved_auxv[2 * i + 1]) || key == 0)
			return false;
		if (key == AT_BASE_)
			return val != 0;
	}
	return false;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(hm_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	struct hm_trace_event *e;
	__u64 cgid;
	long n;

	if (outside() || !enrolled(&cgid) || !(e = event(cgid, HM_EV_EXEC)))
		return 0;
	n = bpf_probe_read_kernel_str(e->data, sizeof(e->data), BPF_CORE_READ(bprm, filename));
	e->len = n > 0 ? n - 1 : 0;
	e->arg0 = faults(p);
	e->flags = dynamic_image(p);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(hm_fork, struct task_struct *parent, struct task_struct *child)
{
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside() || !enrolled(&cgid) || !(e = event(cgid, HM_EV_FORK)))
		return 0;
	e->aux = BPF_CORE_READ(child, tgid);
	e->ret = BPF_CORE_READ(child, pid);
	e->flags = BPF_CORE_READ(child, tgid) == BPF_CORE_READ(parent, tgid);
	submit(e);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(hm_exit, struct task_struct *p)
{
	struct hm_trace_event *e;
	__u64 cgid;

	/* One event per process: when its last thread, the leader, goes. */
	if (outside() || BPF_CORE_READ(p, pid) != BPF_CORE_READ(p, tgid))
		return 0;
	if (!enrolled(&cgid) || !(e = event(cgid, HM_EV_EXIT)))
		return 0;
	e->ret = BPF_CORE_READ(p, exit_code);
	e->arg0 = faults(p);
	submit(e);
	return 0;
}

/* ---- time and entropy syscalls ---- */

static __always_inline int remember(struct trace_event_raw_sys_enter *ctx, __u32 nr)
{
	struct pending p = {
		.buf = ctx->args[0], .arg0 = ctx->args[1], .arg1 = ctx->args[2], .nr = nr,
	};
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 cgid;

	if (!enrolled(&cgid))
		return 0;
	bpf_map_update_elem(&hm_pending, &tid, &p, BPF_ANY);
	return 0;
}

static __always_inline struct pending *recall(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&hm_pending, &tid);
}

static __always_inline void forget(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	bpf_map_delete_elem(&hm_pending, &tid);
}

/* The shim's announcement names its lineage key in the buffer argument
 * (preload/init.c): data = the key, len = its length without the NUL; 0
 * when there is none or it does not fit. */
static __always_inline void shim_key(struct hm_trace_event *e, __u64 buf)
{
	long n;

	if (!buf)
		return;
	n = bpf_probe_read_user_str(e->data, HM_TRACE_DATA_MAX, (void *)buf);
	if (n > 1 && n < HM_TRACE_DATA_MAX)
		e->len = n - 1;
}

/* The shim's announcement (preload/init.c), and the supervisor's for an
 * image it set up (engine/supervise_exec.c): prctl(PR_SET_NAME, its own
 * name, HM_SHIM_HELLO_FLAGS, lineage key or 0), which renames the thread
 * to the name it has. A rename is no syscall tracepoint: while only this
 * group is attached, the syscalls of the machine take their fast path
 * (docs/performance.md). Any other rename (exec's, a program's own) has
 * other registers and is no announcement. */
SEC("tp_btf/task_rename")
int BPF_PROG(hm_rename)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside())
		return 0;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	if (!regs || BPF_CORE_READ(regs, orig_ax) != 157 /* prctl */ ||
	    BPF_CORE_READ(regs, di) != 15 /* PR_SET_NAME */ ||
	    BPF_CORE_READ(regs, dx) != HM_SHIM_HELLO_FLAGS)
		return 0;
	if (enrolled(&cgid) && (e = event(cgid, HM_EV_SHIM))) {
		shim_key(e, BPF_CORE_READ(regs, r10));
		submit(e);
	}
	return 0;
}

/* getrandom(buf, count, flags): the bytes it returned, up to the cap. */
SEC("tracepoint/syscalls/sys_enter_getrandom")
int hm_getrandom_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 cgid;

	if (outside())
		return 0;
	if (ctx->args[2] == HM_SHIM_HELLO_FLAGS) {
		struct hm_trace_event *e;

		if (enrolled(&cgid) && (e = event(cgid, HM_EV_SHIM))) {
			shim_key(e, ctx->args[0]);
			submit(e);
		}
		return 0;
	}
	return remember(ctx, 318);
}

static __always_inline void copy_user(struct hm_trace_event *e, __u64 buf, long ret)
{
	__u32 n = ret > HM_TRACE_DATA_MAX ? HM_TRACE_DATA_MAX : (__u32)ret;

	if (ret <= 0 || !buf)
		return;
	/* The verifier needs the bound on the register it sees. */
	n &= HM_TRACE_DATA_MAX * 2 - 1;
	if (n > HM_TRACE_DATA_MAX)
		n = HM_TRACE_DATA_MAX;
	if (!bpf_probe_read_user(e->data, n, (void *)buf))
		e->len = n;
}

SEC("tracepoint/syscalls/sys_exit_getrandom")
int hm_getrandom_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending *p;
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside() || !(p = recall()))
		return 0;
	cgid = hm_run_cgid();
	e = event(cgid, HM_EV_SYSCALL);
	if (e) {
		e->aux = p->nr;
		e->arg0 = p->arg0;
		e->arg1 = p->arg1;
		e->ret = ctx->ret;
		copy_user(e, p->buf, ctx->ret);
		submit(e);
	}
	forget();
	return 0;
}

/* Clock syscalls carry no secret worth keeping: one event at entry, with
 * the clock id (or 0) in arg0. */
static __always_inline int clock_call(__u32 nr, __u64 arg0, __u64 arg1)
{
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside() || !enrolled(&cgid) || !(e = event(cgid, HM_EV_SYSCALL)))
		return 0;
	e->aux = nr;
	e->arg0 = arg0;
	e->arg1 = arg1;
	submit(e);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_clock_gettime")
int hm_clock_gettime(struct trace_event_raw_sys_enter *ctx)
{
	return clock_call(228, ctx->args[0], 0);
}

SEC("tracepoint/syscalls/sys_enter_gettimeofday")
int hm_gettimeofday(struct trace_event_raw_sys_enter *ctx)
{
	return clock_call(96, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_time")
int hm_time(struct trace_event_raw_sys_enter *ctx)
{
	return clock_call(201, 0, 0);
}

SEC("tracepoint/syscalls/sys_enter_clock_nanosleep")
int hm_clock_nanosleep(struct trace_event_raw_sys_enter *ctx)
{
	return clock_call(230, ctx->args[0], ctx->args[1]);
}

SEC("tracepoint/syscalls/sys_enter_nanosleep")
int hm_nanosleep(struct trace_event_raw_sys_enter *ctx)
{
	return clock_call(35, 0, 0);
}

/* ---- /dev/urandom and /dev/random: attached only while runs exist ---- */

static __always_inline int is_random_path(const char *s)
{
	/* "/dev/urandom" or "/dev/random" */
	if (s[0] != '/' || s[1] != 'd' || s[2] != 'e' || s[3] != 'v' || s[4] != '/')
		return 0;
	if (s[5] == 'u')
		s++;
	return s[5] == 'r' && s[6] == 'a' && s[7] == 'n' && s[8] == 'd' && s[9] == 'o' &&
	       s[10] == 'm' && s[11] == 0;
}

SEC("tracepoint/syscalls/sys_enter_openat")
int hm_openat_enter(struct trace_event_raw_sys_enter *ctx)
{
	char path[16] = {};
	__u64 cgid;

	if (outside() || !enrolled(&cgid))
		return 0;
	if (bpf_probe_read_user_str(path, sizeof(path), (void *)ctx->args[1]) < 0 ||
	    !is_random_path(path))
		return 0;
	return remember(ctx, 257);
}

SEC("tracepoint/syscalls/sys_exit_openat")
int hm_openat_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending *p;
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside() || !(p = recall()) || p->nr != 257)
		return 0;
	cgid = hm_run_cgid();
	if (ctx->ret >= 0) {
		__u64 key = (bpf_get_current_pid_tgid() & ~0xffffffffULL) | (__u32)ctx->ret;
		__u8 one = 1;

		bpf_map_update_elem(&hm_random_fds, &key, &one, BPF_ANY);
	}
	e = event(cgid, HM_EV_RANDOM_OPEN);
	if (e) {
		e->ret = ctx->ret;
		submit(e);
	}
	forget();
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_read")
int hm_read_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 key;

	if (outside())
		return 0;
	/* Then only fds we saw open a random device. */
	key = (bpf_get_current_pid_tgid() & ~0xffffffffULL) | (__u32)ctx->args[0];
	if (!bpf_map_lookup_elem(&hm_random_fds, &key))
		return 0;
	return remember(ctx, 0);
}

SEC("tracepoint/syscalls/sys_exit_read")
int hm_read_exit(struct trace_event_raw_sys_exit *ctx)
{
	struct pending *p;
	struct hm_trace_event *e;
	__u64 cgid;

	if (outside() || !(p = recall()) || p->nr != 0)
		return 0;
	cgid = hm_run_cgid();
	e = event(cgid, HM_EV_RANDOM_READ);
	if (e) {
		/* args of read(fd, buf, count): remember() stored buf = fd. */
		e->arg0 = p->buf; /* fd */
		e->ret = ctx->ret;
		copy_user(e, p->arg0, ctx->ret);
		submit(e);
	}
	forget();
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_close")
int hm_close_enter(struct trace_event_raw_sys_enter *ctx)
{
	__u64 key;

	/* (a process of a run that root moved out keeps its entries until
	 * they are flushed, with the rest, when the programs are detached;
	 * outside, they are never consulted) */
	if (outside())
		return 0;
	key = (bpf_get_current_pid_tgid() & ~0xffffffffULL) | (__u32)ctx->args[0];
	bpf_map_delete_elem(&hm_random_fds, &key);
	return 0;
}

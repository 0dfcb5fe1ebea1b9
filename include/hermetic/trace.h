/* SPDX-License-Identifier: MIT */
/*
 * The kernel's view of a run: events that bpf/trace.bpf.c puts on the ring
 * buffer shared with bpf/net.bpf.c (struct hm_net_event has kind 1).
 * Fixed-width types only, no includes.
 */
#ifndef HERMETIC_TRACE_H
#define HERMETIC_TRACE_H

#define HM_EV_EXEC 2 /* a process of the run exec'd: data = binary path; arg0 = its
		      * page faults so far (min + maj) */
#define HM_EV_FORK 3 /* aux = child pid (tgid); flags bit 0: a thread */
#define HM_EV_EXIT 4 /* a process ended: ret = exit code (wait status form); arg0 = its
		      * page faults (as many as at its exec: no instruction of the image ran) */
#define HM_EV_SYSCALL 5 /* a time/entropy syscall reached the kernel */
#define HM_EV_SHIM 6 /* a process announced the shim (see HM_SHIM_HELLO_FLAGS); data = its
		      * lineage key when it named one (len 0: none) */
#define HM_EV_RANDOM_OPEN 7 /* open of /dev/urandom or /dev/random: ret = fd */
#define HM_EV_RANDOM_READ 8 /* read of such an fd: ret = bytes, data = bytes */

/* How the tracers' records wake hermeticd (trace.bpf.c's hm_ring_wakeup,
 * hermeticd --ring-wakeup; docs/performance.md, "The event ring's wake-ups"):
 * HALF: none, except a record that finds the ring over half full forces one
 * (the daemon drains before it answers any request about a run, and on its
 * 1 s tick); EACH: the kernel's adaptive wake-up for every record (a
 * self-IPI each); NEVER: none at all, for tests (a burst past the ring's
 * size is dropped, and counted, until the tick drains it). */
#define HM_RING_WAKE_HALF 0
#define HM_RING_WAKE_EACH 1
#define HM_RING_WAKE_NEVER 2

/* The shim announces itself to the kernel's view with a getrandom() call
 * that cannot succeed: these flags are invalid (EINVAL, no side effect), and
 * the tracer recognises them. No privilege, no file, no socket. */
#define HM_SHIM_HELLO_FLAGS 0x484d0000u

#define HM_TRACE_DATA_MAX 256 /* bytes of path or entropy kept per event */

struct hm_trace_event {
	__u32 kind;
	__u32 pid; /* tgid */
	__u64 cgroup_id;
	__u64 time_ns; /* CLOCK_MONOTONIC */
	__u32 tid;
	__u32 aux; /* FORK: child tgid; SYSCALL: syscall number */
	__s64 ret; /* syscall return value, exit code, fd */
	__u64 arg0; /* SYSCALL: clock id or requested length; */
	__u64 arg1; /* SYSCALL: flags */
	__u32 flags;
	__u32 len; /* bytes used in data */
	char comm[16];
	__u8 data[HM_TRACE_DATA_MAX];
};

/*
 * The kernel stream of a recorded run (docs/journal-format.md, "The kernel
 * stream"): every event of the run as one struct hm_trace_event, whatever
 * its kind, so that the stream is an array of fixed-size records.
 * A refused connection (struct hm_net_event on the ring buffer) becomes:
 *   kind  HM_EV_NET_REFUSED (1)   pid, cgroup_id, time_ns, comm as received
 *   data  the address, 16 bytes (IPv4-mapped for AF_INET), len 16
 *   aux   the port (host order)   flags  the operation (HM_OP_*)
 *   arg0  the family (HM_FAMILY_*) arg1  the protocol (IPPROTO_*)
 *   tid, ret  0
 */
#define HM_KSTREAM_RECORD_SIZE 336 /* sizeof(struct hm_trace_event) */

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The wire protocol between hermetic (client) and hermeticd (daemon).
 * Specified in docs/protocol.md; keep the two in step.
 *
 * Transport: a SOCK_SEQPACKET unix socket, one message per packet. Every
 * message is a fixed header followed by exactly hdr.len payload bytes; the
 * payload of each type is a fixed struct (an array of fixed structs for the
 * allow list) except STATUS's reply, which is a JSON document.
 *
 * Descriptors travel only from the daemon to clients. The daemon never
 * takes one from a client (it receives without a control buffer, so the
 * kernel drops any a client attaches): closing a descriptor can wait on
 * whoever serves its file (FUSE_FLUSH), and a client must not be able to
 * make the daemon wait. What used to come as a descriptor comes otherwise:
 * RUN_ADOPT is sent by the process to adopt itself, on its own connection
 * (the kernel names it: SO_PEERPIDFD); a journal is written into a memfd
 * the daemon made (JOURNAL_UPLOAD).
 */
#ifndef HERMETIC_PROTO_H
#define HERMETIC_PROTO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HM_PROTO_MAGIC 0x504d4548u /* "HEMP" little-endian */
#define HM_PROTO_VERSION 3
#define HM_MSG_MAX 65536 /* header + payload; larger packets are refused */
#define HM_MSG_MAX_FDS 2 /* descriptors one message carries at most (RUN: cgroup, clock page) */
#define HM_DEFAULT_SOCKET "/run/hermetic/hermeticd.sock"

struct hm_hdr {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t len; /* payload bytes following the header */
	uint32_t seq; /* echoed in the reply */
};

enum hm_msg_type {
	/* requests */
	HM_REQ_HELLO = 1, /* no payload -> HM_REP_HELLO */
	HM_REQ_STATUS = 2, /* no payload -> HM_REP_STATUS (JSON) */
	HM_REQ_RUN_CREATE = 3, /* hm_run_create + allow[] + names[] -> HM_REP_RUN (+ cgroup dir fd, clock page fd) */
	HM_REQ_RUN_ADOPT = 4, /* hm_run_ref, from the process to adopt -> HM_REP_OK */
	HM_REQ_RUN_KILL = 5, /* hm_run_ref -> HM_REP_OK */
	HM_REQ_RUN_REPORT = 6, /* hm_run_ref -> HM_REP_REPORT */
	HM_REQ_RUN_END = 7, /* hm_run_end -> HM_REP_OK */
	HM_REQ_RUN_AUDIT = 8, /* hm_run_ref -> HM_REP_AUDIT */
	HM_REQ_RUN_KSTREAM = 9, /* hm_run_ref -> HM_REP_KSTREAM (+ sealed memfd) */
	HM_REQ_JOURNAL_STORE = 10, /* hm_journal_store (the upload buffer) -> HM_REP_OK */
	HM_REQ_JOURNAL_LIST = 11, /* none or hm_journal_list -> HM_REP_JOURNALS (JSON) */
	HM_REQ_JOURNAL_FETCH = 12, /* hm_journal_ref -> HM_REP_JOURNAL (+ O_RDONLY fd) */
	HM_REQ_JOURNAL_RM = 13, /* hm_journal_ref -> HM_REP_COUNT */
	HM_REQ_JOURNAL_GC = 14, /* hm_journal_gc -> HM_REP_COUNT */
	HM_REQ_JOURNAL_UPLOAD = 15, /* hm_journal_upload -> HM_REP_UPLOAD (+ memfd) */
	HM_REQ_RUN_RECLAIM = 16, /* hm_run_ref, after a daemon restart -> HM_REP_RECLAIM */
	HM_REQ_RUN_CLOCK = 17, /* no payload, from a process of a run -> HM_REP_CLOCK (+ page fd) */
	HM_REQ_RUN_CONNS = 24, /* hm_run_ref, a HM_RUN_CONNLOG run -> HM_REP_CONNS */
	HM_REQ_RUN_SCHED = 25, /* hm_run_sched -> HM_REP_OK */
	/* replies */
	HM_REP_OK = 100,
	HM_REP_ERROR = 101, /* hm_error */
	HM_REP_HELLO = 102, /* hm_hello */
	HM_REP_STATUS = 103, /* JSON text, not NUL-terminated */
	HM_REP_RUN = 104, /* hm_run */
	HM_REP_REPORT = 105, /* hm_report */
	HM_REP_AUDIT = 106, /* hm_audit */
	HM_REP_KSTREAM = 107, /* hm_kstream_hdr, with the memfd */
	HM_REP_JOURNALS = 108, /* JSON array, not NUL-terminated */
	HM_REP_JOURNAL = 109, /* hm_journal_info, with the fd */
	HM_REP_COUNT = 110, /* hm_journal_count */
	HM_REP_UPLOAD = 111, /* hm_journal_upload, with a writable memfd of that size */
	HM_REP_RECLAIM = 112, /* hm_run_reclaim */
	HM_REP_CLOCK = 113, /* hm_run_ref (the asker's run), with its clock page fd */
	HM_REP_CONNS = 124, /* hm_conns followed by n struct hm_conn_rec */
};

struct hm_error {
	int32_t err; /* positive errno */
	char msg[200]; /* NUL-terminated */
};

struct hm_hello {
	char version[32];
	uint32_t proto_version;
	uint32_t features; /* HM_FEAT_* */
};

#define HM_FEAT_NET 0x1u
#define HM_FEAT_LSM 0x2u
#define HM_FEAT_UNIX 0x4u

/* Run flags (hm_run_create.flags). */
#define HM_RUN_NET_ENFORCE 0x1u /* --network block (else off) */
#define HM_RUN_NET_LOOPBACK 0x2u /* loopback allowed (not --no-loopback) */
#define HM_RUN_NET_UNIX 0x4u /* unix sockets allowed (not --no-unix) */
#define HM_RUN_RECORD 0x8u /* keep the run's kernel stream (HM_REQ_RUN_KSTREAM) */
#define HM_RUN_CLOCK 0x10u /* a virtual clock page and keeper for the run */
#define HM_RUN_UNCONFINED 0x20u /* enroll --confine off: for status, nothing enforced */
#define HM_RUN_NET_AUDIT 0x40u /* --network audit: with ENFORCE, report and let through */
#define HM_RUN_CONNLOG 0x400u /* enroll --connections: keep every connection attempt (RUN_CONNS) */
#define HM_RUN_AUDIT_SYSCALLS 0x800u /* enroll --audit-syscalls: attach the syscall tracers */

/* One --allow destination, already resolved by the client. */
struct hm_allow {
	uint8_t addr[16]; /* IPv6, or IPv4-mapped */
	uint16_t port; /* host order; 0 = any port */
	uint16_t pad[3];
};

#define HM_RUN_MAX_ALLOW 64

/* One --allow NAME[:PORT] (docs/network.md): the run's resolver answers
 * this name ("*.suffix": every name below suffix) and opens the addresses
 * of its answers at port. They follow the allow[] entries of RUN_CREATE,
 * as many as fit the rest of its payload. */
struct hm_allow_name {
	char name[254]; /* lower case, no trailing dot, NUL-terminated */
	uint16_t port; /* host order; 0 = any port */
};

#define HM_RUN_MAX_NAMES 32

struct hm_run_create {
	uint32_t flags;
	uint32_t n_allow; /* followed by n_allow struct hm_allow */
	char label[64]; /* command name, for status; NUL-terminated */
};

struct hm_run_ref {
	uint64_t run_id;
};

/* HM_REQ_RUN_SCHED (enroll --sched chaos:SEED): perturb the schedule of
 * the peer's own run by seed (daemon/chaos.c, docs/scheduling.md). */
#define HM_SCHED_CHAOS 1u
/* --sched serial:SEED: the run's tasks one at a time on one CPU, each at a
 * SCHED_FIFO priority drawn from the seed and its identity (hm_serial_prio),
 * so the choice at every blocking point repeats from the seed. */
#define HM_SCHED_SERIAL 2u
/* Serial priorities: the run's first task starts at SERIAL_TOP (the
 * daemon); a task of the shim then lowers its own to its draw in
 * [SERIAL_MIN, SERIAL_TOP - 1] if that is below what it inherited (a task
 * may lower its priority without privilege, not raise it); a task that
 * spins past the daemon's bound drops to 1. */
#define HM_SERIAL_TOP 79
#define HM_SERIAL_MIN 2

/* The serial priority of thread `index` of process `proc` (its lineage's
 * hash, the shim's hm.proc): a function of the seed and the task's
 * deterministic identity, never of its thread id. */
static inline int hm_serial_prio(uint64_t seed, uint64_t proc, uint64_t index)
{
	uint64_t z = seed ^ (proc * 0x9e3779b97f4a7c15ULL) ^ (index * 0xd1b54a32d192ed03ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	z ^= z >> 31;
	return HM_SERIAL_MIN + (int)(z % (uint64_t)(HM_SERIAL_TOP - HM_SERIAL_MIN));
}

/* Which half of the chaos seeds spread the run over the CPUs (the shim's
 * start gate, preload/sched.c) rather than put it on one CPU under the
 * daemon's priorities (daemon/chaos.c): both sides draw it alike. */
static inline bool hm_sched_spread(uint64_t seed)
{
	uint64_t z = (seed ^ 0x5c4edULL) * 0xbf58476d1ce4e5b9ULL;

	return ((z ^ (z >> 31)) >> 17) & 1;
}

struct hm_run_sched {
	uint64_t run_id;
	uint64_t seed;
	uint32_t mode; /* HM_SCHED_CHAOS or HM_SCHED_SERIAL */
	uint32_t pad; /* 0 */
};

#define HM_END_KEEP 0x1u /* leave remaining processes; remove when empty */

struct hm_run_end {
	uint64_t run_id;
	uint32_t flags;
	uint32_t pad;
};

/* With two descriptors: the run's cgroup directory (O_RDONLY) and, for
 * HM_RUN_CLOCK, its clock page (O_RDWR; the file is root's, in a root-only
 * directory, so the descriptor is the only way in). */
struct hm_run {
	uint64_t run_id;
	uint64_t cgroup_id;
	char cgroup_path[256]; /* absolute path of the run's cgroup directory */
};

/* HM_REQ_RUN_RECLAIM: the client of a run that a restarted daemon adopted
 * takes it back on a new connection (only the process that created it,
 * from outside every run). */
struct hm_run_reclaim {
	uint64_t restarted_ns; /* CLOCK_REALTIME when the new daemon adopted it */
	uint64_t lost; /* kernel events of the run the daemon does not have */
};

#define HM_REPORT_MAX 8

struct hm_refusal {
	uint8_t addr[16];
	uint16_t port;
	uint8_t family; /* 1 unix, 2 inet, 10 inet6 */
	uint8_t op; /* 1 connect, 2 sendmsg */
	uint32_t proto;
	uint32_t pid;
	uint32_t count; /* refusals to this destination by this command */
	char comm[16];
};

struct hm_report {
	uint64_t refused; /* all refusals of the run */
	uint64_t dropped; /* events the kernel could not deliver */
	uint32_t n; /* entries used in first[] */
	uint32_t pad;
	struct hm_refusal first[HM_REPORT_MAX]; /* first distinct destinations */
};

/*
 * HM_REQ_RUN_CONNS (enroll --connections): the connection attempts of the
 * run the daemon has received since the last RUN_CONNS, oldest first, and
 * taken from its queue. A connect() is one record; datagrams and packets
 * to one destination with one verdict from one process that came in a row
 * are one record with their count.
 */
#define HM_VERDICT_ALLOWED 1
#define HM_VERDICT_REFUSED 2
#define HM_VERDICT_AUDITED 3 /* --network audit: block would have refused it */

struct hm_conn_rec {
	uint64_t time_ns; /* CLOCK_MONOTONIC, as the kernel hook read it, of the first */
	uint8_t addr[16]; /* IPv4-mapped for AF_INET; zero for unix */
	uint16_t port;
	uint8_t family; /* 1 unix, 2 inet, 10 inet6 */
	uint8_t op; /* 1 connect, 2 sendmsg, 3 packet */
	uint32_t proto; /* IPPROTO_*, 0 unknown */
	uint32_t pid; /* tgid, 0 unknown */
	uint32_t count; /* attempts this record stands for, >= 1 */
	uint8_t verdict; /* HM_VERDICT_* */
	uint8_t pad[7];
	char comm[16];
	/* the process's lineage key as its shim announced it ("1.3"), "" when
	 * none did (no shim, a fork child that did not exec, a key this long) */
	char process_key[32];
};

#define HM_CONNS_MAX 640 /* records in one reply (fits HM_MSG_MAX) */

struct hm_conns {
	uint64_t refused; /* the kernel's count of the run's refusals (audits) so far */
	uint64_t kernel_dropped; /* events of the run the kernel could not deliver, any kind */
	uint64_t daemon_dropped; /* attempts received but not kept (the queue was full) */
	uint32_t n; /* records following */
	uint32_t more; /* 1: more are queued, ask again */
};

#define HM_AUDIT_MAX 8

/* One process of the run as the kernel saw it. */
struct hm_audit_proc {
	uint32_t pid;
	uint32_t shim; /* 1 when its current image announced the shim */
	uint32_t getrandom; /* getrandom syscalls that reached the kernel */
	uint32_t clock; /* clock syscalls that reached the kernel */
	uint32_t random_reads; /* reads of /dev/urandom, /dev/random */
	uint32_t exec_faults; /* its page faults at its last exec (low 32 bits; lib/audit.c) */
	uint32_t flags; /* HM_AUDIT_* */
	uint32_t pad;
	uint64_t getrandom_bytes;
	char comm[16];
	char path[128]; /* last exec'd binary */
};

/* struct hm_audit_proc's flags */
#define HM_AUDIT_DYNAMIC 0x1 /* its last image has a program interpreter (loads the shim) */
#define HM_AUDIT_UNSTARTED 0x2 /* killed before its image's start-up reached the shim */

/* The kernel's view of a run (hermetic enroll prints it as coverage). */
struct hm_audit {
	uint64_t events; /* trace events received */
	uint64_t dropped; /* events the kernel could not deliver */
	uint64_t execs, forks, exits;
	uint64_t processes; /* distinct processes seen */
	uint64_t without_shim; /* processes whose last image ran without the shim */
	uint64_t syscalls_shim; /* time/entropy syscalls from processes with the shim */
	uint64_t syscalls_noshim; /* ... and from processes without it */
	uint64_t getrandom_bytes;
	uint32_t n; /* entries in procs[]: processes without the shim first */
	uint32_t sched_spun; /* --sched serial: tasks lowered for spinning (0 otherwise) */
	struct hm_audit_proc procs[HM_AUDIT_MAX];
};

/*
 * The kernel stream of a recorded run (HM_REQ_RUN_KSTREAM): a sealed memfd
 * holding this header followed by `records` records of record_size bytes
 * (struct hm_trace_event, include/hermetic/trace.h). The reply's payload is
 * the same header. kernel_dropped: events the kernel could not put on the
 * ring buffer; daemon_dropped: events the daemon received but did not keep
 * (per-run or global memory cap). Nothing is lost without being counted.
 */
struct hm_kstream_hdr {
	uint32_t record_size;
	uint32_t pad;
	uint64_t records;
	uint64_t kernel_dropped;
	uint64_t daemon_dropped;
};

/* HM_REQ_JOURNAL_UPLOAD: ask for a buffer of exactly size bytes, a memfd
 * the daemon made, sealed against growing and shrinking. The client writes
 * its journal into it (no writable mapping may remain), then sends
 * JOURNAL_STORE; the daemon seals it against writing and copies it. One
 * buffer per connection: a new UPLOAD replaces the last. */
struct hm_journal_upload {
	uint64_t size;
};

/* HM_REQ_JOURNAL_STORE: a finished journal of the peer's run, one zstd
 * frame, in the connection's upload buffer. */
#define HM_JOURNAL_COMMAND_MAX 256
struct hm_journal_store {
	uint64_t run_id;
	int32_t exit_status; /* as enroll exits: status, or 128 + signal */
	uint32_t flags; /* 0; other values are EINVAL */
	uint64_t seed;
	int64_t started_ns; /* real wall-clock start, ns since the epoch */
	char command[HM_JOURNAL_COMMAND_MAX]; /* for list; NUL-terminated */
};

/* Largest journal the store accepts. */
#define HM_JOURNAL_STORE_MAX (256ULL << 20)

/* HM_REQ_JOURNAL_LIST: entries newest first, starting at skip; the reply
 * holds as many as fit in one message. Ask again with skip + count until
 * the array is empty. An empty payload means skip 0. */
struct hm_journal_list {
	uint32_t skip;
	uint32_t pad;
};

/* HM_REQ_JOURNAL_FETCH, HM_REQ_JOURNAL_RM */
struct hm_journal_ref {
	uint64_t id; /* the run id */
};

/* HM_REQ_JOURNAL_GC: remove the peer's journals stored more than
 * older_than_s seconds ago (0: all of them). */
struct hm_journal_gc {
	uint64_t older_than_s;
};

struct hm_journal_info {
	uint64_t id;
	uint64_t size; /* bytes of the fd's file */
};

struct hm_journal_count {
	uint64_t removed; /* journals */
	uint64_t bytes; /* their sizes */
};

/* Send one message (with an optional fd via SCM_RIGHTS, -1 for none).
 * Returns 0 or -errno. hm_send_fds sends nfds (at most HM_MSG_MAX_FDS). */
int hm_send(int sock, uint16_t type, uint32_t seq, const void *payload, uint32_t len, int fd);
int hm_send_fds(int sock, uint16_t type, uint32_t seq, const void *payload, uint32_t len,
		const int *fds, int nfds);

/* Receive one message into buf (at least HM_MSG_MAX bytes). On success
 * *ret_hdr points into buf, the payload follows it, and *ret_fd holds a
 * received fd or -1. With ret_fd NULL no descriptor is ever installed:
 * the kernel drops what came (the daemon receives this way). Validates magic, version and length against what
 * arrived. Every received fd but the one returned is closed, on every
 * path. Returns payload length, -EBADMSG (malformed, including an empty
 * packet that carried descriptors), -EMSGSIZE (oversized), -ECONNRESET
 * (peer closed) or -errno. */
ssize_t hm_recv(int sock, void *buf, size_t size, struct hm_hdr **ret_hdr, int *ret_fd);
/* The same, keeping up to max_fds descriptors in ret_fds (-1 where none came). */
ssize_t hm_recv_fds(int sock, void *buf, size_t size, struct hm_hdr **ret_hdr, int *ret_fds,
		    int max_fds);

/* Check one packet of n bytes: magic, version, and hdr.len against n.
 * Returns 0 (*ret_hdr = buf), -EBADMSG or -EMSGSIZE. */
int hm_msg_parse(const void *buf, size_t n, const struct hm_hdr **ret_hdr);

/* Format an address of struct hm_allow / hm_refusal as text ("1.2.3.4:80",
 * "[::1]:80"); buf must hold 64 bytes. */
const char *hm_addr_str(const uint8_t addr[16], uint16_t port, char *buf, size_t size);

#endif

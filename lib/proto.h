/* SPDX-License-Identifier: MIT */
/*
 * The wire protocol between hermetic (client) and hermeticd (daemon).
 * Specified in docs/protocol.md; keep the two in step.
 *
 * Transport: a SOCK_SEQPACKET unix socket, one message per packet. Every
 * message is a fixed header followed by exactly hdr.len payload bytes; the
 * payload of each type is a fixed struct (an array of fixed structs for the
 * allow list) except STATUS's reply, which is a JSON document.
 */
#ifndef HERMETIC_PROTO_H
#define HERMETIC_PROTO_H

#include <stdint.h>
#include <sys/types.h>

#define HM_PROTO_MAGIC 0x504d4548u /* "HEMP" little-endian */
#define HM_PROTO_VERSION 1
#define HM_MSG_MAX 65536 /* header + payload; larger packets are refused */
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
	HM_REQ_RUN_CREATE = 3, /* hm_run_create + allow[] -> HM_REP_RUN (+ cgroup dir fd) */
	HM_REQ_RUN_ADOPT = 4, /* hm_run_ref (+ pidfd) -> HM_REP_OK */
	HM_REQ_RUN_KILL = 5, /* hm_run_ref -> HM_REP_OK */
	HM_REQ_RUN_REPORT = 6, /* hm_run_ref -> HM_REP_REPORT */
	HM_REQ_RUN_END = 7, /* hm_run_end -> HM_REP_OK */
	HM_REQ_RUN_AUDIT = 8, /* hm_run_ref -> HM_REP_AUDIT */
	/* replies */
	HM_REP_OK = 100,
	HM_REP_ERROR = 101, /* hm_error */
	HM_REP_HELLO = 102, /* hm_hello */
	HM_REP_STATUS = 103, /* JSON text, not NUL-terminated */
	HM_REP_RUN = 104, /* hm_run */
	HM_REP_REPORT = 105, /* hm_report */
	HM_REP_AUDIT = 106, /* hm_audit */
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

/* One --allow destination, already resolved by the client. */
struct hm_allow {
	uint8_t addr[16]; /* IPv6, or IPv4-mapped */
	uint16_t port; /* host order; 0 = any port */
	uint16_t pad[3];
};

#define HM_RUN_MAX_ALLOW 64

struct hm_run_create {
	uint32_t flags;
	uint32_t n_allow; /* followed by n_allow struct hm_allow */
	char label[64]; /* command name, for status; NUL-terminated */
};

struct hm_run_ref {
	uint64_t run_id;
};

#define HM_END_KEEP 0x1u /* leave remaining processes; remove when empty */

struct hm_run_end {
	uint64_t run_id;
	uint32_t flags;
	uint32_t pad;
};

struct hm_run {
	uint64_t run_id;
	uint64_t cgroup_id;
	char cgroup_path[256]; /* absolute path of the run's cgroup directory */
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

#define HM_AUDIT_MAX 8

/* One process of the run as the kernel saw it. */
struct hm_audit_proc {
	uint32_t pid;
	uint32_t shim; /* 1 when its current image announced the shim */
	uint32_t getrandom; /* getrandom syscalls that reached the kernel */
	uint32_t clock; /* clock syscalls that reached the kernel */
	uint32_t random_reads; /* reads of /dev/urandom, /dev/random */
	uint32_t pad;
	uint64_t getrandom_bytes;
	char comm[16];
	char path[128]; /* last exec'd binary */
};

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
	uint32_t pad;
	struct hm_audit_proc procs[HM_AUDIT_MAX];
};

/* Send one message (with an optional fd via SCM_RIGHTS, -1 for none).
 * Returns 0 or -errno. */
int hm_send(int sock, uint16_t type, uint32_t seq, const void *payload, uint32_t len, int fd);

/* Receive one message into buf (at least HM_MSG_MAX bytes). On success
 * *ret_hdr points into buf, the payload follows it, and *ret_fd holds a
 * received fd or -1. Validates magic, version and length against what
 * arrived. Returns payload length, -EBADMSG (malformed), -EMSGSIZE
 * (oversized), -ECONNRESET (peer closed) or -errno. */
ssize_t hm_recv(int sock, void *buf, size_t size, struct hm_hdr **ret_hdr, int *ret_fd);

/* Format an address of struct hm_allow / hm_refusal as text ("1.2.3.4:80",
 * "[::1]:80"); buf must hold 64 bytes. */
const char *hm_addr_str(const uint8_t addr[16], uint16_t port, char *buf, size_t size);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * hermeticd's request decoder: one packet (header and payload, as it came
 * off the socket) into a typed request, every length and field checked
 * before anything acts on it. Pure code (no I/O, no daemon state), so the
 * fuzz target (tests/fuzz/request_fuzz.c) links it alone.
 */
#ifndef HERMETICD_REQUEST_H
#define HERMETICD_REQUEST_H

#include <stddef.h>
#include <stdint.h>
#include "proto.h"

struct hmd_req {
	uint16_t type; /* HM_REQ_* */
	uint32_t seq; /* echoed in the reply; 0 when the header itself is bad */
	union {
		struct {
			struct hm_run_create c; /* label NUL-terminated */
			struct hm_allow allow[HM_RUN_MAX_ALLOW];
			struct hm_allow_name names[HM_RUN_MAX_NAMES];
			uint32_t n_names;
		} create;
		struct hm_run_ref ref; /* ADOPT, KILL, REPORT, AUDIT, KSTREAM, RECLAIM, CONNS */
		struct hm_run_end end;
		struct hm_run_sched sched;
		struct hm_journal_store store; /* command NUL-terminated */
		struct hm_journal_list list;
		struct hm_journal_ref jref; /* FETCH, RM */
		struct hm_journal_gc gc;
		struct hm_journal_upload upload;
	};
};

/* Decode the packet buf[0..n). On success fills *ret (every field of the
 * request's union member) and returns 0. On failure returns -errno
 * (EBADMSG malformed, EMSGSIZE too large, E2BIG too many --allow entries,
 * EINVAL unknown flags, EOPNOTSUPP unknown type), ret->seq and ret->type
 * set when the header was readable, and a message for the peer in why. */
int hmd_req_decode(const void *buf, size_t n, struct hmd_req *ret, char *why, size_t why_size);

#endif

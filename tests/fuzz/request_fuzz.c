// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for hermeticd's request decoder (daemon/request.c), the
 * first code every byte a client sends reaches: hm_msg_parse() checks the
 * header, hmd_req_decode() the payload of each type. Properties checked
 * beyond "no crash, no sanitizer report":
 *   - a decoder that fails says why, and one that fails on the header
 *     leaves seq 0 (the daemon answers it with seq 0);
 *   - every accepted packet has a valid header whose length is the packet's
 *     and a known type, and its strings are NUL-terminated;
 *   - RUN_CREATE's n_allow and n_names are within bounds, its length exact
 *     and every name a well-formed --allow pattern;
 *   - re-encoding an accepted request gives back the packet it came from
 *     (nothing is lost or invented), for every type with a fixed payload.
 * With -seeds DIR it writes one valid packet per request type instead.
 *
 * Build and run: tests/fuzz/run.sh [SECONDS] request_fuzz
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "proto.h"
#include "request.h"
#include "dnsmsg.h"

static size_t payload_of(const struct hmd_req *r, const void **ret)
{
	switch (r->type) {
	case HM_REQ_RUN_ADOPT:
	case HM_REQ_RUN_KILL:
	case HM_REQ_RUN_REPORT:
	case HM_REQ_RUN_AUDIT:
	case HM_REQ_RUN_KSTREAM:
	case HM_REQ_RUN_RECLAIM:
	case HM_REQ_RUN_CONNS:
		*ret = &r->ref;
		return sizeof(r->ref);
	case HM_REQ_RUN_END:
		*ret = &r->end;
		return sizeof(r->end);
	case HM_REQ_RUN_SCHED:
		*ret = &r->sched;
		return sizeof(r->sched);
	case HM_REQ_JOURNAL_FETCH:
	case HM_REQ_JOURNAL_RM:
		*ret = &r->jref;
		return sizeof(r->jref);
	case HM_REQ_JOURNAL_GC:
		*ret = &r->gc;
		return sizeof(r->gc);
	case HM_REQ_JOURNAL_UPLOAD:
		*ret = &r->upload;
		return sizeof(r->upload);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	static struct hmd_req r;
	const struct hm_hdr *h;
	const void *p;
	char why[200] = "";
	int err = hmd_req_decode(data, n, &r, why, sizeof(why));

	if (err < 0) {
		if (!why[0] || err >= 0)
			abort();
		if (hm_msg_parse(data, n, &h) < 0 && (r.seq || r.type))
			abort();
		return 0;
	}
	if (hm_msg_parse(data, n, &h) < 0 || h->len + sizeof(*h) != n || h->seq != r.seq ||
	    h->type != r.type)
		abort();
	p = h + 1;
	switch (r.type) {
	case HM_REQ_HELLO:
	case HM_REQ_STATUS:
		return 0;
	case HM_REQ_RUN_CLOCK:
		if (h->len) /* it takes no payload: the run is the asker's */
			abort();
		return 0;
	case HM_REQ_RUN_CREATE:
		if (r.create.c.n_allow > HM_RUN_MAX_ALLOW || r.create.n_names > HM_RUN_MAX_NAMES ||
		    h->len != sizeof(r.create.c) + r.create.c.n_allow * sizeof(struct hm_allow) +
				      r.create.n_names * sizeof(struct hm_allow_name) ||
		    memchr(r.create.c.label, 0, sizeof(r.create.c.label)) == NULL ||
		    memcmp(r.create.allow, (const char *)p + sizeof(r.create.c),
			   r.create.c.n_allow * sizeof(struct hm_allow)))
			abort();
		for (uint32_t k = 0; k < r.create.n_names; k++)
			if (!hm_dns_pattern_ok(r.create.names[k].name))
				abort();
		return 0;
	case HM_REQ_JOURNAL_STORE:
		if (h->len != sizeof(r.store) ||
		    memchr(r.store.command, 0, sizeof(r.store.command)) == NULL || r.store.flags ||
		    memcmp(&r.store, p, offsetof(struct hm_journal_store, command)))
			abort();
		return 0;
	case HM_REQ_JOURNAL_LIST:
		if (h->len && (h->len != sizeof(r.list) || memcmp(&r.list, p, sizeof(r.list))))
			abort();
		return 0;
	default: {
		const void *enc;
		size_t len = payload_of(&r, &enc);

		if (!len || len != h->len || memcmp(enc, p, len))
			abort();
		return 0;
	}
	}
}

#ifdef REQUEST_SEEDS
/* One valid packet per request type, for the seed corpus. */
static void seed(const char *dir, int i, uint16_t type, const void *p, uint32_t len)
{
	char path[4096], buf[HM_MSG_MAX];
	struct hm_hdr h = { HM_PROTO_MAGIC, HM_PROTO_VERSION, type, len, (uint32_t)i };
	FILE *f;

	memcpy(buf, &h, sizeof(h));
	memcpy(buf + sizeof(h), p, len);
	snprintf(path, sizeof(path), "%s/seed-%02d", dir, i);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, sizeof(h) + len, f) != sizeof(h) + len || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct {
		struct hm_run_create c;
		struct hm_allow a[2];
		struct hm_allow_name n[2];
	} create = { .c = { .flags = HM_RUN_NET_ENFORCE | HM_RUN_NET_LOOPBACK, .n_allow = 2,
			    .label = "pytest" },
		     .a = { { .addr = { [10] = 0xff, [11] = 0xff, 10, 0, 0, 1 }, .port = 80 },
			    { .addr = { [15] = 1 } } },
		     .n = { { .name = "pypi.org", .port = 443 }, { .name = "*.example.org" } } };
	struct hm_journal_store st = { .run_id = 7, .exit_status = 1, .seed = 42, .command = "make" };
	struct hm_run_end end = { .run_id = 7, .flags = HM_END_KEEP };
	struct hm_journal_list list = { .skip = 3 };
	struct hm_run_sched sched = { .run_id = 7, .seed = 42, .mode = HM_SCHED_CHAOS };
	uint64_t id = 7;
	int i = 0;

	if (argc != 2)
		return 2;
	seed(argv[1], i++, HM_REQ_HELLO, NULL, 0);
	seed(argv[1], i++, HM_REQ_STATUS, NULL, 0);
	seed(argv[1], i++, HM_REQ_RUN_CREATE, &create, sizeof(create));
	for (uint16_t t = HM_REQ_RUN_ADOPT; t <= HM_REQ_RUN_KSTREAM; t++)
		if (t != HM_REQ_RUN_END)
			seed(argv[1], i++, t, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_RUN_END, &end, sizeof(end));
	seed(argv[1], i++, HM_REQ_JOURNAL_STORE, &st, sizeof(st));
	seed(argv[1], i++, HM_REQ_JOURNAL_LIST, &list, sizeof(list));
	seed(argv[1], i++, HM_REQ_JOURNAL_LIST, NULL, 0);
	seed(argv[1], i++, HM_REQ_JOURNAL_FETCH, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_JOURNAL_RM, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_JOURNAL_GC, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_JOURNAL_UPLOAD, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_RUN_RECLAIM, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_RUN_CONNS, &id, sizeof(id));
	seed(argv[1], i++, HM_REQ_RUN_CLOCK, NULL, 0);
	seed(argv[1], i++, HM_REQ_RUN_SCHED, &sched, sizeof(sched));
	return 0;
}
#endif

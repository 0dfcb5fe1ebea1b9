/* SPDX-License-Identifier: MIT */
/*
 * A small strict DNS message parser for hermeticd's per-run resolver
 * (docs/network.md): the question of a query, a refusal built from it, and
 * the A/AAAA addresses an answer gives for that question, following its
 * CNAME chain. Everything it reads is bounded by the message; it never
 * allocates. Fuzzed by tests/fuzz/dns_fuzz.c.
 */
#ifndef HERMETIC_DNSMSG_H
#define HERMETIC_DNSMSG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HM_DNS_MAX_MSG 4096 /* larger queries are dropped; answers are cut to it */
#define HM_DNS_MAX_NAME 254 /* presentation form without the root dot, + NUL */
#define HM_DNS_MAX_CHAIN 8 /* CNAME links followed */
#define HM_DNS_MAX_RRS 64 /* answer records read */

#define HM_DNS_NOERROR 0
#define HM_DNS_FORMERR 1
#define HM_DNS_SERVFAIL 2
#define HM_DNS_NXDOMAIN 3
#define HM_DNS_REFUSED 5

#define HM_DNS_T_A 1
#define HM_DNS_T_CNAME 5
#define HM_DNS_T_AAAA 28

struct hm_dns_query {
	uint16_t id;
	uint16_t qtype, qclass;
	size_t qend; /* offset just past the question */
	char name[HM_DNS_MAX_NAME]; /* lower case, no trailing dot */
};

struct hm_dns_addr {
	uint8_t addr[16]; /* IPv4-mapped for A */
	uint32_t ttl; /* the least TTL along the chain */
};

/* The one question of a standard query. 0, -EBADMSG (malformed: answer
 * FORMERR if at least the header was read, i.e. n >= 12) or -EOPNOTSUPP
 * (not a standard query of class IN: answer REFUSED). */
int hm_dns_parse_query(const uint8_t *m, size_t n, struct hm_dns_query *q);

/* A reply with no records and this rcode, echoing q's question from the
 * query m. Returns its length, or 0 when cap is too small. */
size_t hm_dns_reply(const uint8_t *m, const struct hm_dns_query *q, int rcode, uint8_t *out,
		    size_t cap);

/* The addresses answer m gives for q (its ID, question and the CNAME chain
 * from q->name checked), at most max. Returns how many (0 also for an
 * answer with an error rcode), or -EBADMSG when the answer is not one to
 * q or is malformed. *rcode gets the answer's rcode. */
int hm_dns_parse_answer(const uint8_t *m, size_t n, const struct hm_dns_query *q,
			struct hm_dns_addr *out, int max, int *rcode);

/* Is pattern ("name" or "*.suffix", lower case) a well-formed --allow
 * name? */
bool hm_dns_pattern_ok(const char *pattern);
/* Does name (lower case, no trailing dot) match pattern? "*.a.b" matches
 * every name below a.b, not a.b itself. */
bool hm_dns_match(const char *pattern, const char *name);

#endif

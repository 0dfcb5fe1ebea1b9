// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the DNS parser of hermeticd's per-run resolver
 * (lib/dnsmsg.c), which reads every query a run sends and every answer an
 * upstream nameserver returns. Properties checked beyond "no crash, no
 * sanitizer report":
 *   - a parsed query's name is a well-formed, lower-case DNS name and its
 *     question lies inside the message;
 *   - the refusal built from a query is header + that question, QR set;
 *   - the input read as an answer to its own question (or to a fixed one)
 *     never yields more addresses than asked for, nor a TTL above 2^31-1.
 * Built with -DDNS_SEEDS it is a program that writes a valid query and
 * answer into the directory it is given, the seed corpus.
 *
 * Build and run: tests/fuzz/run.sh [SECONDS] dns_fuzz
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dnsmsg.h"

static void check(int cond, const char *what)
{
	if (!cond) {
		fprintf(stderr, "property violated: %s\n", what);
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t n)
{
	struct hm_dns_query q, fixed = { .qtype = 1, .qclass = 1, .name = "www.example.org" };
	struct hm_dns_addr addrs[4];
	uint8_t out[HM_DNS_MAX_MSG];
	int err = hm_dns_parse_query(data, n, &q), rcode, k;

	if (!err || err == -EOPNOTSUPP) {
		check(q.qend > 12 && q.qend <= n, "question inside the message");
		check(hm_dns_pattern_ok(q.name), "query name well-formed");
		size_t len = hm_dns_reply(data, &q, HM_DNS_NXDOMAIN, out, sizeof(out));
		check(len == q.qend && (out[2] & 0x80) && (out[3] & 0xf) == HM_DNS_NXDOMAIN,
		      "refusal is header + question");
		k = hm_dns_parse_answer(data, n, &q, addrs, 4, &rcode);
		check(k <= 4, "at most max addresses");
	} else {
		check(err == -EBADMSG, "query errors are EBADMSG or EOPNOTSUPP");
	}
	if (n >= 2) {
		fixed.id = (uint16_t)(data[0] << 8 | data[1]);
		k = hm_dns_parse_answer(data, n, &fixed, addrs, 4, &rcode);
		check(k <= 4, "at most max addresses");
		for (int i = 0; i < k; i++)
			check(addrs[i].ttl <= 0x7fffffff, "TTL within 2^31-1");
	}
	return 0;
}

#ifdef DNS_SEEDS
static void put(const char *dir, const char *name, const uint8_t *m, size_t n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(m, 1, n, f) != n || fclose(f)) {
		perror(path);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	static const uint8_t query[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w', 'w', 'w',
					 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g',
					 0, 0, 1, 0, 1 };
	/* www.example.org CNAME cdn.example.net; cdn.example.net A 192.0.2.1 */
	static const uint8_t answer[] = {
		0x12, 0x34, 0x81, 0x80, 0, 1, 0, 2, 0, 0, 0, 0, 3, 'w', 'w', 'w', 7, 'e', 'x', 'a',
		'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0, 0, 1, 0, 1,
		0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 17, 3, 'c', 'd', 'n', 7, 'e', 'x', 'a', 'm',
		'p', 'l', 'e', 3, 'n', 'e', 't', 0,
		0xc0, 45, 0, 1, 0, 1, 0, 0, 0, 30, 0, 4, 192, 0, 2, 1,
	};

	if (argc != 2)
		return 2;
	put(argv[1], "query", query, sizeof(query));
	put(argv[1], "answer", answer, sizeof(answer));
	return 0;
}
#endif

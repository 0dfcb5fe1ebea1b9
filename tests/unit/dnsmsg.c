// SPDX-License-Identifier: MIT
/* The resolver's DNS parser (lib/dnsmsg.c): queries, refusals, answers and
 * their CNAME chains, name patterns. */
#include <errno.h>
#include <stdint.h>
#include "dnsmsg.h"
#include "test.h"

#define Q_WWW 3, 'W', 'w', 'W', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0

static const uint8_t query[] = { 0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, Q_WWW, 0, 1, 0, 1 };

/* www CNAME cdn.example.net (TTL 60); cdn.example.net A 192.0.2.1 (TTL 300);
 * other.example.org A 192.0.2.9 (not on the chain). */
static const uint8_t answer[] = {
	0x12, 0x34, 0x81, 0x80, 0, 1, 0, 3, 0, 0, 0, 0, Q_WWW, 0, 1, 0, 1,
	0xc0, 12, 0, 5, 0, 1, 0, 0, 0, 60, 0, 17, 3, 'c', 'd', 'n', 7, 'e', 'x', 'a', 'm', 'p',
	'l', 'e', 3, 'n', 'e', 't', 0,
	0xc0, 45, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 192, 0, 2, 1,
	5, 'o', 't', 'h', 'e', 'r', 0xc0, 16, 0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 192, 0, 2, 9,
};

int main(void)
{
	struct hm_dns_query q;
	struct hm_dns_addr a[4];
	uint8_t buf[600], out[600];
	int rcode;

	CHECK("query parsed, name lower-cased",
	      !hm_dns_parse_query(query, sizeof(query), &q) && !strcmp(q.name, "www.example.org") &&
		      q.id == 0x1234 && q.qtype == 1 && q.qend == sizeof(query));
	CHECK("refusal: header and question, QR, NXDOMAIN, no records",
	      hm_dns_reply(query, &q, HM_DNS_NXDOMAIN, out, sizeof(out)) == sizeof(query) &&
		      out[2] == 0x81 && out[3] == 0x83 && out[5] == 1 && !out[7] && !out[11]);
	CHECK("answer: the CNAME chain's address only, least TTL along it",
	      hm_dns_parse_answer(answer, sizeof(answer), &q, a, 4, &rcode) == 1 && rcode == 0 &&
		      a[0].addr[10] == 0xff && a[0].addr[12] == 192 && a[0].addr[15] == 1 &&
		      a[0].ttl == 60);
	memcpy(buf, answer, sizeof(answer));
	buf[1] ^= 1;
	CHECK("answer with another ID refused",
	      hm_dns_parse_answer(buf, sizeof(answer), &q, a, 4, &rcode) == -EBADMSG);
	CHECK("answer cut short refused",
	      hm_dns_parse_answer(answer, sizeof(answer) - 3, &q, a, 4, &rcode) == -EBADMSG);
	memcpy(buf, answer, sizeof(answer));
	buf[3] = 0x83;
	CHECK("NXDOMAIN answer: no addresses",
	      hm_dns_parse_answer(buf, sizeof(answer), &q, a, 4, &rcode) == 0 && rcode == 3);
	memcpy(buf, answer, sizeof(answer));
	buf[45] = 0xc0; /* the CNAME's target points at itself */
	buf[46] = 45;
	CHECK("compression loop refused",
	      hm_dns_parse_answer(buf, sizeof(answer), &q, a, 4, &rcode) == -EBADMSG);

	memcpy(buf, query, sizeof(query));
	buf[2] |= 0x80;
	CHECK("a query with QR set is malformed", hm_dns_parse_query(buf, sizeof(query), &q) == -EBADMSG);
	memcpy(buf, query, sizeof(query));
	buf[2] = 0x28; /* opcode UPDATE */
	CHECK("opcode other than QUERY refused",
	      hm_dns_parse_query(buf, sizeof(query), &q) == -EOPNOTSUPP);
	memcpy(buf, query, sizeof(query));
	buf[5] = 2;
	CHECK("two questions malformed", hm_dns_parse_query(buf, sizeof(query), &q) == -EBADMSG);
	memcpy(buf, query, sizeof(query));
	buf[14] = '!';
	CHECK("odd byte in a name malformed", hm_dns_parse_query(buf, sizeof(query), &q) == -EBADMSG);
	static const uint8_t ptr[] = { 1, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1 };
	CHECK("compression in a query malformed", hm_dns_parse_query(ptr, sizeof(ptr), &q) == -EBADMSG);
	CHECK("short query malformed", hm_dns_parse_query(query, 11, &q) == -EBADMSG);
	CHECK("query without its type malformed", hm_dns_parse_query(query, sizeof(query) - 2, &q) == -EBADMSG);
	memset(buf, 0, sizeof(buf));
	buf[5] = 1;
	buf[12] = 63;
	CHECK("name longer than 253 malformed",
	      (memset(buf + 12, 63, 5 * 64), buf[12 + 4 * 64] = 0, 1) &&
		      hm_dns_parse_query(buf, 12 + 4 * 64 + 5, &q) == -EBADMSG);

	CHECK("pattern: name", hm_dns_pattern_ok("example.org"));
	CHECK("pattern: *.name", hm_dns_pattern_ok("*.example.org"));
	CHECK("pattern: no empty label", !hm_dns_pattern_ok("example..org"));
	CHECK("pattern: no bare *", !hm_dns_pattern_ok("*") && !hm_dns_pattern_ok("*."));
	CHECK("pattern: no * inside", !hm_dns_pattern_ok("a.*.org"));
	CHECK("pattern: no upper case (callers lower-case)", !hm_dns_pattern_ok("Example.org"));
	CHECK("match: exact", hm_dns_match("example.org", "example.org") &&
				      !hm_dns_match("example.org", "www.example.org"));
	CHECK("match: *.name below it", hm_dns_match("*.example.org", "a.b.example.org") &&
						!hm_dns_match("*.example.org", "example.org") &&
						!hm_dns_match("*.example.org", "badexample.org"));
	T_EXIT();
}

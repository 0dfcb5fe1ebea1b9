// SPDX-License-Identifier: MIT
/* Lineage keys and the small decimal codecs the shim uses. */
#include <errno.h>
#include <stdint.h>
#include "lineage.h"
#include "test.h"

int main(void)
{
	char buf[HM_LINEAGE_MAX], small[4];
	uint64_t u;
	int64_t i;

	CHECK("root valid", hm_lineage_valid("1"));
	CHECK("child valid", hm_lineage_valid("1.3.1"));
	CHECK("empty invalid", !hm_lineage_valid(""));
	CHECK("null invalid", !hm_lineage_valid(NULL));
	CHECK("root 2 invalid", !hm_lineage_valid("2"));
	CHECK("zero child invalid", !hm_lineage_valid("1.0"));
	CHECK("leading zero invalid", !hm_lineage_valid("1.03"));
	CHECK("trailing dot invalid", !hm_lineage_valid("1.3."));
	CHECK("double dot invalid", !hm_lineage_valid("1..3"));
	CHECK("garbage invalid", !hm_lineage_valid("1.x"));
	CHECK("third child of root", !hm_lineage_child("1", 3, buf, sizeof(buf)) && !strcmp(buf, "1.3"));
	CHECK("first child of 1.3",
	      !hm_lineage_child("1.3", 1, buf, sizeof(buf)) && !strcmp(buf, "1.3.1"));
	CHECK("child 12 of 1.3.1",
	      !hm_lineage_child("1.3.1", 12, buf, sizeof(buf)) && !strcmp(buf, "1.3.1.12"));
	CHECK("child 0 refused", hm_lineage_child("1", 0, buf, sizeof(buf)) == -EINVAL);
	CHECK("bad parent refused", hm_lineage_child("7", 1, buf, sizeof(buf)) == -EINVAL);
	strcpy(small, "xx");
	CHECK("too long refused, out untouched",
	      hm_lineage_child("1.3", 10, small, sizeof(small)) == -ENAMETOOLONG &&
		      !strcmp(small, "xx"));
	CHECK("depth", hm_lineage_depth("1") == 1 && hm_lineage_depth("1.3.1") == 3 &&
			       hm_lineage_depth("x") == 0);
	{
		/* A chain of children stays valid until it no longer fits. */
		int r = 0, steps = 0;

		strcpy(buf, "1");
		while (!(r = hm_lineage_child(buf, 99, buf, sizeof(buf))))
			steps++;
		CHECK("deep chain ends with ENAMETOOLONG", r == -ENAMETOOLONG && steps > 50 &&
								    hm_lineage_valid(buf));
	}
	CHECK("fmt u64", hm_fmt_u64(buf, sizeof(buf), 18446744073709551615ULL) == 20 &&
				 !strcmp(buf, "18446744073709551615"));
	CHECK("fmt u64 zero", hm_fmt_u64(buf, sizeof(buf), 0) == 1 && !strcmp(buf, "0"));
	CHECK("fmt u64 no room", hm_fmt_u64(small, sizeof(small), 1234) == 0);
	CHECK("fmt i64 min", hm_fmt_i64(buf, sizeof(buf), INT64_MIN) == 20 &&
				     !strcmp(buf, "-9223372036854775808"));
	CHECK("parse u64", hm_parse_dec_u64("123,4", &u) && u == 123);
	CHECK("parse u64 overflow", !hm_parse_dec_u64("18446744073709551616", &u));
	CHECK("parse u64 none", !hm_parse_dec_u64(",", &u));
	CHECK("parse i64 negative", hm_parse_dec_i64("-5x", &i) && i == -5);
	CHECK("parse i64 min", hm_parse_dec_i64("-9223372036854775808", &i) && i == INT64_MIN);
	CHECK("parse i64 overflow", !hm_parse_dec_i64("9223372036854775808", &i));
	T_EXIT();
}

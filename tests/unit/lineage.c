// SPDX-License-Identifier: MIT
/* Lineage keys and the small decimal codecs the shim uses. */
#include <errno.h>
#include <stdint.h>
#include <string.h>
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
	/* Image identities: what runs and where, not how it was reached. */
	{
		uint64_t root = hm_proc_root(), py = hm_image_id(root, "python3.11", 1);
		uint64_t bash1 = hm_image_id(root, "bash", 1), bash2 = hm_image_id(root, "bash", 2);
		char exe[HM_EXE_MAX], runs[64];

		CHECK("image id deterministic", py == hm_image_id(hm_proc_root(), "python3.11", 1));
		CHECK("image id: executable, count and process all count",
		      py != hm_image_id(root, "python3.12", 1) && bash1 != bash2 &&
			      py != hm_image_id(hm_proc_child(py, 1), "python3.11", 1));
		CHECK("image id: a fork child's inherited image differs from an exec of the same",
		      hm_image_id(hm_proc_child(py, 1), "python3.11", 0) !=
			      hm_image_id(hm_proc_child(py, 1), "python3.11", 1));
		CHECK("process id: children of different images differ",
		      hm_proc_child(bash1, 1) != hm_proc_child(bash2, 1) &&
			      hm_proc_child(bash1, 1) != hm_proc_child(py, 1) &&
			      hm_proc_child(py, 1) != hm_proc_child(py, 2));
		CHECK("ids are never 0", root && py && hm_proc_child(0, 0));
		hm_exe_name("/root/.pyenv/versions/3.11.7/bin/python3.11", exe);
		CHECK("exe name: basename", !strcmp(exe, "python3.11") && hm_exe_valid(exe));
		hm_exe_name("/x/a b=c,d", exe);
		CHECK("exe name: odd bytes become _", !strcmp(exe, "a_b_c_d") && hm_exe_valid(exe));
		hm_exe_name("", exe);
		CHECK("exe name: none is ?", !strcmp(exe, "?") && hm_exe_valid(exe));
		CHECK("exe name: invalid names", !hm_exe_valid("a/b") && !hm_exe_valid("") &&
							  !hm_exe_valid("a=b") && !hm_exe_valid(NULL));
		CHECK("runs: absent is 0", hm_runs_get("", "bash") == 0 && hm_runs_get(NULL, "x") == 0);
		CHECK("runs: bump appends", !hm_runs_bump("", "env", runs, sizeof(runs)) &&
						    !strcmp(runs, "env=1"));
		CHECK("runs: bump counts and moves last",
		      !hm_runs_bump("bash=2,env=1", "bash", runs, sizeof(runs)) &&
			      !strcmp(runs, "env=1,bash=3") && hm_runs_get(runs, "bash") == 3 &&
			      hm_runs_get(runs, "env") == 1 && hm_runs_get(runs, "bas") == 0);
		CHECK("runs: too long refused",
		      hm_runs_bump("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=1", "b", runs,
				   sizeof(runs)) == -ENAMETOOLONG);
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

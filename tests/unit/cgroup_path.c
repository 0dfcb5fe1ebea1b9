// SPDX-License-Identifier: MIT
/* hm_cgroup_v2_path(): the cgroup v2 path from /proc/PID/cgroup, exactly
 * (and hm_cgroup_events_populated(), the key of cgroup.events):
 * only a whole line that starts with "0::" counts (issue 15, attack 6: a
 * cgroup-v1 directory named "x0::y" on a hybrid host). */
#include <errno.h>
#include "util.h"
#include "test.h"

static int parse(const char *text, char *out, size_t size)
{
	out[0] = 0;
	return hm_cgroup_v2_path(text, out, size);
}

int main(void)
{
	char p[64];

	CHECK("cgroup v2 only: the 0:: line",
	      parse("0::/hermetic/run-5\n", p, sizeof(p)) == 0 && !strcmp(p, "/hermetic/run-5"));
	CHECK("hybrid: v1 lines first, then the 0:: line",
	      parse("9:name=systemd:/user.slice\n1:cpu:/\n0::/hermetic/run-5\n", p, sizeof(p)) == 0 &&
		      !strcmp(p, "/hermetic/run-5"));
	CHECK("a v1 path holding 0:: is not the v2 path",
	      parse("9:name=systemd:/x0::y\n0::/hermetic/run-5\n", p, sizeof(p)) == 0 &&
		      !strcmp(p, "/hermetic/run-5"));
	CHECK("a v1 path holding 0::/ at its start is not the v2 path either",
	      parse("9:name=systemd:0::/outside\n0::/hermetic/run-5\n", p, sizeof(p)) == 0 &&
		      !strcmp(p, "/hermetic/run-5"));
	CHECK("a line of hierarchy 10 is not hierarchy 0",
	      parse("10::/x\n", p, sizeof(p)) == -ENOENT);
	CHECK("no 0:: line: -ENOENT", parse("9:name=systemd:/x0::y\n", p, sizeof(p)) == -ENOENT);
	CHECK("two 0:: lines: -EBADMSG", parse("0::/a\n0::/b\n", p, sizeof(p)) == -EBADMSG);
	CHECK("a cut-off 0:: line (a short read): -EBADMSG",
	      parse("1:cpu:/\n0::/hermetic/ru", p, sizeof(p)) == -EBADMSG);
	CHECK("a cut-off v1 line after the 0:: line: -EBADMSG",
	      parse("0::/hermetic/run-5\n1:cpu:/x", p, sizeof(p)) == -EBADMSG);
	CHECK("an empty or relative v2 path: -EBADMSG",
	      parse("0::\n", p, sizeof(p)) == -EBADMSG && parse("0::x\n", p, sizeof(p)) == -EBADMSG);
	CHECK("a path that does not fit: -ENAMETOOLONG",
	      parse("0::/hermetic/run-5\n", p, 8) == -ENAMETOOLONG);
	CHECK("the root cgroup", parse("0::/\n", p, sizeof(p)) == 0 && !strcmp(p, "/"));
	/* cgroup.events: "populated" matched at a line's start only. */
	CHECK("cgroup.events populated 1",
	      hm_cgroup_events_populated("populated 1\nfrozen 0\n") == 1);
	CHECK("cgroup.events populated 0, not first",
	      hm_cgroup_events_populated("frozen 0\npopulated 0\n") == 0);
	CHECK("cgroup.events without the key: -EBADMSG, not empty",
	      hm_cgroup_events_populated("frozen 0\n") == -EBADMSG &&
		      hm_cgroup_events_populated("") == -EBADMSG);
	CHECK("cgroup.events: a key inside a line does not count",
	      hm_cgroup_events_populated("xpopulated 0\n") == -EBADMSG);
	CHECK("cgroup.events: a value that is neither 0 nor 1: -EBADMSG",
	      hm_cgroup_events_populated("populated 10\n") == -EBADMSG &&
		      hm_cgroup_events_populated("populated \n") == -EBADMSG);
	T_EXIT();
}

// SPDX-License-Identifier: MIT
/* lib/procfs.c: a status field only from the line that starts with its
 * key; the start time of a live process, 0 for a gone one. */
#include <errno.h>
#include <unistd.h>
#include "util.h"
#include "procfs.h"
#include "test.h"

int main(void)
{
	const char *st = "Name:\tx\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t41\nPid:\t42\n"
			 "PPid:\t7\nUid:\t1000\t1000\t1000\t1000\n";
	char buf[4096];
	int v = -1;

	CHECK("Tgid", hm_status_int(st, "Tgid", &v) == 0 && v == 41);
	CHECK("Pid, not the tail of PPid", hm_status_int(st, "Pid", &v) == 0 && v == 42);
	CHECK("Uid: the first of four", hm_status_int(st, "Uid", &v) == 0 && v == 1000);
	CHECK("a name holding a key is not the key's line",
	      hm_status_int("Name:\tTgid:\t5\nTgid:\t9\n", "Tgid", &v) == 0 && v == 9);
	CHECK("the first line counts", hm_status_int("Tgid:\t3\n", "Tgid", &v) == 0 && v == 3);
	CHECK("the last line without a newline counts",
	      hm_status_int("Name:\tx\nTgid:\t4", "Tgid", &v) == 0 && v == 4);
	CHECK("no such line: -ENOENT", hm_status_int(st, "TracerPid", &v) == -ENOENT);
	CHECK("a prefix of a key is not the key", hm_status_int(st, "Tg", &v) == -ENOENT);
	CHECK("not a number: -EBADMSG", hm_status_int("Tgid:\tx\n", "Tgid", &v) == -EBADMSG);
	CHECK("our own status reads, and names us",
	      hm_proc_status(getpid(), buf, sizeof(buf)) > 0 && hm_status_int(buf, "Pid", &v) == 0 &&
		      v == getpid());
	CHECK("our own start time is not 0", hm_proc_start(getpid()) != 0);
	CHECK("a pid that cannot exist: 0", hm_proc_start(0x7fffffff) == 0);
	CHECK("our own state: running", hm_proc_state(getpid()) == 'R');
	CHECK("a pid that cannot exist: -ESRCH", hm_proc_state(0x7fffffff) == -ESRCH);
	T_EXIT();
}

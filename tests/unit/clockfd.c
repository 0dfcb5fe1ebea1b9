// SPDX-License-Identifier: MIT
/* The clock page as a descriptor (lib/clockfd.h): the variable's value, the
 * check that a number still holds the page, the layout check of a mapping. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/types.h>
#include "clockfd.h"
#include "hermetic/vclock.h"
#include "test.h"

/* A page as enroll makes one, or a file of size bytes without a header. */
static int make_page(size_t size, bool valid)
{
	int fd = memfd_create("t", MFD_CLOEXEC);
	struct hm_vclock *vc;

	if (fd < 0 || ftruncate(fd, size) < 0)
		return -1;
	if (!valid)
		return fd;
	vc = mmap(NULL, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vc == MAP_FAILED)
		return -1;
	vc->size = HM_VCLOCK_SIZE;
	vc->version = HM_VCLOCK_VERSION;
	vc->magic = HM_VCLOCK_MAGIC;
	vc->seed = 42;
	munmap(vc, HM_VCLOCK_SIZE);
	return fd;
}

int main(void)
{
	struct hm_clockfd c = { .fd = 100, .dev = 65024, .ino = 18446744073709551615ULL }, p, s;
	char buf[HM_CLOCKFD_STR];
	struct hm_vclock *vc;
	bool asked;
	int err, fd, other;

	hm_clockfd_format(&c, buf);
	CHECK("format fd:dev:ino", !strcmp(buf, "100:65024:18446744073709551615"));
	CHECK("parse round-trips", !hm_clockfd_parse(buf, &p) && p.fd == 100 && p.dev == 65024 &&
					   p.ino == c.ino);
	CHECK("parse refuses a path", hm_clockfd_parse("/run/hermetic/clock/run-1", &p) == -EINVAL);
	CHECK("parse refuses a missing part", hm_clockfd_parse("100:65024", &p) == -EINVAL);
	CHECK("parse refuses trailing bytes", hm_clockfd_parse("100:1:2x", &p) == -EINVAL);
	CHECK("parse refuses an overflow", hm_clockfd_parse("100:1:18446744073709551616", &p) == -EINVAL);
	CHECK("parse refuses a huge fd", hm_clockfd_parse("4294967296:1:2", &p) == -EINVAL);
	CHECK("parse refuses empty", hm_clockfd_parse("", &p) == -EINVAL && hm_clockfd_parse(NULL, &p) == -EINVAL);

	fd = make_page(HM_VCLOCK_SIZE, true);
	CHECK("stat a page", fd >= 0 && !hm_clockfd_stat(fd, &s) && s.fd == fd && s.ino);
	CHECK("check: the same file", !hm_clockfd_check(&s));
	vc = hm_clockpage_map(fd, &err);
	CHECK("map a page, its seed", vc && vc->seed == 42);
	if (vc)
		munmap(vc, HM_VCLOCK_SIZE);
	/* Another file at the number: not the page any more. */
	other = make_page(HM_VCLOCK_SIZE, true);
	CHECK("check: another file at the number is ESTALE",
	      other >= 0 && dup2(other, fd) == fd && hm_clockfd_check(&s) == -ESTALE);
	close(fd);
	CHECK("check: a closed number is EBADF", hm_clockfd_check(&s) == -EBADF);
	close(other);

	fd = make_page(4096, false);
	CHECK("map refuses a short file (it would fault)", !hm_clockpage_map(fd, &err) && err == -EBADMSG);
	close(fd);
	fd = make_page(HM_VCLOCK_SIZE, false);
	CHECK("map refuses a file without the header", !hm_clockpage_map(fd, &err) && err == -EBADMSG);
	close(fd);

	/* From the environment: no variable; a live descriptor; a closed one
	 * with no daemon to ask. */
	CHECK("from_env: no variable is ENOENT",
	      !hm_clockpage_from_env(NULL, NULL, &p, &asked, &err) && err == -ENOENT);
	fd = make_page(HM_VCLOCK_SIZE, true);
	hm_clockfd_stat(fd, &s);
	hm_clockfd_format(&s, buf);
	vc = hm_clockpage_from_env(buf, "/nonexistent/sock", &p, &asked, &err);
	CHECK("from_env: the inherited descriptor, not asked", vc && !asked && p.fd == fd && vc->seed == 42);
	if (vc)
		munmap(vc, HM_VCLOCK_SIZE);
	close(fd);
	CHECK("from_env: closed, and the daemon is not there",
	      !hm_clockpage_from_env(buf, "/nonexistent/sock", &p, &asked, &err) && err == -ENOENT);
	T_EXIT();
}

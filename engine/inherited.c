// SPDX-License-Identifier: MIT
/*
 * Network sockets a run would inherit from enroll's parent (issue 25,
 * attack 6). The cgroup hooks judge a socket by the cgroup it was made in,
 * fixed at socket(): an inet, inet6 or packet socket made outside the run
 * (a runner's leaked descriptor, a shell's `exec 5<>/dev/tcp/...`) sends and
 * connects wherever it likes from inside, and nothing is reported. So,
 * before the fork, enroll finds every such descriptor CMD would inherit (not
 * close-on-exec), and the child puts /dev/null in its place (the number
 * stays taken, so nothing else lands on it by surprise) unless the user
 * named it with --pass-fd N; each one is named on stderr and in the report.
 * Sockets handed to a run later, over a unix socket (SCM_RIGHTS), are the
 * unix hooks' to refuse: --no-unix (docs/containment.md).
 */
#include <dirent.h>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include "util.h"
#include "engine.h"
#include "enroll.h"

static const char *family_name(int fam)
{
	return fam == AF_INET ? "inet" : fam == AF_INET6 ? "inet6" : "packet";
}

static bool passed(const struct enroll *e, int fd)
{
	for (int i = 0; i < e->inh.n_pass; i++)
		if (e->inh.pass[i] == fd)
			return true;
	return false;
}

int enroll_find_foreign_sockets(struct enroll *e, struct eng_error *err)
{
	struct dirent *de;
	DIR *dir;

	e->inh.n_foreign = 0;
	e->inh.null_fd = -1;
	if (e->cfg.network == HM_NETWORK_OFF)
		return 0; /* nothing is enforced: nothing to get around */
	dir = opendir("/proc/self/fd");
	if (!dir)
		return eng_fail(err, errno, "cannot list enroll's descriptors (/proc/self/fd): %s",
				strerror(errno));
	while ((de = readdir(dir))) {
		int fd, fam, fl;
		socklen_t len = sizeof(fam);
		struct stat st;
		char *end;

		fd = (int)strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd == dirfd(dir))
			continue;
		/* Closed at exec: CMD never has it. */
		if ((fl = fcntl(fd, F_GETFD)) < 0 || (fl & FD_CLOEXEC))
			continue;
		if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &fam, &len) < 0 ||
		    (fam != AF_INET && fam != AF_INET6 && fam != AF_PACKET))
			continue;
		if (passed(e, fd))
			continue;
		if (e->inh.n_foreign == (int)ARRAY_SIZE(e->inh.foreign)) {
			closedir(dir);
			return eng_fail(err, EMFILE,
					"more than %zu network sockets inherited from enroll's "
					"parent: close them, or name them with --pass-fd",
					ARRAY_SIZE(e->inh.foreign));
		}
		e->inh.foreign[e->inh.n_foreign++] = fd;
		eng_warn("descriptor %d, an %s socket made outside the run, is /dev/null in the "
			 "run (the kernel would judge its traffic as outside the run's); "
			 "--pass-fd %d passes it",
			 fd, family_name(fam), fd);
	}
	closedir(dir);
	if (e->inh.n_foreign) {
		e->inh.null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (e->inh.null_fd < 0)
			return eng_fail(err, errno, "/dev/null: %s", strerror(errno));
	}
	return 0;
}

int enroll_drop_foreign_sockets(const struct enroll *e)
{
	/* In the child: dup2 clears close-on-exec on the new descriptor. */
	for (int i = 0; i < e->inh.n_foreign; i++)
		if (dup2(e->inh.null_fd, e->inh.foreign[i]) < 0)
			return -errno;
	return 0;
}

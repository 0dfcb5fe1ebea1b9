// SPDX-License-Identifier: MIT
/*
 * Who is asking: processes identified by pidfds, never by bare pid numbers.
 *
 * A pid number names whichever process holds it now; after the process it
 * named is reaped, a fork loop can make it name another. So the daemon
 * reads facts about a process (its parent, uid, cgroup) from /proc/<pid>
 * and only then checks that the pidfd's process is still not reaped: a
 * process that was alive (or a zombie) after the read held that pid during
 * the read, so the facts are its own. Every "cannot tell" is an answer of
 * its own, and callers fail closed on it.
 *
 * The peer of a connection is a pidfd from SO_PEERPIDFD (Linux 6.5). On
 * older kernels, pidfd_open() of SO_PEERCRED's pid as soon as the
 * connection is accepted, and the process must hold the other end of this
 * very socket (sock_diag for unix sockets, and /proc/<pid>/fd, which needs
 * CAP_SYS_PTRACE for a non-dumpable process or another user's, and
 * CAP_DAC_READ_SEARCH for a dumpable one of another user). Where either
 * cannot be asked, the peer is not identified: requests that need to know
 * where it runs are refused with the reason (fails closed). What remains on
 * such kernels: a connector that exits and whose pid is reused, by a
 * process that then gets a descriptor of the same connection, between its
 * connect() and the daemon's accept().
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include "util.h"
#include "daemon.h"
#include "procfs.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

int hmd_pidfd_alive(int pidfd)
{
	/* Signal 0 checks existence; a zombie still counts (its pid is
	 * still held, so nothing else can have it). EPERM (another user's
	 * process, without CAP_KILL) also means it exists: the permission is
	 * checked only after the process is found. */
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) == 0 || errno == EPERM)
		return 0;
	return -ESRCH;
}

/* A /proc/PID file of one record (status, cgroup, fdinfo: the kernel's
 * single_open files) in one read: such a file is rendered whole and the
 * first read hands out as much as fits, so the read until EOF that
 * hm_read_file_at() makes is a syscall spent on nothing. Returns the
 * length (size - 1: perhaps cut off; each caller decides) or -errno. Were a
 * read ever short, the callers fail closed on it: a cut last line, or no
 * "0::" line, is a "cannot tell" (hm_cgroup_v2_path), a missing key -ESRCH. */
static ssize_t read_once(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	do
		n = read(fd, buf, size - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		n = -errno;
	(void)close(fd); /* read-only: nothing to lose */
	if (n < 0)
		return n;
	buf[n] = 0;
	return n;
}

/*
 * The pid a pidfd refers to, from our own fdinfo ("Pid: -1" once reaped),
 * read once per descriptor: *cache keeps it (0: not read yet). Safe to
 * keep: a process's pid number never changes while it lives, and every
 * fact read under that number is used only when the pidfd's process is
 * seen alive after the read (hmd_pidfd_alive), so a number that came to
 * name another process after ours was reaped never vouches for anything.
 */
static int pidfd_pid(int pidfd, pid_t *cache, pid_t *ret)
{
	char path[64], buf[1024];
	ssize_t n;
	int pid;

	if (cache && *cache > 0) {
		*ret = *cache;
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	n = read_once(path, buf, sizeof(buf));
	if (n < 0 || hm_status_int(buf, "Pid", &pid) < 0)
		return -EBADF; /* not a pidfd */
	if (pid <= 0)
		return -ESRCH;
	if (cache)
		*cache = pid;
	*ret = pid;
	return 0;
}

/* Where pid runs: its cgroup v2 path into ret. Line by line: only the line
 * that starts with "0::" is the cgroup v2 path. On a hybrid host a v1 line
 * ("9:name=systemd:/x0::y") may hold "0::" in a directory name; a search
 * anywhere in the text would take its tail for the v2 path and a run's
 * process for an outside one. A file that does not fit, or without exactly
 * one such line, is a "cannot tell" (-EBADMSG), never an outside answer. */
static int proc_cgroup(pid_t pid, char *ret, size_t size)
{
	char path[64], cgbuf[8192];
	ssize_t n;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	n = read_once(path, cgbuf, sizeof(cgbuf));
	if (n < 0)
		return -ESRCH;
	if ((size_t)n >= sizeof(cgbuf) - 1)
		return -EBADMSG; /* perhaps cut off: the v2 line may be the part missing */
	err = hm_cgroup_v2_path(cgbuf, ret, size);
	if (err < 0)
		return err == -ENOENT ? -EBADMSG : err;
	return 0;
}

int hmd_pidfd_proc(int pidfd, pid_t *pid_cache, bool full, struct hmd_proc *ret)
{
	char path[64], buf[2048];
	struct hmd_proc pr = { .uid = (uid_t)-1 };
	int ppid, uid, err;

	if ((err = pidfd_pid(pidfd, pid_cache, &pr.pid)) < 0)
		return err;
	/* keyed lines: a field only from the line that starts with its key */
	if (full) {
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pr.pid);
		if (read_once(path, buf, sizeof(buf)) < 0 || hm_status_int(buf, "PPid", &ppid) < 0 ||
		    hm_status_int(buf, "Uid", &uid) < 0)
			return -ESRCH;
		pr.ppid = ppid;
		pr.uid = uid;
	}
	if ((err = proc_cgroup(pr.pid, pr.cgroup, sizeof(pr.cgroup))) < 0)
		return err;
	/* Only now: the process was not reaped after the reads, so they were
	 * about it and not about a process that took its pid. */
	if ((err = hmd_pidfd_alive(pidfd)) < 0)
		return err;
	*ret = pr;
	return 0;
}

int hmd_conn_in_run(struct hmd *d, struct hmd_conn *c, struct hmd_proc *ret)
{
	struct hmd_proc pr;
	int err;

	if (c->pidfd < 0)
		return -ESRCH;
	/* Where it runs is all the callers ask: no status read. */
	if ((err = hmd_pidfd_proc(c->pidfd, &c->pidfd_pid, false, &pr)) < 0)
		return err;
	if (ret)
		*ret = pr;
	return hmd_cgroup_in_subtree(&d->cg, pr.cgroup);
}

/* The inode of the socket at the other end of sock (sock_diag). */
static int peer_inode(int sock, uint32_t *ret)
{
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req r;
	} req = {
		.nh = { .nlmsg_len = sizeof(req), .nlmsg_type = SOCK_DIAG_BY_FAMILY,
			.nlmsg_flags = NLM_F_REQUEST },
		.r = { .sdiag_family = AF_UNIX, .udiag_states = -1, .udiag_show = UDIAG_SHOW_PEER,
		       .udiag_cookie = { -1U, -1U } },
	};
	union {
		char buf[1024];
		struct nlmsghdr align;
	} rep;
	_cleanup_close_ int nl = -1;
	struct nlmsghdr *nh;
	struct stat st;
	ssize_t n;

	if (fstat(sock, &st) < 0)
		return -errno;
	req.r.udiag_ino = st.st_ino;
	nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -errno;
	if (send(nl, &req, sizeof(req), 0) < 0)
		return -errno;
	n = recv(nl, rep.buf, sizeof(rep.buf), 0);
	if (n < 0)
		return -errno;
	for (nh = &rep.align; NLMSG_OK(nh, (size_t)n); nh = NLMSG_NEXT(nh, n)) {
		struct unix_diag_msg *m = NLMSG_DATA(nh);
		int len = nh->nlmsg_len - NLMSG_LENGTH(sizeof(*m));

		if (nh->nlmsg_type == NLMSG_ERROR) {
			/* -ENOENT: no sock_diag handler for AF_UNIX (unix_diag not
			 * loaded and not loadable), or no such socket. */
			const struct nlmsgerr *e = NLMSG_DATA(nh);

			return nh->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error < 0 ? e->error
											 : -EPROTO;
		}
		if (nh->nlmsg_type == NLMSG_DONE || len < 0)
			return -ENOENT;
		for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
			if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= (int)sizeof(uint32_t)) {
				memcpy(ret, RTA_DATA(a), sizeof(uint32_t));
				return 0;
			}
	}
	return -ENOENT;
}

/* Does pid hold a descriptor of socket inode ino? 1, 0, or -errno when
 * its descriptors cannot be seen. */
static int holds_socket(pid_t pid, uint32_t ino)
{
	char path[64], want[48], link[64];
	struct dirent *de;
	bool found = false;
	int denied = 0;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), "socket:[%u]", ino);
	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!found && (de = readdir(dir))) {
		ssize_t n = readlinkat(dirfd(dir), de->d_name, link, sizeof(link) - 1);

		if (n > 0) {
			link[n] = 0;
			found = !strcmp(link, want);
		} else if (n < 0 && (errno == EACCES || errno == EPERM)) {
			denied = -errno; /* the links are there but not ours to read */
		}
	}
	closedir(dir);
	return found ? 1 : denied ? denied : 0;
}

int hmd_peer_pidfd(int sock, pid_t pid, bool use_peerpidfd, char *why, size_t why_size)
{
	int pidfd = -1, k, err;
	socklen_t len = sizeof(pidfd);
	uint32_t ino;

	why[0] = 0;
	if (use_peerpidfd && getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) == 0 &&
	    pidfd >= 0) {
		fcntl(pidfd, F_SETFD, FD_CLOEXEC);
		return pidfd;
	}
	/* The checked fallback (kernels before 6.5, or --no-peerpidfd). The
	 * pid is SO_PEERCRED's, from connect() time: only the check that the
	 * process now holding it holds this very connection makes it the
	 * connector. Where that check cannot be made (no sock_diag: a unit
	 * without AF_NETLINK in RestrictAddressFamilies=, no unix_diag; or
	 * /proc/PID/fd unreadable: no CAP_SYS_PTRACE), the peer is not
	 * identified at all, and every request that needs to know where it
	 * runs refuses with why: fails closed, never "outside a run". */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	err = peer_inode(sock, &ino);
	if (err < 0) {
		snprintf(why, why_size, "no SO_PEERPIDFD (Linux 6.5) and no sock_diag (%s); %s",
			 strerror(-err),
			 err == -ENOENT ? "load unix_diag (modprobe unix_diag)"
					: "allow AF_NETLINK to hermeticd (RestrictAddressFamilies=)");
		close(pidfd);
		return -ENOPROTOOPT;
	}
	k = holds_socket(pid, ino);
	if (k < 0) {
		snprintf(why, why_size,
			 "no SO_PEERPIDFD (Linux 6.5) and /proc/%d/fd unreadable (%s); hermeticd "
			 "needs CAP_SYS_PTRACE, CAP_DAC_READ_SEARCH",
			 (int)pid, strerror(-k));
		close(pidfd);
		return -ENOPROTOOPT;
	}
	if (k == 0 || hmd_pidfd_alive(pidfd) < 0) {
		close(pidfd);
		return -ESRCH;
	}
	return pidfd;
}

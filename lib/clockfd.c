// SPDX-License-Identifier: MIT
/* The run's clock page as a descriptor: lib/clockfd.h. Raw syscalls only. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <linux/types.h>
#include "rawsys.h"
#include "clockfd.h"
#include "proto.h"
#include "hermetic/vclock.h"

_Static_assert(sizeof(struct hm_vclock) == HM_VCLOCK_HDR, "the page header is one page");

static const char *parse_u64(const char *s, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (p == s)
		return NULL;
	*ret = v;
	return p;
}

int hm_clockfd_parse(const char *v, struct hm_clockfd *ret)
{
	uint64_t fd, dev, ino;
	const char *p = v ? parse_u64(v, &fd) : NULL;

	if (!p || *p++ != ':' || !(p = parse_u64(p, &dev)) || *p++ != ':' ||
	    !(p = parse_u64(p, &ino)) || fd > 0x7fffffff)
		return -EINVAL;
	ret->closed = p[0] == ':' && p[1] == 'c' && !p[2];
	if (*p && !ret->closed)
		return -EINVAL;
	ret->fd = (int)fd;
	ret->dev = dev;
	ret->ino = ino;
	return 0;
}

static char *put_u64(char *p, uint64_t v)
{
	char tmp[21];
	int n = 0;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = tmp[--n];
	return p;
}

void hm_clockfd_format(const struct hm_clockfd *c, char *buf)
{
	char *p = put_u64(buf, (uint64_t)c->fd);

	*p++ = ':';
	p = put_u64(p, c->dev);
	*p++ = ':';
	p = put_u64(p, c->ino);
	if (c->closed) {
		*p++ = ':';
		*p++ = 'c';
	}
	*p = 0;
}

int hm_clockfd_stat(int fd, struct hm_clockfd *c)
{
	struct stat st;
	long r = hm_sys(SYS_fstat, fd, &st, 0);

	if (r < 0)
		return (int)r;
	c->fd = fd;
	c->closed = false;
	c->dev = st.st_dev;
	c->ino = st.st_ino;
	return 0;
}

int hm_clockfd_check(const struct hm_clockfd *c)
{
	struct hm_clockfd now = { .fd = -1 };
	int err;

	if (c->fd < 0)
		return -EBADF;
	err = hm_clockfd_stat(c->fd, &now);
	if (err < 0)
		return err;
	return now.dev == c->dev && now.ino == c->ino ? 0 : -ESTALE;
}

/* The page of fd, whose fstat is st. */
static struct hm_vclock *map_stat(int fd, const struct stat *st, int *ret_err)
{
	struct hm_vclock *vc;
	long r;

	/* A shorter file would fault (SIGBUS) when read past its end. */
	if (!S_ISREG(st->st_mode) || st->st_size < HM_VCLOCK_SIZE) {
		*ret_err = -EBADMSG;
		return NULL;
	}
	r = hm_sys6(SYS_mmap, 0, HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r < 0 && r > -4096) {
		*ret_err = (int)r;
		return NULL;
	}
	vc = (struct hm_vclock *)r;
	if (__atomic_load_n(&vc->magic, __ATOMIC_ACQUIRE) != HM_VCLOCK_MAGIC ||
	    vc->version != HM_VCLOCK_VERSION || vc->size != HM_VCLOCK_SIZE) {
		hm_sys(SYS_munmap, vc, HM_VCLOCK_SIZE, 0);
		*ret_err = -EBADMSG;
		return NULL;
	}
	return vc;
}

struct hm_vclock *hm_clockpage_map(int fd, int *ret_err)
{
	struct stat st;
	long r = hm_sys(SYS_fstat, fd, &st, 0);

	if (r < 0) {
		*ret_err = (int)r;
		return NULL;
	}
	return map_stat(fd, &st, ret_err);
}

/* One HM_REQ_RUN_CLOCK on connection s: the page descriptor, or -errno. */
static int ask_on(int s)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 4)];
		struct cmsghdr align;
	} ctl;
	struct {
		struct hm_hdr h;
		union {
			struct hm_run_ref ref;
			struct hm_error err;
		};
	} m = { .h = { .magic = HM_PROTO_MAGIC, .version = HM_PROTO_VERSION,
		       .type = HM_REQ_RUN_CLOCK, .len = 0, .seq = 1 } };
	struct iovec iov = { .iov_base = &m, .iov_len = sizeof(m.h) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int fd = -1;
	long r;

	do
		r = hm_sys(SYS_sendmsg, s, &msg, MSG_NOSIGNAL);
	while (r == -EINTR);
	if (r < 0)
		return (int)r;
	iov.iov_len = sizeof(m);
	msg.msg_control = ctl.buf;
	msg.msg_controllen = sizeof(ctl.buf);
	/*
	 * Wait for the answer without blocking: a process blocked on the
	 * daemon looks idle to the run's keeper, which could then move the
	 * run's clock to another process's deadline while hermeticd, an agent
	 * outside the run, works for us (a parent's communicate(timeout=3)
	 * expired before its child had started). Polling with sched_yield
	 * keeps this thread runnable, as it is in effect; the answer takes
	 * microseconds. After about 2 s of it (a daemon that is stuck) the
	 * wait blocks.
	 */
	for (long spins = 0;; spins++) {
		r = hm_sys(SYS_recvmsg, s, &msg, MSG_CMSG_CLOEXEC | (spins < 2000000 ? MSG_DONTWAIT : 0));
		if (r != -EAGAIN && r != -EINTR)
			break;
		if (r == -EAGAIN)
			hm_sys(SYS_sched_yield, 0, 0, 0);
	}
	if (r < 0)
		return (int)r;
	/* Keep the first descriptor, close any other (none is expected). */
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		for (size_t i = 0; i < (c->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
			int f;

			memcpy(&f, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = f;
			else
				hm_sys(SYS_close, f, 0, 0);
		}
	}
	if ((size_t)r < sizeof(m.h) || m.h.magic != HM_PROTO_MAGIC ||
	    m.h.version != HM_PROTO_VERSION || m.h.len != (size_t)r - sizeof(m.h)) {
		r = -EPROTO;
	} else if (m.h.type == HM_REP_ERROR && m.h.len == sizeof(m.err)) {
		r = m.err.err > 0 ? -m.err.err : -EPROTO;
	} else if (m.h.type != HM_REP_CLOCK || m.h.len != sizeof(m.ref) || fd < 0) {
		r = -EPROTO;
	} else {
		return fd;
	}
	if (fd >= 0)
		hm_sys(SYS_close, fd, 0, 0);
	return (int)r;
}

int hm_clockpage_ask(const char *socket_path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	long s, r;

	if (!socket_path || !*socket_path)
		socket_path = HM_DEFAULT_SOCKET;
	n = strlen(socket_path);
	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, socket_path, n + 1);
	s = hm_sys(SYS_socket, AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s < 0)
		return (int)s;
	r = hm_sys(SYS_connect, s, &sa, sizeof(sa));
	if (r == 0)
		r = ask_on((int)s);
	hm_sys(SYS_close, s, 0, 0);
	return (int)r;
}

struct hm_vclock *hm_clockpage_from_env(const char *clock_fd, const char *socket_path,
					struct hm_clockfd *ret, bool *ret_asked, int *ret_err)
{
	struct hm_clockfd c;
	struct hm_vclock *vc;
	struct stat st;
	int fd, err;

	*ret_asked = false;
	if (!clock_fd || !*clock_fd) {
		*ret_err = -ENOENT;
		return NULL;
	}
	err = hm_clockfd_parse(clock_fd, &c);
	if (err == 0 && c.fd >= 0 && hm_sys(SYS_fstat, c.fd, &st, 0) == 0 &&
	    (uint64_t)st.st_dev == c.dev && (uint64_t)st.st_ino == c.ino) {
		/* The page itself (hm_clockfd_check's test, with the stat the
		 * mapping needs too): the daemon would give the same one back. */
		if (!(vc = map_stat(c.fd, &st, ret_err)))
			return NULL;
		*ret = c;
		return vc;
	}
	/* Gone, or another file at that number: the daemon knows our run. */
	fd = hm_clockpage_ask(socket_path);
	if (fd < 0) {
		*ret_err = fd;
		return NULL;
	}
	if ((err = hm_clockfd_stat(fd, &c)) < 0 || !(vc = hm_clockpage_map(fd, &err))) {
		hm_sys(SYS_close, fd, 0, 0);
		*ret_err = err;
		return NULL;
	}
	*ret_asked = true;
	*ret = c;
	return vc;
}

static const char *env_lookup(char *const envp[], const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name, n) && envp[i][n] == '=')
			return envp[i] + n + 1;
	return NULL;
}

struct hm_vclock *hm_clockpage_from_envp(char *const envp[], struct hm_clockfd *ret,
					 bool *ret_asked, int *ret_err)
{
	return hm_clockpage_from_env(env_lookup(envp, "HERMETIC_CLOCK_FD"),
				     env_lookup(envp, "HERMETIC_SOCKET"), ret, ret_asked, ret_err);
}

// SPDX-License-Identifier: MIT
/*
 * The shim's part of a pinned machine identity (engine/identity.c plans it,
 * docs/identity.md): what the kernel cannot say for the run, said to
 * processes with the shim. HERMETIC_IDENTITY (kept across exec with the
 * other HERMETIC_* variables) names the axes; without it every wrapper
 * here is the real call and one branch.
 *
 *  - CPUs: sysconf(_SC_NPROCESSORS_ONLN/_CONF), get_nprocs(_conf) and
 *    sched_getaffinity say `cpus` (CPUs 0..cpus-1), unless the process
 *    narrowed its own affinity below what the run was given (then the
 *    real mask: it asked for it);
 *  - memory: sysconf(_SC_PHYS_PAGES/_AVPHYS_PAGES) and sysinfo;
 *  - names: uname's nodename, domainname and release, gethostname and
 *    getdomainname (the UTS namespace says the first two to everyone where
 *    enroll is root; the release only we can);
 *  - directory order: readdir and readdir64 read the whole directory at
 *    the first call and hand it out sorted by name, or in an order drawn
 *    from the run's seed (a keyed hash of each name, so the same names come
 *    in the same order on any filesystem), telldir/seekdir/rewinddir
 *    following it.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>
#include "shim.h"
#include "identity.h"

#define ID_ENV "HERMETIC_IDENTITY="

static struct {
	unsigned cpus, real_cpus;
	uint64_t memkb, dirkey;
	int dir;
	char hostname[65], domain[65], release[65];
	int (*sched_getaffinity)(pid_t, size_t, cpu_set_t *);
	long (*sysconf)(int);
	int (*uname)(struct utsname *);
	int (*sysinfo)(struct sysinfo *);
} id;

static pthread_once_t id_once = PTHREAD_ONCE_INIT;

static const char *field(const char *spec, const char *key, char *buf, size_t size)
{
	size_t klen = strlen(key);

	for (const char *p = spec; p && *p; p = strchr(p, ';') ? strchr(p, ';') + 1 : NULL) {
		if (!strncmp(p, key, klen) && p[klen] == '=') {
			size_t n = strcspn(p + klen + 1, ";");

			if (n >= size)
				n = size - 1;
			memcpy(buf, p + klen + 1, n);
			buf[n] = 0;
			return buf;
		}
	}
	return NULL;
}

static uint64_t field_u64(const char *spec, const char *key)
{
	char buf[32];
	uint64_t v = 0;

	if (field(spec, key, buf, sizeof(buf)))
		hm_parse_dec_u64(buf, &v);
	return v;
}

static void id_init(void)
{
	const char *spec = NULL;
	char buf[16];

	id.sched_getaffinity = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT,
									 "sched_getaffinity");
	id.sysconf = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
	id.uname = (int (*)(struct utsname *))dlsym(RTLD_NEXT, "uname");
	id.sysinfo = (int (*)(struct sysinfo *))dlsym(RTLD_NEXT, "sysinfo");
	/* the snapshot init.c took: a program that clears its environment
	 * keeps its identity */
	for (int i = 0; i < hm.nenv; i++)
		if (!strncmp(hm.env[i], ID_ENV, strlen(ID_ENV)))
			spec = hm.env[i] + strlen(ID_ENV);
	if (!spec)
		return;
	id.cpus = (unsigned)field_u64(spec, "cpus");
	id.real_cpus = (unsigned)field_u64(spec, "realcpus");
	id.memkb = field_u64(spec, "memkb");
	id.dirkey = field_u64(spec, "dirkey");
	(void)field(spec, "hostname", id.hostname, sizeof(id.hostname));
	(void)field(spec, "domain", id.domain, sizeof(id.domain));
	(void)field(spec, "release", id.release, sizeof(id.release));
	if (field(spec, "dir", buf, sizeof(buf)))
		id.dir = !strcmp(buf, "sorted") ? HM_DIR_SORTED : !strcmp(buf, "seeded") ? HM_DIR_SEEDED
										 : HM_DIR_HOST;
}

/* false: inside the shim's own initialisation, the real call only */
static bool id_ready(void)
{
	if (!hm_ready())
		return false;
	pthread_once(&id_once, id_init);
	return true;
}

/* dirorder.c: the order readdir follows (HM_DIR_HOST: the filesystem's)
 * and its key. */
int hm_id_dir_order(uint64_t *ret_key)
{
	if (!id_ready())
		return HM_DIR_HOST;
	*ret_key = id.dirkey;
	return id.dir;
}

/* ---- CPUs and memory ---- */

HM_EXPORT long sysconf(int name)
{
	long page;

	if (!id_ready()) {
		long (*real)(int) = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");

		return real ? real(name) : -1;
	}
	if (id.cpus && (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF))
		return (long)id.cpus;
	if (id.memkb && (name == _SC_PHYS_PAGES || name == _SC_AVPHYS_PAGES)) {
		page = id.sysconf(_SC_PAGESIZE);
		if (page > 0)
			return (long)(id.memkb * 1024 / (uint64_t)page / (name == _SC_PHYS_PAGES ? 1 : 4) *
				      (name == _SC_PHYS_PAGES ? 1 : 3));
	}
	return id.sysconf(name);
}

HM_EXPORT int get_nprocs(void)
{
	if (id_ready() && id.cpus)
		return (int)id.cpus;
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

HM_EXPORT int get_nprocs_conf(void)
{
	if (id_ready() && id.cpus)
		return (int)id.cpus;
	return (int)sysconf(_SC_NPROCESSORS_CONF);
}

HM_EXPORT int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *mask)
{
	int r, err;

	if (!id_ready() || !id.sched_getaffinity) {
		/* the raw call, as libc makes it: bytes written, the rest zeroed */
		long n = hm_sys(SYS_sched_getaffinity, pid, size, mask);

		if (n < 0)
			return (int)hm_sys_errno(n);
		memset((char *)mask + n, 0, size - (size_t)n);
		(void)hm_sched_affinity(pid, size, mask);
		return 0;
	}
	r = id.sched_getaffinity(pid, size, mask);
	err = errno;
	/* --sched pinned the run: its CPUs before that (sched.c), and then
	 * the identity's count as without --sched. */
	if (r == 0)
		(void)hm_sched_affinity(pid, size, mask);
	if (r == 0 && id.cpus && (unsigned)CPU_COUNT_S(size, mask) >= id.real_cpus &&
	    id.cpus <= size * 8) {
		CPU_ZERO_S(size, mask);
		for (unsigned i = 0; i < id.cpus; i++)
			CPU_SET_S(i, size, mask);
	}
	errno = err;
	return r;
}

HM_EXPORT int sysinfo(struct sysinfo *info)
{
	int r;

	if (!id_ready() || !id.sysinfo)
		return (int)hm_sys_errno(hm_sys(SYS_sysinfo, info, 0, 0));
	r = id.sysinfo(info);
	if (r == 0 && id.memkb && info->mem_unit) {
		info->totalram = id.memkb * 1024 / info->mem_unit;
		info->freeram = info->totalram / 4 * 3;
	}
	return r;
}

/* ---- names ---- */

static void put(char *dst, size_t size, const char *v)
{
	if (v[0])
		snprintf(dst, size, "%s", v);
}

HM_EXPORT int uname(struct utsname *u)
{
	int r;

	if (!id_ready() || !id.uname)
		return (int)hm_sys_errno(hm_sys(SYS_uname, u, 0, 0));
	r = id.uname(u);
	if (r == 0) {
		put(u->nodename, sizeof(u->nodename), id.hostname);
		put(u->domainname, sizeof(u->domainname), id.domain);
		put(u->release, sizeof(u->release), id.release);
	}
	return r;
}

/* gethostname and getdomainname: glibc's call uname inside libc, past our
 * wrapper; their contract (ENAMETOOLONG when the name does not fit). */
static int copy_name(const char *v, char *name, size_t len)
{
	size_t n = strlen(v);

	if (n + 1 > len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(name, v, n + 1);
	return 0;
}

HM_EXPORT int gethostname(char *name, size_t len)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -1;
	return copy_name(u.nodename, name, len);
}

HM_EXPORT int getdomainname(char *name, size_t len)
{
	struct utsname u;

	if (uname(&u) < 0)
		return -1;
	return copy_name(u.domainname, name, len);
}

// SPDX-License-Identifier: MIT
/*
 * --identity host|fixed|FILE and --dir-order: what the run is told about the
 * machine (docs/identity.md). This file parses the choice and plans it
 * before the fork; identity_files.c writes the files the child binds,
 * identity_child.c applies the plan in the child, preload/identity.c is the
 * shim's part.
 *
 * `fixed` is one documented machine: 2 CPUs (a real affinity mask on every
 * machine with two, so that static and Go binaries see it from the kernel
 * too), hostname "hermetic", domain "(none)", kernel release "6.1.0"
 * (Debian 12's), UTC, C.UTF-8, umask 022, 1024 descriptors and 4 GiB.
 */
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "util.h"
#include "identity.h"

static const struct identity_axes fixed_axes = {
	.cpus = 2,
	.hostname = "hermetic",
	.domain = "(none)",
	.release = "6.1.0",
	.tz = "UTC",
	.locale = "C.UTF-8",
	.umask = 022,
	.nofile = 1024,
	.memory_kb = 4ULL << 20,
};

static bool name_ok(const char *v, size_t max)
{
	size_t n = strlen(v);

	if (n == 0 || n >= max)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isgraph((unsigned char)v[i]) || v[i] == ',' || v[i] == ';')
			return false;
	return true;
}

/* A zone name is a path under /usr/share/zoneinfo: no "..", no leading '/'. */
static bool zone_ok(const char *v)
{
	return name_ok(v, sizeof(((struct identity_axes *)0)->tz)) && v[0] != '/' &&
	       !strstr(v, "..");
}

static int set_u64(const char *v, uint64_t min, uint64_t max, uint64_t *ret)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || end == v || *end || x < min || x > max || v[0] == '-')
		return -EINVAL;
	*ret = x;
	return 0;
}

/* One KEY=VALUE into ax. */
static int set_axis(struct identity_axes *ax, const char *key, const char *v, struct eng_error *err)
{
	uint64_t x;

	if (!strcmp(key, "cpus")) {
		if (set_u64(v, 1, CPU_SETSIZE, &x) < 0)
			return eng_fail(err, EINVAL, "cpus=%s: expected 1 to %d", v, CPU_SETSIZE);
		ax->cpus = (unsigned)x;
	} else if (!strcmp(key, "hostname") || !strcmp(key, "domain") || !strcmp(key, "release")) {
		char *dst = key[0] == 'h' ? ax->hostname : key[0] == 'd' ? ax->domain : ax->release;

		if (!name_ok(v, IDENTITY_NAME_MAX))
			return eng_fail(err, EINVAL, "%s=%s: expected 1 to %d printable characters "
					"without ',' or ';'", key, v, IDENTITY_NAME_MAX - 1);
		snprintf(dst, IDENTITY_NAME_MAX, "%s", v);
	} else if (!strcmp(key, "tz")) {
		if (!zone_ok(v))
			return eng_fail(err, EINVAL, "tz=%s: expected a zone name such as UTC or "
					"Asia/Tokyo", v);
		snprintf(ax->tz, sizeof(ax->tz), "%s", v);
	} else if (!strcmp(key, "locale")) {
		if (!name_ok(v, sizeof(ax->locale)))
			return eng_fail(err, EINVAL, "locale=%s: expected a locale name", v);
		snprintf(ax->locale, sizeof(ax->locale), "%s", v);
	} else if (!strcmp(key, "umask")) {
		if (set_u64(v, 0, 0777, &x) < 0 || v[0] != '0')
			return eng_fail(err, EINVAL, "umask=%s: expected an octal mask such as 022", v);
		ax->umask = (int)x;
	} else if (!strcmp(key, "nofile")) {
		if (set_u64(v, 16, 1U << 20, &x) < 0)
			return eng_fail(err, EINVAL, "nofile=%s: expected 16 to %u", v, 1U << 20);
		ax->nofile = x;
	} else if (!strcmp(key, "memory")) {
		/* MiB: what a person writes; kB is what meminfo says */
		if (set_u64(v, 64, 1ULL << 32, &x) < 0)
			return eng_fail(err, EINVAL, "memory=%s: expected MiB, 64 or more", v);
		ax->memory_kb = x * 1024;
	} else {
		return eng_fail(err, EINVAL, "unknown axis '%s' (cpus, hostname, domain, release, tz, "
				"locale, umask, nofile, memory)", key);
	}
	return 0;
}

/* KEY=VALUE items separated by any of seps; '#' starts a comment line. */
static int parse_items(struct identity_axes *ax, char *s, const char *seps, struct eng_error *err)
{
	char *save, *t;
	int r;

	for (t = strtok_r(s, seps, &save); t; t = strtok_r(NULL, seps, &save)) {
		char *eq, *k, *v;

		while (isspace((unsigned char)*t))
			t++;
		if (!*t || *t == '#')
			continue;
		eq = strchr(t, '=');
		if (!eq)
			return eng_fail(err, EINVAL, "'%s': expected KEY=VALUE", t);
		*eq = 0;
		k = t;
		v = eq + 1;
		for (char *e = v + strlen(v); e > v && isspace((unsigned char)e[-1]);)
			*--e = 0;
		for (char *e = eq; e > k && isspace((unsigned char)e[-1]);)
			*--e = 0;
		while (isspace((unsigned char)*v))
			v++;
		if ((r = set_axis(ax, k, v, err)) < 0)
			return r;
	}
	return 0;
}

static int read_file(const char *path, char *buf, size_t size, struct eng_error *err)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;
	ssize_t n;

	if (fd < 0)
		return eng_fail(err, errno, "Failed to open identity file '%s': %s", path,
				strerror(errno));
	while ((n = read(fd, buf + len, size - 1 - len)) > 0)
		if ((len += (size_t)n) == size - 1)
			return eng_fail(err, EFBIG, "identity file '%s': longer than %zu bytes", path,
					size - 1);
	if (n < 0)
		return eng_fail(err, errno, "Failed to read identity file '%s': %s", path,
				strerror(errno));
	buf[len] = 0;
	return 0;
}

int identity_parse(struct run_identity *id, const char *arg, struct eng_error *err)
{
	char buf[4096];
	int r;

	memset(&id->ax, 0, sizeof(id->ax));
	id->ax.umask = -1;
	id->mode = arg;
	if (!strcmp(arg, "host"))
		return 0;
	if (!strcmp(arg, "fixed")) {
		id->ax = fixed_axes;
		return 0;
	}
	/* A spec (the journal's form) has '=' and names no file here. */
	if (strchr(arg, '=') && access(arg, F_OK) < 0) {
		if (strlen(arg) >= sizeof(buf))
			return eng_fail(err, E2BIG, "identity spec too long");
		snprintf(buf, sizeof(buf), "%s", arg);
		return parse_items(&id->ax, buf, ",", err);
	}
	if ((r = read_file(arg, buf, sizeof(buf), err)) < 0)
		return r;
	return parse_items(&id->ax, buf, "\n", err);
}

int identity_parse_dir_order(struct run_identity *id, const char *arg, struct eng_error *err)
{
	if (!strcmp(arg, "host"))
		id->dir = IDENTITY_DIR_HOST;
	else if (!strcmp(arg, "sorted"))
		id->dir = IDENTITY_DIR_SORTED;
	else if (!strcmp(arg, "seeded"))
		id->dir = IDENTITY_DIR_SEEDED;
	else
		return eng_fail(err, EINVAL, "expected sorted, seeded or host");
	return 0;
}

static bool axes_pinned(const struct identity_axes *ax)
{
	return ax->cpus || ax->hostname[0] || ax->domain[0] || ax->release[0] || ax->tz[0] ||
	       ax->locale[0] || ax->umask >= 0 || ax->nofile || ax->memory_kb;
}

bool identity_active(const struct run_identity *id)
{
	return id->dir != IDENTITY_DIR_HOST || (id->mode && axes_pinned(&id->ax));
}

void identity_spec(const struct run_identity *id, char *buf, size_t size)
{
	const struct identity_axes *ax = &id->ax;
	size_t len = 0;

#define ADD(...)                                                                                   \
	do {                                                                                       \
		int n_ = snprintf(buf + len, size - len, "%s", len ? "," : "");                    \
		if (n_ > 0 && (size_t)n_ < size - len)                                             \
			len += (size_t)n_;                                                         \
		n_ = snprintf(buf + len, size - len, __VA_ARGS__);                                 \
		if (n_ > 0 && (size_t)n_ < size - len)                                             \
			len += (size_t)n_;                                                         \
	} while (0)
	buf[0] = 0;
	if (ax->cpus)
		ADD("cpus=%u", ax->cpus);
	if (ax->hostname[0])
		ADD("hostname=%s", ax->hostname);
	if (ax->domain[0])
		ADD("domain=%s", ax->domain);
	if (ax->release[0])
		ADD("release=%s", ax->release);
	if (ax->tz[0])
		ADD("tz=%s", ax->tz);
	if (ax->locale[0])
		ADD("locale=%s", ax->locale);
	if (ax->umask >= 0)
		ADD("umask=0%o", (unsigned)ax->umask);
	if (ax->nofile)
		ADD("nofile=%" PRIu64, ax->nofile);
	if (ax->memory_kb)
		ADD("memory=%" PRIu64, ax->memory_kb / 1024);
#undef ADD
}

static bool have_sys_resource(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	return syscall(SYS_capget, &h, d) == 0 &&
	       (d[CAP_SYS_RESOURCE / 32].effective & (1u << (CAP_SYS_RESOURCE % 32)));
}

void identity_note_missing(struct run_identity *id, const char *what)
{
	size_t len = strlen(id->missing);

	snprintf(id->missing + len, sizeof(id->missing) - len, "%s%s", len ? "; " : "", what);
}

/* The first `cpus` CPUs this process may be given (the cpuset's, not the
 * affinity enroll inherited: `taskset 1 hermetic ...` still gets two). */
static void plan_affinity(struct run_identity *id)
{
	cpu_set_t all;
	unsigned n = 0;

	CPU_ZERO(&id->mask);
	/* All bits: the kernel keeps those the cpuset allows. */
	CPU_ZERO(&all);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &all);
	for (int i = 0; i < CPU_SETSIZE && n < id->ax.cpus; i++) {
		char path[64];

		snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", i);
		if (i > 0 && access(path, F_OK) == 0) {
			char c = '0';
			_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

			if (fd < 0 || read(fd, &c, 1) != 1 || c != '1')
				continue;
		} else if (i > 0) {
			char dir[64];

			snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu%d", i);
			if (access(dir, F_OK) != 0)
				break;
		}
		CPU_SET(i, &id->mask);
		n++;
	}
	id->set_mask = n > 0;
	/* more than the machine has: the shim and the supervisor say it */
	id->more_cpus = n < id->ax.cpus;
}

static void plan_env(struct run_identity *id)
{
	const struct identity_axes *ax = &id->ax;
	size_t len = 0;

	/* A zone name in TZ: glibc, musl, Go, the JVM and ICU all read it
	 * from zoneinfo (the ":ZONE" form some of them do not take). */
	if (ax->tz[0])
		(void)setenv("TZ", ax->tz, 1);
	if (ax->locale[0]) {
		(void)setenv("LANG", ax->locale, 1);
		(void)setenv("LC_ALL", ax->locale, 1);
		(void)unsetenv("LANGUAGE");
	}
#define ADD(...)                                                                                   \
	do {                                                                                       \
		int n_ = snprintf(id->env + len, sizeof(id->env) - len, __VA_ARGS__);              \
		if (n_ > 0 && (size_t)n_ < sizeof(id->env) - len)                                  \
			len += (size_t)n_;                                                         \
	} while (0)
	id->env[0] = 0;
	if (ax->cpus)
		ADD("cpus=%u;realcpus=%d;", ax->cpus, id->set_mask ? CPU_COUNT(&id->mask) : 0);
	if (ax->memory_kb)
		ADD("memkb=%" PRIu64 ";", ax->memory_kb);
	if (ax->hostname[0])
		ADD("hostname=%s;", ax->hostname);
	if (ax->domain[0])
		ADD("domain=%s;", ax->domain);
	if (ax->release[0])
		ADD("release=%s;", ax->release);
	if (id->dir != IDENTITY_DIR_HOST)
		ADD("dir=%s;dirkey=%" PRIu64 ";", id->dir == IDENTITY_DIR_SORTED ? "sorted" : "seeded",
		    id->dir_key);
#undef ADD
	(void)setenv(HM_ENV_IDENTITY, id->env, 1);
}

int identity_prepare(struct run_identity *id, uint64_t seed, bool ns, struct eng_error *err)
{
	int r;

	/* The order's key is a function of the seed, not the seed itself:
	 * the environment is readable by every process (SplitMix64's finaliser). */
	uint64_t z = seed + 0x9e3779b97f4a7c15ULL + 0x6469726f72646572ULL; /* "dirorder" */

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	id->dir_key = z ^ (z >> 31);
	id->prepared = true;
	id->missing[0] = 0;
	id->ns = ns && (id->ax.cpus || id->ax.hostname[0] || id->ax.domain[0] || id->ax.tz[0] ||
			id->ax.memory_kb);
	if (id->ax.cpus)
		plan_affinity(id);
	if (id->ax.tz[0]) {
		struct stat st;

		snprintf(id->zone_file, sizeof(id->zone_file), "/usr/share/zoneinfo/%s", id->ax.tz);
		if (stat(id->zone_file, &st) < 0 || !S_ISREG(st.st_mode))
			return eng_fail(err, ENOENT, "time zone '%s': no %s here", id->ax.tz,
					id->zone_file);
	}
	if (!ns && (id->ax.hostname[0] || id->ax.domain[0] || id->ax.cpus || id->ax.memory_kb))
		identity_note_missing(id, "no mount and UTS namespace here (root with CAP_SYS_ADMIN "
					  "has one): the hostname and the /proc and /sys files are "
					  "the machine's; uname, sysconf and sysinfo say the identity "
					  "through the shim");
	if (id->ax.nofile) {
		struct rlimit rl;

		/* raising a hard limit needs CAP_SYS_RESOURCE (identity_child.c) */
		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < IDENTITY_NOFILE_HARD &&
		    !have_sys_resource())
			identity_note_missing(id, "the hard descriptor limit: the machine's "
						  "(raising it to 524288 needs CAP_SYS_RESOURCE)");
	}
	if (id->ns) {
		_cleanup_close_ int fd = -1;

		if ((r = run_tmpdir_make(&id->dir_files, "hermetic-identity", "the identity files",
					 err)) < 0)
			return r;
		fd = open(id->dir_files.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0)
			return eng_fail(err, errno, "Failed to open '%s': %s", id->dir_files.path,
					strerror(errno));
		if ((r = identity_write_files(id, fd, err)) < 0)
			return r;
	}
	plan_env(id);
	return 0;
}

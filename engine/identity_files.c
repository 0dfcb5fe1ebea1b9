// SPDX-License-Identifier: MIT
/*
 * The files a pinned identity binds over the machine's in the run's mount
 * namespace (identity_child.c), written before the fork into the identity's
 * private directory: /proc/cpuinfo and /proc/stat with `cpus` processors,
 * /proc/meminfo with the memory size, the CPU lists of
 * /sys/devices/system/cpu/{online,possible,present}, /etc/hostname.
 *
 * Each is the machine's own text, read line by line and changed only where
 * an axis says: a program that parses more than the count (the model name,
 * the flags, the interrupt counters) still finds them. What they hold is a
 * snapshot taken at the run's start: /proc/stat's counters do not move.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include "util.h"
#include "identity.h"

static bool starts(const char *line, const char *key)
{
	return !strncmp(line, key, strlen(key));
}

static int create_at(int dir_fd, const char *name, FILE **ret, struct eng_error *err)
{
	int fd = openat(dir_fd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0444);

	if (fd < 0)
		return eng_fail(err, errno, "Failed to create identity file '%s': %s", name,
				strerror(errno));
	*ret = fdopen(fd, "w");
	if (!*ret) {
		int e = errno;

		close(fd);
		return eng_fail(err, e, "Failed to create identity file '%s': %s", name, strerror(e));
	}
	return 0;
}

static int finish(FILE *f, const char *name, struct eng_error *err)
{
	bool bad = ferror(f);

	if (fclose(f) != 0 || bad)
		return eng_fail(err, EIO, "Failed to write identity file '%s'", name);
	return 0;
}

/* The first processor's block, repeated with each processor's numbers. */
static int write_cpuinfo(const struct run_identity *id, int dir_fd, struct eng_error *err)
{
	_cleanup_fclose_ FILE *in = fopen("/proc/cpuinfo", "re");
	char block[64][512];
	unsigned n = 0, cpus = id->ax.cpus;
	FILE *out;
	int r;

	if (!in)
		return eng_fail(err, errno, "Failed to open /proc/cpuinfo: %s", strerror(errno));
	while (n < ARRAY_SIZE(block) && fgets(block[n], sizeof(block[n]), in) && block[n][0] != '\n')
		n++;
	if ((r = create_at(dir_fd, "cpuinfo", &out, err)) < 0)
		return r;
	for (unsigned c = 0; c < cpus; c++) {
		for (unsigned i = 0; i < n; i++) {
			const char *l = block[i];

			if (starts(l, "processor\t"))
				fprintf(out, "processor\t: %u\n", c);
			else if (starts(l, "siblings\t"))
				fprintf(out, "siblings\t: %u\n", cpus);
			else if (starts(l, "core id\t"))
				fprintf(out, "core id\t\t: %u\n", c);
			else if (starts(l, "cpu cores\t"))
				fprintf(out, "cpu cores\t: %u\n", cpus);
			else if (starts(l, "apicid\t"))
				fprintf(out, "apicid\t\t: %u\n", c);
			else if (starts(l, "initial apicid\t"))
				fprintf(out, "initial apicid\t: %u\n", c);
			else
				fputs(l, out);
		}
		fputc('\n', out);
	}
	return finish(out, "cpuinfo", err);
}

/* "cpu" keeps the total; cpu0..cpuN-1 (the first one's line repeated where
 * the machine has fewer); the machine's other cpuN lines go. */
static int write_stat(const struct run_identity *id, int dir_fd, struct eng_error *err)
{
	_cleanup_fclose_ FILE *in = fopen("/proc/stat", "re");
	char line[8192], first[512] = "";
	unsigned seen = 0;
	FILE *out;
	int r;

	if (!in)
		return eng_fail(err, errno, "Failed to open /proc/stat: %s", strerror(errno));
	if ((r = create_at(dir_fd, "stat", &out, err)) < 0)
		return r;
	while (fgets(line, sizeof(line), in)) {
		if (starts(line, "cpu") && line[3] >= '0' && line[3] <= '9') {
			const char *rest = line + 3 + strspn(line + 3, "0123456789");

			if (!first[0])
				snprintf(first, sizeof(first), "%s", rest);
			if (seen < id->ax.cpus)
				fprintf(out, "cpu%u%s", seen++, rest);
			continue;
		}
		if (seen && seen < id->ax.cpus) /* the first line after the cpuN lines */
			for (; seen < id->ax.cpus; seen++)
				fprintf(out, "cpu%u%s", seen, first);
		fputs(line, out);
	}
	return finish(out, "stat", err);
}

static int write_meminfo(const struct run_identity *id, int dir_fd, struct eng_error *err)
{
	_cleanup_fclose_ FILE *in = fopen("/proc/meminfo", "re");
	uint64_t kb = id->ax.memory_kb;
	char line[512];
	FILE *out;
	int r;

	if (!in)
		return eng_fail(err, errno, "Failed to open /proc/meminfo: %s", strerror(errno));
	if ((r = create_at(dir_fd, "meminfo", &out, err)) < 0)
		return r;
	while (fgets(line, sizeof(line), in)) {
		/* free and available: three quarters, as on a machine at rest */
		if (starts(line, "MemTotal:"))
			fprintf(out, "MemTotal:       %8" PRIu64 " kB\n", kb);
		else if (starts(line, "MemFree:"))
			fprintf(out, "MemFree:        %8" PRIu64 " kB\n", kb / 4 * 3);
		else if (starts(line, "MemAvailable:"))
			fprintf(out, "MemAvailable:   %8" PRIu64 " kB\n", kb / 4 * 3);
		else
			fputs(line, out);
	}
	return finish(out, "meminfo", err);
}

static int write_text(int dir_fd, const char *name, const char *text, struct eng_error *err)
{
	FILE *out;
	int r;

	if ((r = create_at(dir_fd, name, &out, err)) < 0)
		return r;
	fputs(text, out);
	return finish(out, name, err);
}

int identity_write_files(const struct run_identity *id, int dir_fd, struct eng_error *err)
{
	char buf[128];
	int r;

	if (id->ax.cpus) {
		if (id->ax.cpus == 1)
			snprintf(buf, sizeof(buf), "0\n");
		else
			snprintf(buf, sizeof(buf), "0-%u\n", id->ax.cpus - 1);
		if ((r = write_text(dir_fd, "cpulist", buf, err)) < 0 ||
		    (r = write_cpuinfo(id, dir_fd, err)) < 0 || (r = write_stat(id, dir_fd, err)) < 0)
			return r;
	}
	if (id->ax.memory_kb && (r = write_meminfo(id, dir_fd, err)) < 0)
		return r;
	if (id->ax.hostname[0]) {
		snprintf(buf, sizeof(buf), "%s\n", id->ax.hostname);
		if ((r = write_text(dir_fd, "hostname", buf, err)) < 0)
			return r;
	}
	return 0;
}

// SPDX-License-Identifier: MIT
/* --identity's parsing (engine/identity.c): host pins nothing, fixed is
 * the documented machine, a spec and a FILE name axes, the spec a journal
 * keeps reads back as the same identity, bad values are refused with the
 * axis named; and the files bound over /proc say what the axes say. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include "util.h"
#include "identity.h"
#include "test.h"

static bool parses(const char *arg, char *spec, size_t size)
{
	struct run_identity id = { 0 };
	struct eng_error err;

	if (identity_parse(&id, arg, &err) < 0)
		return false;
	identity_spec(&id, spec, size);
	return true;
}

static bool refused(const char *arg, const char *words)
{
	struct run_identity id = { 0 };
	struct eng_error err = { 0 };

	return identity_parse(&id, arg, &err) == -EINVAL && strstr(err.msg, words);
}

static int count_lines(const char *path, const char *prefix)
{
	FILE *f = fopen(path, "re");
	char line[4096];
	int n = 0;

	while (f && fgets(line, sizeof(line), f))
		n += !strncmp(line, prefix, strlen(prefix));
	if (f)
		fclose(f);
	return n;
}

int main(void)
{
	struct run_identity id = { 0 };
	struct eng_error err;
	char spec[1024], again[1024], dir[] = "/tmp/hm-identity-unit.XXXXXX", path[256];
	FILE *f;
	int fd;

	CHECK("host pins nothing", parses("host", spec, sizeof(spec)) && !spec[0]);
	CHECK("fixed is the documented machine",
	      parses("fixed", spec, sizeof(spec)) &&
		      !strcmp(spec, "cpus=2,hostname=hermetic,domain=(none),release=6.1.0,tz=UTC,"
				    "locale=C.UTF-8,umask=022,nofile=1024,memory=4096"));
	CHECK("a spec reads back as itself", parses(spec, again, sizeof(again)) && !strcmp(spec, again));
	CHECK("a spec names only its axes",
	      parses("tz=Asia/Tokyo,cpus=1", spec, sizeof(spec)) && !strcmp(spec, "cpus=1,tz=Asia/Tokyo"));
	CHECK("cpus=0 is refused, named", refused("cpus=0", "cpus=0"));
	CHECK("a zone that leaves zoneinfo is refused", refused("tz=../../etc/passwd", "tz="));
	CHECK("umask must be octal", refused("umask=22", "umask"));
	CHECK("an unknown axis is refused, named", refused("cores=4", "cores"));
	CHECK("a hostname with a space is refused", refused("hostname=a b", "hostname"));
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/ci.identity", dir);
	f = fopen(path, "w");
	fputs("# a runner\n cpus = 4 \nhostname=runner\n\nmemory=16384\n", f);
	fclose(f);
	CHECK("a FILE of KEY=VALUE lines, comments and blanks",
	      parses(path, spec, sizeof(spec)) && !strcmp(spec, "cpus=4,hostname=runner,memory=16384"));
	CHECK("--dir-order takes sorted, seeded, host and nothing else",
	      identity_parse_dir_order(&id, "seeded", &err) == 0 && id.dir == IDENTITY_DIR_SEEDED &&
		      identity_parse_dir_order(&id, "random", &err) == -EINVAL);
	/* The generated files, in the directory the child binds them from. */
	memset(&id, 0, sizeof(id));
	(void)identity_parse(&id, "cpus=3,memory=1024,hostname=h", &err);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK("the files are written", fd >= 0 && identity_write_files(&id, fd, &err) == 0);
	snprintf(path, sizeof(path), "%s/cpuinfo", dir);
	CHECK("cpuinfo has cpus processors", count_lines(path, "processor\t: ") == 3);
	snprintf(path, sizeof(path), "%s/stat", dir);
	CHECK("stat has the total and cpus cpuN lines",
	      count_lines(path, "cpu ") == 1 && count_lines(path, "cpu") == 4 &&
		      count_lines(path, "cpu2 ") == 1 && count_lines(path, "intr ") == 1);
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	CHECK("meminfo says the memory", count_lines(path, "MemTotal:        1048576 kB") == 1);
	snprintf(path, sizeof(path), "%s/cpulist", dir);
	CHECK("the CPU list is 0-(cpus-1)", count_lines(path, "0-2\n") == 1);
	if (fd >= 0)
		close(fd);
	{
		static const char *const names[] = { "cpuinfo", "stat",	    "meminfo",
						     "cpulist", "hostname", "ci.identity" };

		for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
			(void)unlink(path);
		}
		(void)rmdir(dir);
	}
	T_EXIT();
}

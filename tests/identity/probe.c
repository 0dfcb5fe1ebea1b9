// SPDX-License-Identifier: MIT
/*
 * What a C program learns about the machine, one axis a line (the same
 * lines as probe.py, probe.js, probe.go and Probe.java print where the
 * language has the path). Built dynamic and static by
 * tests/integration/identity.sh; argv[1], if given, is a directory to list.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <locale.h>
#include <pwd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <sys/utsname.h>

static void file_line(const char *label, const char *path, const char *key)
{
	FILE *f = fopen(path, "re");
	char line[512];
	int count = 0;

	if (!f) {
		printf("%s -\n", label);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!key) { /* the first line */
			line[strcspn(line, "\n")] = 0;
			printf("%s %s\n", label, line);
			fclose(f);
			return;
		}
		if (!strncmp(line, key, strlen(key)))
			count++;
	}
	fclose(f);
	printf("%s %d\n", label, count);
}

int main(int argc, char **argv)
{
	cpu_set_t set;
	struct utsname u;
	struct rlimit rl;
	char host[256] = "", tz[64];
	time_t t = 1700000000;
	struct tm tm;
	mode_t m = umask(0);

	umask(m);
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	printf("cpus.affinity %d\n", CPU_COUNT(&set));
	printf("cpus.sysconf %ld %ld\n", sysconf(_SC_NPROCESSORS_ONLN), sysconf(_SC_NPROCESSORS_CONF));
	file_line("cpus.cpuinfo", "/proc/cpuinfo", "processor");
	file_line("cpus.stat", "/proc/stat", "cpu");
	file_line("cpus.online", "/sys/devices/system/cpu/online", NULL);
	file_line("cpus.possible", "/sys/devices/system/cpu/possible", NULL);
	uname(&u);
	gethostname(host, sizeof(host));
	printf("host.uname %s %s %s\n", u.nodename, u.domainname, u.release);
	printf("host.gethostname %s\n", host);
	file_line("host.proc", "/proc/sys/kernel/hostname", NULL);
	localtime_r(&t, &tm);
	strftime(tz, sizeof(tz), "%H:%M %z", &tm);
	printf("tz %s\n", tz);
	printf("locale %s\n", setlocale(LC_ALL, "") ?: "-");
	printf("umask %04o\n", (unsigned)m);
	getrlimit(RLIMIT_NOFILE, &rl);
	printf("nofile %llu\n", (unsigned long long)rl.rlim_cur);
	printf("memory.sysconf %lld\n",
	       (long long)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / (1 << 20));
	file_line("memory.meminfo", "/proc/meminfo", NULL);
	if (argc > 1) {
		DIR *d = opendir(argv[1]);
		struct dirent *e;

		printf("dir");
		while (d && (e = readdir(d)))
			if (e->d_name[0] != '.')
				printf(" %s", e->d_name);
		printf("\n");
		if (d)
			closedir(d);
	}
	return 0;
}

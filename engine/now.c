// SPDX-License-Identifier: MIT
/*
 * The run's virtual start when --now is not given: SOURCE_DATE_EPOCH (the
 * reproducible-builds convention), else the committer time of HEAD when the
 * working directory is in a git checkout - deterministic per commit, and no
 * earlier than any fixture that commit holds - else the date of this
 * release of hermetic (HM_RELEASE_TIME_S), recent enough for the "is the
 * clock sane" checks of current libraries (one refuses anything before
 * 2022), where a fixed date from years ago is not.
 *
 * Not the newest modification time of the working directory's entries, as
 * it once was: a run that writes there (a test's output, a cache) moved the
 * next run's start, so one seed and one command gave other times. Any rule
 * read from files the run may write can be moved by it; keeping "the time
 * before the first run" would need state that outlives runs. The release
 * date is a constant nothing in a run can touch.
 *
 * HEAD's commit is read from the checkout's files where git's answer is
 * certain (now_git.c: 2 ms less per enroll); otherwise git runs here,
 * before the run exists: as the user, with the user's
 * environment, outside the run's cgroup and without the shim. It is asked a
 * plumbing question (cat-file), which reads no pager, signature or
 * fsmonitor configuration of the checkout. Any failure (no git, not a
 * checkout, no commit yet, a checkout git will not trust) means "no commit". */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include "util.h"
#include "boundary.h"
#include "engine.h"
#include "now.h"

extern char **environ;

#define COMMIT_MAX (1 << 20) /* read at most this much of the commit object */

const char *now_source_name(enum now_source s)
{
	switch (s) {
	case NOW_OPTION:
		return "--now";
	case NOW_SOURCE_DATE_EPOCH:
		return "SOURCE_DATE_EPOCH";
	case NOW_GIT_HEAD:
		return "the commit time of HEAD";
	default:
		return "the date of hermetic " HERMETIC_VERSION;
	}
}

/* "committer NAME <EMAIL> SECONDS ZONE" among the headers of a commit. */
static int committer_time(const char *obj, int64_t *ret_secs)
{
	const char *p = obj, *end, *gt;
	uint64_t secs;

	for (;;) {
		end = strchr(p, '\n');
		if (!end || end == p)
			return -ENOENT; /* end of the headers */
		if (!strncmp(p, "committer ", 10))
			break;
		p = end + 1;
	}
	gt = memrchr(p, '>', end - p);
	if (!gt || gt[1] != ' ')
		return -EBADMSG;
	{
		char num[24];
		size_t n = strspn(gt + 2, "0123456789");

		if (n == 0 || n >= sizeof(num))
			return -EBADMSG;
		memcpy(num, gt + 2, n);
		num[n] = 0;
		if (hm_parse_u64(num, &secs) < 0 || secs > INT64_MAX / 1000000000LL)
			return -EBADMSG;
	}
	*ret_secs = (int64_t)secs;
	return 0;
}

/* HEAD's committer time, by `git cat-file commit HEAD` in the current
 * directory. 0, or -errno when there is no such commit to be had. */
static int git_head_time(int64_t *ret_secs)
{
	static const char *const argv[] = { "git", "cat-file", "commit", "HEAD", NULL };
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t attr;
	sigset_t none, dfl;
	_cleanup_free_ char *buf = NULL;
	char cwd[PATH_MAX], top[PATH_MAX];
	int pfd[2], st, r;
	size_t len = 0;
	pid_t pid;

	/* Not in a checkout and not told where one is: no need to ask git. */
	if (!getenv("GIT_DIR") &&
	    (!getcwd(cwd, sizeof(cwd)) || hm_git_tree_find(cwd, top, sizeof(top)) != 1))
		return -ENOENT;
	buf = malloc(COMMIT_MAX + 1);
	if (!buf)
		return -ENOMEM;
	/* Where git's answer is certain, read it ourselves (now_git.c). */
	if (!getenv("GIT_DIR") && now_git_read(cwd, top, buf, COMMIT_MAX + 1) == 0)
		return committer_time(buf, ret_secs);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return -errno;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	/* git as a shell starts it, whenever enroll asks (it may be after
	 * the run's signals are blocked for their signalfd and SIGPIPE
	 * ignored: cli/enroll.c reads HEAD while hermeticd makes the run). */
	posix_spawnattr_init(&attr);
	(void)sigemptyset(&none);
	(void)sigemptyset(&dfl);
	(void)sigaddset(&dfl, SIGPIPE);
	(void)posix_spawnattr_setsigmask(&attr, &none);
	(void)posix_spawnattr_setsigdefault(&attr, &dfl);
	(void)posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	r = posix_spawnp(&pid, "git", &fa, &attr, (char *const *)argv, environ);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (r) {
		close(pfd[0]);
		return -r;
	}
	for (;;) {
		ssize_t n = read(pfd[0], buf + len, COMMIT_MAX - len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += n;
		if (len == COMMIT_MAX)
			break; /* the headers are long done */
	}
	buf[len] = 0;
	close(pfd[0]); /* a git still writing gets SIGPIPE */
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (len < COMMIT_MAX && !(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		return -ENOENT;
	return committer_time(buf, ret_secs);
}

int now_default(int64_t *ret_ns, enum now_source *ret_src, char *why, size_t size)
{
	const char *sde = getenv("SOURCE_DATE_EPOCH");
	int64_t secs;
	uint64_t v;

	if (sde && *sde) {
		if (hm_parse_u64(sde, &v) < 0 || v > INT64_MAX / 1000000000LL) {
			snprintf(why, size,
				 "SOURCE_DATE_EPOCH=%s: expected a whole number of seconds since "
				 "the epoch (or pass --now)",
				 sde);
			return -EINVAL;
		}
		*ret_ns = (int64_t)v * 1000000000LL;
		*ret_src = NOW_SOURCE_DATE_EPOCH;
		return 0;
	}
	if (git_head_time(&secs) == 0) {
		*ret_ns = secs * 1000000000LL;
		*ret_src = NOW_GIT_HEAD;
		return 0;
	}
	*ret_ns = HM_RELEASE_TIME_S * 1000000000LL;
	*ret_src = NOW_RELEASE;
	return 0;
}

// SPDX-License-Identifier: MIT
/*
 * The ledger of the journals this user recorded on this machine (trust.h).
 * One line per journal: "<sha256> <epoch s> <store id or -> <path or ->".
 * Appended under an exclusive flock; past LEDGER_MAX bytes it is rewritten
 * with its newer half (a journal older than that asks before it replays).
 */
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <time.h>
#include <sys/file.h>
#include <sys/stat.h>
#include "util.h"
#include "engine.h"
#include "trust.h"

#define LEDGER_MAX (1 << 20) /* ~10,000 journals */
#define LEDGER_NAME "recorded"

static int state_dir(char *buf, size_t size)
{
	const char *x = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
	struct passwd *pw;
	int n;

	/* The XDG spec: a relative XDG_STATE_HOME is invalid and ignored. */
	if (x && x[0] == '/')
		n = snprintf(buf, size, "%s/hermetic", x);
	else if (home && home[0] == '/')
		n = snprintf(buf, size, "%s/.local/state/hermetic", home);
	else if ((pw = getpwuid(getuid())) && pw->pw_dir && pw->pw_dir[0] == '/')
		n = snprintf(buf, size, "%s/.local/state/hermetic", pw->pw_dir);
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* Taken once, before enroll points HOME and XDG_* into a --fs isolate
 * root for CMD (record_setup asks first). */
int trust_ledger_path(char *buf, size_t size)
{
	static char path[PATH_MAX];
	static int r = 1;

	if (r > 0) {
		char dir[PATH_MAX - sizeof("/" LEDGER_NAME)];

		r = state_dir(dir, sizeof(dir));
		if (r == 0)
			snprintf(path, sizeof(path), "%s/" LEDGER_NAME, dir);
	}
	if (r < 0)
		return r;
	if ((size_t)snprintf(buf, size, "%s", path) >= size)
		return -ENAMETOOLONG;
	return 0;
}

/* mkdir -p, each new directory 0700. */
static int mkdirs(char *path)
{
	for (char *p = path + 1;; p++) {
		if (*p != '/' && *p)
			continue;
		char c = *p;

		*p = 0;
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = c;
			return -errno;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

/* A ledger is evidence only if nobody but us (and root) can have written
 * it: a regular file we own that neither group nor others may write. */
static int ledger_ok(int fd, char *why, size_t size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022)) {
		snprintf(why, size, "the ledger is not a file of yours alone (owner %u, mode %04o)",
			 (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int digest_fd(int fd, char hex[HM_SHA256_HEX])
{
	struct hm_sha256 s;
	uint8_t buf[65536], d[HM_SHA256_SIZE];
	off_t off = 0;
	ssize_t n;

	hm_sha256_init(&s);
	while ((n = pread(fd, buf, sizeof(buf), off)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		hm_sha256_update(&s, buf, (size_t)n);
		off += n;
	}
	hm_sha256_final(&s, d);
	for (int i = 0; i < HM_SHA256_SIZE; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
	return 0;
}

/* Keep the newer half of an overgrown ledger (fd locked, O_RDWR). */
static int prune(int fd, off_t size)
{
	_cleanup_free_ char *buf = malloc((size_t)size + 1);
	ssize_t n;
	char *keep;

	if (!buf)
		return -ENOMEM;
	n = pread(fd, buf, (size_t)size, 0);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	keep = buf + n / 2;
	keep = strchr(keep, '\n') ? strchr(keep, '\n') + 1 : buf + n;
	if (pwrite(fd, keep, (size_t)(buf + n - keep), 0) != buf + n - keep ||
	    ftruncate(fd, buf + n - keep) < 0)
		return -errno ?: -EIO;
	return 0;
}

static int note(int fd, const char *path, const char *store_id, char *why, size_t wsize)
{
	char ledger[PATH_MAX], hex[HM_SHA256_HEX], line[PATH_MAX + 160];
	_cleanup_close_ int lfd = -1;
	struct stat st;
	int r, len;

	if ((r = digest_fd(fd, hex)) < 0 || (r = trust_ledger_path(ledger, sizeof(ledger))) < 0)
		return r;
	*strrchr(ledger, '/') = 0;
	if ((r = mkdirs(ledger)) < 0)
		return r;
	strcat(ledger, "/" LEDGER_NAME);
	/* Not O_APPEND: prune() rewrites from offset 0 (pwrite on an O_APPEND
	 * descriptor appends). Every writer holds the lock, so seeking to the
	 * end under it appends as well. */
	lfd = open(ledger, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (lfd < 0)
		return -errno;
	if ((r = ledger_ok(lfd, why, wsize)) < 0)
		return r;
	if (flock(lfd, LOCK_EX) < 0)
		return -errno;
	/* A path with a newline would break the line format: not named. */
	if (strchr(path, '\n'))
		path = "";
	len = snprintf(line, sizeof(line), "%s %lld %s %s\n", hex, (long long)time(NULL),
		       store_id[0] ? store_id : "-", path[0] ? path : "-");
	if (len < 0 || (size_t)len >= sizeof(line))
		len = snprintf(line, sizeof(line), "%s %lld %s -\n", hex, (long long)time(NULL),
			       store_id[0] ? store_id : "-");
	if (fstat(lfd, &st) == 0 && st.st_size > LEDGER_MAX && (r = prune(lfd, st.st_size)) < 0)
		return r;
	if (lseek(lfd, 0, SEEK_END) < 0 || write(lfd, line, (size_t)len) != len)
		return -errno ?: -EIO;
	return 0;
}

void trust_note_fd(int fd, const char *path, const char *store_id)
{
	char ledger[PATH_MAX] = "?", why[160] = "";
	int r = note(fd, path, store_id, why, sizeof(why));

	if (r < 0) {
		(void)trust_ledger_path(ledger, sizeof(ledger)); /* "?" or a path, for the message */
		eng_warn("Failed to note the journal as yours in %s: %s; replaying it will ask "
			 "first (as for a journal you did not record)",
			 ledger, why[0] ? why : strerror(-r));
	}
}

/* Open our ledger for reading, or -errno with why set. */
static FILE *open_ledger(char *why, size_t size)
{
	char ledger[PATH_MAX];
	int fd, r = trust_ledger_path(ledger, sizeof(ledger));
	FILE *f;

	if (r < 0) {
		snprintf(why, size, "no home directory to keep the ledger of your journals in");
		return NULL;
	}
	fd = open(ledger, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 && errno == ENOENT) {
		snprintf(why, size, "you recorded no journal here yet: no %s", ledger);
		return NULL;
	}
	if (fd < 0) {
		snprintf(why, size, "%s: %s", ledger, strerror(errno));
		return NULL;
	}
	if (ledger_ok(fd, why, size) < 0 || !(f = fdopen(fd, "re"))) {
		close(fd);
		return NULL;
	}
	return f;
}

bool trust_known(const char hex[HM_SHA256_HEX], char *why, size_t size)
{
	_cleanup_fclose_ FILE *f = open_ledger(why, size);
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, n = strlen(hex);

	if (!f)
		return false;
	while (getline(&line, &cap, f) > 0)
		if (!strncmp(line, hex, n) && line[n] == ' ')
			return true;
	snprintf(why, size, "its SHA-256 is not in the ledger of the journals you recorded here");
	return false;
}

size_t trust_recent_dirs(char (*dirs)[4096], size_t max)
{
	char why[160];
	_cleanup_fclose_ FILE *f = open_ledger(why, sizeof(why));
	_cleanup_free_ char *line = NULL;
	size_t cap = 0, n = 0;

	if (!f || !max)
		return 0;
	/* Oldest first in the file: the newest directory goes to the front. */
	while (getline(&line, &cap, f) > 0) {
		char hex[HM_SHA256_HEX], store[32];
		long long t;
		int off = 0;
		char *path, *slash;
		size_t k;

		line[strcspn(line, "\n")] = 0;
		if (sscanf(line, "%64s %lld %31s %n", hex, &t, store, &off) != 3 || !off ||
		    strcmp(store, "-"))
			continue;
		path = line + off;
		slash = strrchr(path, '/');
		if (path[0] != '/' || !slash || (size_t)(slash - path) >= sizeof(dirs[0]))
			continue;
		*slash = 0;
		if (slash == path)
			strcpy(path, "/");
		for (k = 0; k < n && strcmp(dirs[k], path); k++)
			;
		if (k == n && n < max)
			n++;
		else if (k == n)
			k = n - 1; /* full: the oldest falls off */
		memmove(dirs + 1, dirs, k * sizeof(dirs[0]));
		snprintf(dirs[0], sizeof(dirs[0]), "%s", path);
	}
	return n;
}

static int fail(char *err, size_t errlen, int r, const char *msg)
{
	snprintf(err, errlen, "%s", msg ? msg : strerror(-r));
	return r;
}

int trust_read_file(const char *path, size_t max, unsigned char **ret, size_t *ret_len, char *err,
		    size_t errlen)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ unsigned char *data = NULL;
	struct stat st;
	size_t n = 0;

	/* O_NONBLOCK: a FIFO given as a journal must not hang the open. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) < 0)
		return fail(err, errlen, -errno, NULL);
	if (!S_ISREG(st.st_mode))
		return fail(err, errlen, -EINVAL, "not a regular file");
	if ((uint64_t)st.st_size > max)
		return fail(err, errlen, -EFBIG, "file is larger than the limit");
	data = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!data)
		return fail(err, errlen, -ENOMEM, NULL);
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, data + n, (size_t)st.st_size - n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return fail(err, errlen, -errno, NULL);
		if (k == 0)
			break;
		n += (size_t)k;
	}
	*ret = data;
	data = NULL;
	*ret_len = n;
	return 0;
}

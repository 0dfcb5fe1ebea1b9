// SPDX-License-Identifier: MIT
/*
 * HEAD's commit read from the checkout's own files, without a git process:
 * `git cat-file commit HEAD` costs about 2 ms of every enroll in a checkout
 * (fork, exec, git's start), which is most runs on CI. This reads exactly
 * what git would read, and only where git's answer is certain to be the
 * same; anything else - a layout, a setting or an object it does not handle
 * - returns -EAGAIN and now.c asks git as before:
 *
 *  - none of git's variables that move the repository, its objects, refs
 *    or configuration (GIT_DIR, GIT_OBJECT_DIRECTORY, GIT_CONFIG_*, ...);
 *  - the working directory and the top of the checkout on one filesystem,
 *    every directory between them too (git stops its search at a mount);
 *  - `.git` a directory, or a file (a linked worktree, a submodule) that
 *    says "gitdir: PATH" as git's read_gitfile reads it (PATH relative to
 *    the top, or absolute); the top, `.git` and the directory it names
 *    owned by the effective user (git's ensure_valid_ownership trusts
 *    those without safe.directory; other owners are git's to judge);
 *  - the git directory's `commondir` (a linked worktree's: the main
 *    repository's .git) followed as git follows it, and owned by us too:
 *    HEAD is the worktree's own, every other ref, packed-refs, the config
 *    and the objects the common directory's; the per-worktree refs
 *    (refs/worktree/, refs/bisect/, refs/rewritten/) are git's;
 *  - no [extensions] in the common config (sha256 objects, reftable refs,
 *    worktreeConfig, ...), a repository format of 0 or 1, objects/ and
 *    refs/ directories, no second commondir, no replacement refs (git
 *    cat-file honours them);
 *  - HEAD and the refs it names as files or in packed-refs;
 *  - the commit as a loose object or as a whole (not deltified) object of
 *    a pack with a version-2 index.
 *
 * Nothing is written. Every file is opened below the git directory's (or
 * the common directory's) descriptor by a name that stays below it (refs
 * are checked: no ".."); objects and indexes without following a
 * symbolic link. A worktree's gitfile costs enroll a git process no more
 * (about 16 ms on a loaded 2-core machine: docs/performance.md).
 */
#include <ctype.h>
#include <stdbool.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include "util.h"
#include "now.h"

extern char **environ;

#define REF_MAX 4096
#define COMPRESSED_MAX (16 << 20) /* compressed bytes of one commit we read */
#define PACKED_REFS_MAX (64 << 20)

static bool is_hex40(const char *s, size_t len)
{
	if (len != 40)
		return false;
	for (size_t i = 0; i < 40; i++)
		if (!isdigit((unsigned char)s[i]) && !(s[i] >= 'a' && s[i] <= 'f'))
			return false;
	return true;
}

static void hex_to_bin(const char *hex, unsigned char out[20])
{
	for (int i = 0; i < 20; i++) {
		int hi = isdigit((unsigned char)hex[2 * i]) ? hex[2 * i] - '0' : hex[2 * i] - 'a' + 10;
		int lo = isdigit((unsigned char)hex[2 * i + 1]) ? hex[2 * i + 1] - '0'
							       : hex[2 * i + 1] - 'a' + 10;

		out[i] = (unsigned char)(hi << 4 | lo);
	}
}

/* The variables of git(1) that move the repository, its objects or refs,
 * or its configuration: with any set, the answer is git's. (Others, such
 * as GIT_SSL_CAINFO or a CI's GIT_DEPTH, change nothing cat-file reads.) */
static bool git_env_set(void)
{
	static const char *const moves[] = {
		"GIT_DIR=", "GIT_WORK_TREE=", "GIT_COMMON_DIR=", "GIT_OBJECT_DIRECTORY=",
		"GIT_ALTERNATE_OBJECT_DIRECTORIES=", "GIT_NAMESPACE=", "GIT_CEILING_DIRECTORIES=",
		"GIT_DISCOVERY_ACROSS_FILESYSTEM=", "GIT_NO_REPLACE_OBJECTS=", "GIT_REPLACE_REF_BASE=",
		"GIT_CONFIG", /* GIT_CONFIG, _GLOBAL, _SYSTEM, _NOSYSTEM, _COUNT, _KEY_n, _PARAMETERS */
		"GIT_DEFAULT_HASH=", "GIT_DEFAULT_REF_FORMAT=", "GIT_SHALLOW_FILE=", "GIT_QUARANTINE_PATH=",
		"GIT_IMPLICIT_WORK_TREE=", "GIT_REF_PARANOIA=", "GIT_TEST_",
	};

	for (char **e = environ; *e; e++)
		for (size_t i = 0; !strncmp(*e, "GIT_", 4) && i < ARRAY_SIZE(moves); i++)
			if (!strncmp(*e, moves[i], strlen(moves[i])))
				return true;
	return false;
}

static int open_gitfile(const char *path, const char *top, dev_t dev);

/* git's search and trust would accept top for cwd: returns the git
 * directory's fd (.git, or the one a gitfile names). */
static int open_trusted_gitdir(const char *cwd, const char *top)
{
	char dir[PATH_MAX];
	size_t tl = strlen(top), len = strlen(cwd);
	struct stat st, gst;
	dev_t dev;
	int fd;

	if (len >= sizeof(dir) || strncmp(cwd, top, tl) || (cwd[tl] && cwd[tl] != '/' && tl > 1))
		return -EAGAIN;
	memcpy(dir, cwd, len + 1);
	if (stat(dir, &st) < 0)
		return -EAGAIN;
	dev = st.st_dev;
	/* Up from the working directory to the top: one filesystem. */
	while (len > tl) {
		char *slash = strrchr(dir, '/');

		if (!slash)
			return -EAGAIN;
		len = slash == dir ? 1 : (size_t)(slash - dir);
		dir[len] = 0;
		if (stat(dir, &st) < 0 || st.st_dev != dev)
			return -EAGAIN;
	}
	if (strcmp(dir, top) || st.st_uid != geteuid())
		return -EAGAIN;
	snprintf(dir + len, sizeof(dir) - len, "%s.git", len == 1 ? "" : "/");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOTDIR ? open_gitfile(dir, top, dev) : -EAGAIN;
	if (fstat(fd, &gst) < 0 || gst.st_uid != geteuid() || gst.st_dev != dev) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* A directory named by path (relative: to base's descriptor) owned by us. */
static int open_owned_dir(int base, const char *path)
{
	struct stat st;
	int fd = openat(base, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -EAGAIN;
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid()) {
		close(fd);
		return -EAGAIN;
	}
	return fd;
}

/* The first line of a small regular file of ours, at base/name (no link
 * followed), without its line end: git's read of a gitfile or commondir
 * (it strips trailing \n and \r only). -EAGAIN for anything else. */
static int read_line_owned(int base, const char *name, char *buf, size_t size)
{
	_cleanup_close_ int fd = openat(base, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	ssize_t n;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size <= 0 || (size_t)st.st_size >= size)
		return -EAGAIN;
	n = read(fd, buf, size - 1);
	if (n != st.st_size)
		return -EAGAIN;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = 0;
	if (n == 0 || memchr(buf, 0, (size_t)n) || memchr(buf, '\n', (size_t)n))
		return -EAGAIN; /* a second line, or a NUL: not what git wrote */
	return 0;
}

/* .git a file at path (top/.git, on top's filesystem dev): "gitdir: DIR",
 * DIR relative to top or absolute, as git's read_gitfile reads it; the
 * directory, owned by us, or -EAGAIN. */
static int open_gitfile(const char *path, const char *top, dev_t dev)
{
	char buf[PATH_MAX + 16];
	_cleanup_close_ int topfd = -1;
	struct stat st;

	if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_dev != dev ||
	    read_line_owned(AT_FDCWD, path, buf, sizeof(buf)) < 0 || strncmp(buf, "gitdir: ", 8) ||
	    !buf[8])
		return -EAGAIN;
	topfd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (topfd < 0)
		return -EAGAIN;
	return open_owned_dir(topfd, buf + 8); /* absolute: topfd is not used */
}

/* The common directory of git directory gitfd: its commondir's (relative
 * to it, or absolute), owned by us; or gitfd's own duplicate. -EAGAIN. */
static int open_commondir(int gitfd)
{
	char buf[PATH_MAX + 1];
	struct stat st;
	int fd;

	if (fstatat(gitfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return -EAGAIN;
		fd = fcntl(gitfd, F_DUPFD_CLOEXEC, 0);
		return fd < 0 ? -EAGAIN : fd;
	}
	if (read_line_owned(gitfd, "commondir", buf, sizeof(buf)) < 0)
		return -EAGAIN;
	return open_owned_dir(gitfd, buf);
}

/* Settings that change what `cat-file commit HEAD` reads: we do not follow.
 * gitfd: the common directory. */
static bool plain_repository(int gitfd)
{
	char buf[65536];
	struct stat st;
	ssize_t n = hm_read_file_at(gitfd, "config", buf, sizeof(buf));

	if (n < 0 || (size_t)n >= sizeof(buf) - 1)
		return false;
	for (char *p = buf; (p = strchr(p, '[')); p++) {
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		if (!strncasecmp(p, "extensions", 10))
			return false;
	}
	/* A format git does not know (above 1) is an error to git. */
	for (char *p = buf; (p = strcasestr(p, "repositoryformatversion")); p++) {
		char *v = p + 23;

		v += strspn(v, " \t");
		if (*v != '=')
			return false;
		v++;
		v += strspn(v, " \t");
		if ((*v != '0' && *v != '1') || !strchr("\r\n \t", v[1]) || !v[1])
			return false;
	}
	/* What git takes for a repository: HEAD, objects/ and refs/. */
	if (fstatat(gitfd, "objects", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode) ||
	    fstatat(gitfd, "refs", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return false;
	if (fstatat(gitfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return false;
	if (fstatat(gitfd, "refs/replace", &st, AT_SYMLINK_NOFOLLOW) == 0)
		return false; /* even empty: not worth telling apart */
	return true;
}

/* The object id packed-refs gives ref, into hex. 0, -ENOENT or -EAGAIN. */
static int packed_ref(const char *packed, size_t len, const char *ref, char hex[41])
{
	size_t rl = strlen(ref);

	for (const char *p = packed, *end = packed + len; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (ll == 41 + rl && p[40] == ' ' && !memcmp(p + 41, ref, rl)) {
			if (!is_hex40(p, 40))
				return -EAGAIN;
			memcpy(hex, p, 40);
			hex[40] = 0;
			return 0;
		}
		p += ll + 1;
	}
	return -ENOENT;
}

static bool ref_name_ok(const char *ref)
{
	if (strncmp(ref, "refs/", 5) || strstr(ref, "..") || strstr(ref, "//") ||
	    ref[strlen(ref) - 1] == '/')
		return false;
	for (const char *c = ref; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("/._-", *c))
			return false;
	return true;
}

/* A ref each worktree has its own of (git's is_per_worktree_ref). */
static bool per_worktree_ref(const char *ref)
{
	return !strncmp(ref, "refs/worktree/", 14) || !strncmp(ref, "refs/bisect/", 12) ||
	       !strncmp(ref, "refs/rewritten/", 15);
}

/* HEAD (the git directory's, gitfd) to an object id, through at most 5
 * symbolic refs (the common directory's, commonfd). */
static int resolve_head(int gitfd, int commonfd, const char *packed, size_t plen, char hex[41])
{
	char buf[REF_MAX], ref[REF_MAX] = "HEAD";

	for (int depth = 0; depth < 5; depth++) {
		bool head = !strcmp(ref, "HEAD");
		ssize_t n;

		if (!head && per_worktree_ref(ref))
			return -EAGAIN; /* the worktree's own: git's */
		n = hm_read_file_at(head ? gitfd : commonfd, ref, buf, sizeof(buf));

		if (n == -ENOENT && strcmp(ref, "HEAD"))
			return packed_ref(packed, plen, ref, hex) == 0 ? 0 : -EAGAIN;
		if (n < 0)
			return -EAGAIN;
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
			buf[--n] = 0;
		if (is_hex40(buf, (size_t)n)) {
			memcpy(hex, buf, 41);
			return 0;
		}
		if (strncmp(buf, "ref: ", 5) || !ref_name_ok(buf + 5))
			return -EAGAIN;
		snprintf(ref, sizeof(ref), "%s", buf + 5);
	}
	return -EAGAIN;
}

/* Inflate a zlib stream read from fd at off into out (up to size - 1 bytes,
 * NUL-terminated): the bytes produced, or -EAGAIN. */
static ssize_t inflate_at(int fd, off_t off, char *out, size_t size)
{
	unsigned char in[16384];
	z_stream z = { 0 };
	ssize_t ret = -EAGAIN;
	size_t read_in = 0;
	int zr = Z_OK;

	if (inflateInit(&z) != Z_OK)
		return -EAGAIN;
	z.next_out = (unsigned char *)out;
	z.avail_out = (uInt)(size - 1);
	while (zr == Z_OK && z.avail_out) {
		ssize_t n = pread(fd, in, sizeof(in), off);

		if (n <= 0 || (read_in += (size_t)n) > COMPRESSED_MAX)
			goto cleanup; /* cut short: git would fail too */
		off += n;
		z.next_in = in;
		z.avail_in = (uInt)n;
		while (z.avail_in && z.avail_out && (zr = inflate(&z, Z_NO_FLUSH)) == Z_OK)
			;
	}
	/* The whole object, or as much as fills out (the headers come first). */
	if (zr != Z_STREAM_END && z.avail_out)
		goto cleanup;
	ret = (ssize_t)z.total_out;
	out[ret] = 0;
cleanup:
	inflateEnd(&z);
	return ret;
}

/* objects/xx/yyyy..., "commit SIZE\0" and the body, body into out. */
static int loose_commit(int gitfd, const char *hex, char *out, size_t size)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;
	char *nul;

	snprintf(path, sizeof(path), "objects/%.2s/%s", hex, hex + 2);
	fd = openat(gitfd, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EAGAIN;
	n = inflate_at(fd, 0, out, size);
	if (n < 0 || strncmp(out, "commit ", 7) || !(nul = memchr(out, 0, (size_t)n)))
		return -EAGAIN;
	memmove(out, nul + 1, (size_t)(n - (nul + 1 - out)));
	out[n - (nul + 1 - out)] = 0;
	return 0;
}

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Where a version-2 pack index puts sha: 0 and the offset, -ENOENT, -EAGAIN. */
static int idx_find(const unsigned char *m, size_t len, const unsigned char sha[20], uint64_t *ret)
{
	static const unsigned char magic[8] = { 0xff, 't', 'O', 'c', 0, 0, 0, 2 };
	uint32_t n, lo, hi;

	if (len < 8 + 1024 || memcmp(m, magic, 8))
		return -EAGAIN;
	n = be32(m + 8 + 255 * 4);
	if ((uint64_t)len < 8 + 1024 + (uint64_t)n * 28 + 40)
		return -EAGAIN;
	lo = sha[0] ? be32(m + 8 + (sha[0] - 1) * 4) : 0;
	hi = be32(m + 8 + sha[0] * 4);
	if (lo > hi || hi > n)
		return -EAGAIN;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = memcmp(m + 8 + 1024 + (size_t)mid * 20, sha, 20);

		if (c == 0) {
			uint32_t o = be32(m + 8 + 1024 + (size_t)n * 24 + (size_t)mid * 4);
			size_t at = 8 + 1024 + (size_t)n * 28 + (size_t)(o & 0x7fffffff) * 8;

			if (!(o & 0x80000000)) {
				*ret = o;
				return 0;
			}
			if (at + 8 > len - 40)
				return -EAGAIN;
			*ret = (uint64_t)be32(m + at) << 32 | be32(m + at + 4);
			return 0;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -ENOENT;
}

/* The object at off of a pack: a whole commit, its body into out. */
static int pack_commit(int fd, uint64_t off, char *out, size_t size)
{
	unsigned char h[16];
	ssize_t n = pread(fd, h, sizeof(h), (off_t)off);
	size_t i = 0;

	if (n <= 0 || off > INT64_MAX)
		return -EAGAIN;
	if (((h[0] >> 4) & 7) != 1)
		return -EAGAIN; /* not a commit, or a delta: git's */
	while (h[i] & 0x80)
		if (++i >= (size_t)n)
			return -EAGAIN;
	return inflate_at(fd, (off_t)(off + i + 1), out, size) < 0 ? -EAGAIN : 0;
}

/* Each index in objects/pack, and the commit from its pack. */
static int packed_commit(int gitfd, const char *hex, char *out, size_t size)
{
	unsigned char sha[20];
	_cleanup_close_ int dfd = openat(gitfd, "objects/pack",
					 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	int ret = -ENOENT;
	DIR *d;

	hex_to_bin(hex, sha);
	if (dfd < 0 || !(d = fdopendir(dfd)))
		return -ENOENT;
	dfd = -1; /* the DIR owns it */
	while (ret == -ENOENT && (de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		char pack[NAME_MAX + 1];
		struct stat st;
		uint64_t off;
		void *m;
		int fd;

		if (nl < 5 || nl > NAME_MAX || strcmp(de->d_name + nl - 4, ".idx"))
			continue;
		fd = openat(dirfd(d), de->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0 || st.st_size < 1072 ||
		    (m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0)) == MAP_FAILED) {
			if (fd >= 0)
				close(fd);
			ret = -EAGAIN;
			break;
		}
		close(fd);
		ret = idx_find(m, (size_t)st.st_size, sha, &off);
		munmap(m, (size_t)st.st_size);
		if (ret < 0)
			continue;
		snprintf(pack, sizeof(pack), "%.*s.pack", (int)(nl - 4), de->d_name);
		fd = openat(dirfd(d), pack, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		ret = fd < 0 ? -EAGAIN : pack_commit(fd, off, out, size);
		if (fd >= 0)
			close(fd);
	}
	closedir(d);
	return ret;
}

int now_git_read(const char *cwd, const char *top, char *out, size_t size)
{
	_cleanup_close_ int gitfd = -1, commonfd = -1;
	char hex[41];
	void *packed = NULL;
	size_t plen = 0;
	struct stat st;
	int r = -EAGAIN, pfd;

	if (git_env_set() || (gitfd = open_trusted_gitdir(cwd, top)) < 0 ||
	    (commonfd = open_commondir(gitfd)) < 0 || !plain_repository(commonfd))
		return -EAGAIN;
	pfd = openat(commonfd, "packed-refs", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd >= 0) {
		if (fstat(pfd, &st) == 0 && st.st_size > 0 && st.st_size < PACKED_REFS_MAX)
			packed = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, pfd, 0);
		close(pfd);
		if (!packed || packed == MAP_FAILED)
			return -EAGAIN;
		plen = (size_t)st.st_size;
		if (memmem(packed, plen, " refs/replace/", 14))
			goto cleanup;
	} else if (errno != ENOENT) {
		return -EAGAIN;
	}
	if (resolve_head(gitfd, commonfd, packed, plen, hex) < 0)
		goto cleanup;
	r = loose_commit(commonfd, hex, out, size);
	if (r == -ENOENT)
		r = packed_commit(commonfd, hex, out, size);
	if (r < 0)
		r = -EAGAIN; /* an alternate's, or one we do not read: git's */
cleanup:
	if (packed)
		munmap(packed, plen);
	return r;
}

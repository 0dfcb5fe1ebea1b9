// SPDX-License-Identifier: MIT
/*
 * The journal store: <store>/<uid>/<run id>.hjournal and, next to each, a
 * metadata sidecar <run id>.json that `hermetic journals list` shows.
 *
 * Everything here is root's: the store directory is 0711 root, each user's
 * directory 0700 root, each file 0600 root. Users never open anything in
 * the store; they ask the daemon, which works only in the directory of the
 * peer's uid (SO_PEERCRED), by directory fd, never following a symlink.
 * The files stay root-owned on purpose: FETCH hands the user an O_RDONLY
 * descriptor of the file, and a file the user owned could be reopened for
 * writing through /proc/self/fd/N and grown past the retention limits.
 * The sidecar records whose journal it is.
 *
 * The daemon does not parse journals (a reader's job, done unprivileged by
 * the CLI); it checks the file type, the size and the zstd frame magic.
 */
#include <fcntl.h>
#include <dirent.h>
#include <inttypes.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/random.h>
#include <sys/mman.h>
#include <json-c/json.h>
#include "util.h"
#include "config.h"
#include "daemon.h"

#define ZSTD_MAGIC 0xFD2FB528u /* little-endian, first 4 bytes of a frame */
#define SIDECAR_MAX 8192
#define STALE_TEMP_NS (3600ULL * 1000000000ULL)

static int mkdir_parents(const char *path)
{
	char buf[4096];

	if (strlen(path) >= sizeof(buf))
		return -ENAMETOOLONG;
	strcpy(buf, path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, 0755) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

int hmd_store_open(struct hmd_store *s)
{
	struct stat st;
	int fd, err;

	s->fd = -1;
	if ((err = mkdir_parents(s->path)) < 0 ||
	    (mkdir(s->path, 0711) < 0 && errno != EEXIST && (err = -errno))) {
		snprintf(s->why, sizeof(s->why), "cannot create it: %s", strerror(-err));
		return err;
	}
	fd = open(s->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(s->why, sizeof(s->why), "cannot open it: %s", strerror(-err));
		return err;
	}
	/* A directory someone else made could be theirs to swap things in. */
	if (fstat(fd, &st) < 0 || st.st_uid != 0) {
		snprintf(s->why, sizeof(s->why), "it is owned by uid %u, not root",
			 (unsigned)st.st_uid);
		close(fd);
		return -EPERM;
	}
	/* 0711: users may not list who has journals; they never enter it. */
	if (fchmod(fd, 0711) < 0) {
		err = -errno;
		snprintf(s->why, sizeof(s->why), "cannot chmod it: %s", strerror(-err));
		close(fd);
		return err;
	}
	s->fd = fd;
	return 0;
}

void hmd_store_close(struct hmd_store *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* The directory of uid's journals (0700 root), created when asked. */
static int user_dir(struct hmd_store *s, uid_t uid, bool create)
{
	char name[16];
	struct stat st;
	int fd;

	if (s->fd < 0)
		return -ENOSYS;
	snprintf(name, sizeof(name), "%u", (unsigned)uid);
	if (create && mkdirat(s->fd, name, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = openat(s->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* Root's, 0700: nobody but the daemon opens anything in it. */
	if (fstat(fd, &st) < 0 || st.st_uid != 0 ||
	    ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) < 0)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct jent {
	uint64_t id;
	uint64_t size;
	int64_t mtime_ns; /* when it was stored */
};

static int cmp_oldest(const void *a, const void *b)
{
	const struct jent *x = a, *y = b;

	if (x->mtime_ns != y->mtime_ns)
		return x->mtime_ns < y->mtime_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* "<digits>.hjournal" -> id */
static bool journal_name(const char *name, uint64_t *ret_id)
{
	size_t n = strspn(name, "0123456789");
	char num[24];

	if (!n || n >= sizeof(num) || strcmp(name + n, ".hjournal"))
		return false;
	memcpy(num, name, n);
	num[n] = 0;
	return hm_parse_u64(num, ret_id) == 0;
}

/* Every journal in a user's directory, oldest first. Temporary files of a
 * store that failed half-way (a crash) are removed once stale. */
static int scan(int dir, struct jent **ret, size_t *ret_n)
{
	_cleanup_free_ struct jent *v = NULL;
	size_t n = 0, cap = 0;
	int64_t now = 0;
	struct timespec ts;
	struct dirent *de;
	DIR *D;
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	D = fdopendir(fd);
	if (!D) {
		close(fd);
		return -ENOMEM;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	now = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	while ((de = readdir(D))) {
		struct stat st;
		uint64_t id;

		if (fstatat(dirfd(D), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		int64_t mt = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (de->d_name[0] == '.' && strcmp(de->d_name, ".") && strcmp(de->d_name, "..")) {
			if (S_ISREG(st.st_mode) && now - mt > (int64_t)STALE_TEMP_NS)
				unlinkat(dirfd(D), de->d_name, 0);
			continue;
		}
		if (!S_ISREG(st.st_mode) || !journal_name(de->d_name, &id))
			continue;
		if (n == cap) {
			struct jent *nv;

			cap = cap ? cap * 2 : 64;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				closedir(D);
				return -ENOMEM;
			}
			v = nv;
		}
		v[n++] = (struct jent){ .id = id, .size = st.st_size, .mtime_ns = mt };
	}
	closedir(D);
	if (n)
		qsort(v, n, sizeof(*v), cmp_oldest);
	*ret = steal_pointer(&v);
	*ret_n = n;
	return 0;
}

static int remove_journal(int dir, uint64_t id)
{
	char name[64];
	int r = 0;

	snprintf(name, sizeof(name), "%" PRIu64 ".hjournal", id);
	if (unlinkat(dir, name, 0) < 0)
		r = -errno;
	snprintf(name, sizeof(name), "%" PRIu64 ".json", id);
	unlinkat(dir, name, 0);
	return r;
}

/* Oldest first until at most max_journals and max_bytes remain. */
static void retention(struct hmd_store *s, int dir, uid_t uid)
{
	_cleanup_free_ struct jent *v = NULL;
	uint64_t bytes = 0;
	size_t n = 0, i;

	if (scan(dir, &v, &n) < 0)
		return;
	for (i = 0; i < n; i++)
		bytes += v[i].size;
	for (i = 0; i < n && (n - i > s->max_journals || bytes > s->max_bytes); i++) {
		if (remove_journal(dir, v[i].id) == 0)
			hmd_debug("store: removed journal %" PRIu64 " of uid %u (retention)",
				  v[i].id, (unsigned)uid);
		bytes -= v[i].size;
	}
}

uint64_t hmd_store_max_journal(struct hmd_store *s)
{
	return HM_JOURNAL_STORE_MAX < s->max_bytes ? HM_JOURNAL_STORE_MAX : s->max_bytes;
}

int hmd_store_upload_buffer(struct hmd_store *s, uint64_t size)
{
	_cleanup_close_ int fd = -1;

	if (size < 4 || size > hmd_store_max_journal(s))
		return -EFBIG;
	/* The daemon's own memfd: reading and closing it never waits on a
	 * filesystem server, whatever the client does with its copy. Its
	 * pages are charged to whoever writes them (the client). */
	fd = memfd_create("hermetic-upload", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, size) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_GROW | F_SEAL_SHRINK) < 0)
		return -errno;
	return steal_fd(&fd);
}

int hmd_store_check_upload(struct hmd_store *s, int fd, uint64_t *ret_size, char *why,
			   size_t why_size)
{
	uint32_t magic = 0;
	struct stat st;

	/* From now on the bytes cannot change: the copy is what was checked.
	 * The kernel refuses the seal while a writable mapping exists. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SEAL) < 0) {
		int err = -errno;

		snprintf(why, why_size, "cannot seal the upload buffer%s: %s",
			 err == -EBUSY ? " (unmap it first)" : "", strerror(-err));
		return err;
	}
	if (fstat(fd, &st) < 0)
		return -errno;
	if (st.st_size < 4 || pread(fd, &magic, 4, 0) != 4 || magic != ZSTD_MAGIC) {
		snprintf(why, why_size, "not a journal: it does not start with a zstd frame");
		return -EBADMSG;
	}
	*ret_size = st.st_size;
	return 0;
}

static json_object *sidecar_json(const struct hm_journal_store *req, uid_t uid, uint64_t size)
{
	json_object *o = json_object_new_object();
	char cmd[HM_JOURNAL_COMMAND_MAX], t[64];
	struct timespec ts;

	memcpy(cmd, req->command, sizeof(cmd));
	cmd[sizeof(cmd) - 1] = 0;
	clock_gettime(CLOCK_REALTIME, &ts);
	json_object_object_add(o, "id", json_object_new_uint64(req->run_id));
	json_object_object_add(o, "command", json_object_new_string(cmd));
	json_object_object_add(o, "exit_status", json_object_new_int(req->exit_status));
	json_object_object_add(o, "seed", json_object_new_uint64(req->seed));
	json_object_object_add(o, "time", json_object_new_string(
						 hm_format_time(req->started_ns, t, sizeof(t))));
	json_object_object_add(o, "started_ns", json_object_new_int64(req->started_ns));
	json_object_object_add(o, "stored",
			       json_object_new_string(hm_format_time(
				       (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, t, sizeof(t))));
	json_object_object_add(o, "size", json_object_new_uint64(size));
	json_object_object_add(o, "uid", json_object_new_int64(uid));
	return o;
}

/* Create dir/.NAME.<hex> 0600 root-owned; its name goes to tmp. */
static int temp_file(int dir, const char *name, char *tmp, size_t size)
{
	uint64_t rnd = 0;
	int fd;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = hm_now_ns() ^ (uint64_t)getpid() << 40;
	snprintf(tmp, size, ".%s.%016" PRIx64, name, rnd);
	fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	/* 0600 whatever the umask. */
	if (fchmod(fd, 0600) < 0) {
		int r = -errno;

		close(fd);
		unlinkat(dir, tmp, 0);
		return r;
	}
	return fd;
}

int hmd_store_put(struct hmd_store *s, uid_t uid, const struct hm_journal_store *req, int fd,
		  uint64_t size, const bool *stop, char *why, size_t why_size)
{
	char name[64], side[64], tmp[96] = "", stmp[96] = "";
	_cleanup_close_ int dir = -1, out = -1, sout = -1;
	static char buf[1 << 18]; /* the store thread's alone */
	json_object *o = NULL;
	uint64_t off = 0;
	int err;

	dir = user_dir(s, uid, true);
	if (dir < 0) {
		snprintf(why, why_size, "cannot open the user's store directory: %s",
			 strerror(-dir));
		return dir;
	}
	snprintf(name, sizeof(name), "%" PRIu64 ".hjournal", req->run_id);
	snprintf(side, sizeof(side), "%" PRIu64 ".json", req->run_id);
	if (faccessat(dir, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0) {
		snprintf(why, why_size, "a journal of run %" PRIu64 " is already stored",
			 req->run_id);
		return -EEXIST;
	}

	out = temp_file(dir, name, tmp, sizeof(tmp));
	if (out < 0) {
		err = out;
		tmp[0] = 0;
		goto fail;
	}
	/* Copy exactly the size we checked, from offset 0 whatever the fd's
	 * position (the memfd is sealed: it cannot change meanwhile). */
	while (off < size) {
		size_t want = size - off < sizeof(buf) ? size - off : sizeof(buf);
		ssize_t n = pread(fd, buf, want, off);

		if (__atomic_load_n(stop, __ATOMIC_RELAXED)) {
			err = -ECANCELED;
			goto fail;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : -EBADMSG;
			goto fail;
		}
		if ((err = hm_write_all(out, buf, n)) < 0)
			goto fail;
		off += n;
	}
	if (fsync(out) < 0) {
		err = -errno;
		goto fail;
	}

	sout = temp_file(dir, side, stmp, sizeof(stmp));
	if (sout < 0) {
		err = sout;
		stmp[0] = 0;
		goto fail;
	}
	o = sidecar_json(req, uid, size);
	{
		const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);

		err = hm_write_all(sout, js, strlen(js));
	}
	json_object_put(o);
	if (err < 0 || fsync(sout) < 0) {
		err = err < 0 ? err : -errno;
		goto fail;
	}
	/* The journal's name appears only when it is complete; the sidecar is
	 * optional to readers (list falls back to the directory entry). */
	if (renameat(dir, tmp, dir, name) < 0) {
		err = -errno;
		goto fail;
	}
	tmp[0] = 0;
	if (renameat(dir, stmp, dir, side) < 0) {
		err = -errno;
		goto fail;
	}
	stmp[0] = 0;
	fsync(dir);
	retention(s, dir, uid);
	hmd_debug("store: journal of run %" PRIu64 " stored for uid %u (%" PRIu64 " bytes)",
		  req->run_id, (unsigned)uid, size);
	return 0;
fail:
	if (tmp[0])
		unlinkat(dir, tmp, 0);
	if (stmp[0])
		unlinkat(dir, stmp, 0);
	snprintf(why, why_size, "cannot store the journal: %s",
		 err == -ECANCELED ? "hermeticd is stopping" : strerror(-err));
	return err;
}

/* One list entry: the sidecar, with id, size and stored time from the
 * directory entry (they are authoritative). */
static json_object *entry_json(int dir, const struct jent *e)
{
	char name[64], data[SIDECAR_MAX], t[64];
	json_object *o = NULL;
	ssize_t n;
	int fd;

	snprintf(name, sizeof(name), "%" PRIu64 ".json", e->id);
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, data, sizeof(data) - 1);
		if (n >= 0)
			data[n] = 0;
		close(fd);
		if (n > 0)
			o = json_tokener_parse(data);
		if (o && !json_object_is_type(o, json_type_object)) {
			json_object_put(o);
			o = NULL;
		}
	}
	if (!o)
		o = json_object_new_object();
	json_object_object_add(o, "id", json_object_new_uint64(e->id));
	json_object_object_add(o, "size", json_object_new_uint64(e->size));
	json_object_object_add(o, "stored", json_object_new_string(hm_format_time(e->mtime_ns, t,
										   sizeof(t))));
	return o;
}

ssize_t hmd_store_list(struct hmd_store *s, uid_t uid, uint32_t skip, char *buf, size_t size)
{
	_cleanup_close_ int dir = -1;
	_cleanup_free_ struct jent *v = NULL;
	size_t n = 0, len;
	int err;

	if (size < 2)
		return -ENOBUFS;
	if (s->fd < 0)
		return -ENOSYS;
	dir = user_dir(s, uid, false);
	if (dir == -ENOENT) {
		memcpy(buf, "[]", 2);
		return 2;
	}
	if (dir < 0)
		return dir;
	if ((err = scan(dir, &v, &n)) < 0)
		return err;
	buf[0] = '[';
	len = 1;
	/* Newest first; stop at the first entry that does not fit. */
	for (size_t k = skip; k < n; k++) {
		json_object *o = entry_json(dir, &v[n - 1 - k]);
		const char *js = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN);
		size_t jl = strlen(js);

		if (len + (len > 1) + jl + 1 > size) {
			json_object_put(o);
			break;
		}
		if (len > 1)
			buf[len++] = ',';
		memcpy(buf + len, js, jl);
		len += jl;
		json_object_put(o);
	}
	buf[len++] = ']';
	return len;
}

int hmd_store_fetch(struct hmd_store *s, uid_t uid, uint64_t id, int *ret_fd, uint64_t *ret_size)
{
	_cleanup_close_ int dir = user_dir(s, uid, false), fd = -1;
	char name[64];
	struct stat st;

	if (dir < 0)
		return dir == -ENOENT ? -ENOENT : dir;
	snprintf(name, sizeof(name), "%" PRIu64 ".hjournal", id);
	fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -ENOENT;
	*ret_size = st.st_size;
	*ret_fd = steal_fd(&fd);
	return 0;
}

int hmd_store_rm(struct hmd_store *s, uid_t uid, uint64_t id, struct hm_journal_count *ret)
{
	_cleanup_close_ int dir = user_dir(s, uid, false);
	char name[64];
	struct stat st;
	int err;

	if (dir < 0)
		return dir;
	snprintf(name, sizeof(name), "%" PRIu64 ".hjournal", id);
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if ((err = remove_journal(dir, id)) < 0)
		return err;
	*ret = (struct hm_journal_count){ .removed = 1, .bytes = st.st_size };
	return 0;
}

int hmd_store_gc(struct hmd_store *s, uid_t uid, uint64_t older_than_s,
		 struct hm_journal_count *ret)
{
	_cleanup_close_ int dir = user_dir(s, uid, false);
	_cleanup_free_ struct jent *v = NULL;
	struct hm_journal_count c = {};
	struct timespec ts;
	int64_t cutoff;
	size_t n = 0;
	int err;

	if (dir == -ENOENT) {
		*ret = c;
		return 0;
	}
	if (dir < 0)
		return dir;
	if ((err = scan(dir, &v, &n)) < 0)
		return err;
	clock_gettime(CLOCK_REALTIME, &ts);
	/* At most about 292 years back: beyond that nothing is older. */
	if (older_than_s > 9000000000ULL)
		older_than_s = 9000000000ULL;
	cutoff = ((int64_t)ts.tv_sec - (int64_t)older_than_s) * 1000000000 + ts.tv_nsec;
	for (size_t i = 0; i < n; i++) {
		if (v[i].mtime_ns > cutoff)
			continue;
		if (remove_journal(dir, v[i].id) == 0) {
			c.removed++;
			c.bytes += v[i].size;
		}
	}
	*ret = c;
	return 0;
}

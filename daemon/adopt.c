// SPDX-License-Identifier: MIT
/*
 * Runs that outlive the daemon process.
 *
 * Each run has a record in <runtime-dir>/<subtree>.runs/ (root's, 0700):
 * what the daemon needs to go on serving it that is not in the kernel
 * (owner, flags, allow list, client, clock page). Its policy is in the
 * pinned maps and its hooks in the pinned links (pin.c), so a run whose
 * daemon died stays refused. At start-up, before the first event is read,
 * hmd_runs_adopt() takes every run cgroup of the subtree whose record and
 * policy entry both survived and whose cgroup is the one the record names;
 * every other run cgroup is killed and removed, as before pinning (fail
 * closed: a run this daemon cannot vouch for does not go on).
 *
 * An adopted run has no connection until its client (the same process,
 * `hermetic enroll`) reconnects and sends RUN_RECLAIM; one whose client is
 * gone is ended as a closed connection's run is (hmd_runs_check_orphans).
 */
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include "util.h"
#include "daemon.h"
#include "procfs.h"

#define RECORD_MAGIC 0x52444d48u /* "HMDR" */
#define RECORD_VERSION 1

struct run_record {
	uint32_t magic, version;
	uint64_t id, cgid;
	uint32_t uid, gid;
	int32_t client_pid;
	uint32_t flags;
	uint64_t client_start;
	uint64_t created_ns;
	char label[64];
	uint32_t has_clock, clock_dom;
	char clock_path[256];
	uint32_t n_allow, pad;
	struct hm_allow allow[HM_RUN_MAX_ALLOW];
};

int hmd_record_init(struct hmd *d, const char *runtime_dir, const char *subtree)
{
	struct stat st;
	int r;

	if ((size_t)snprintf(d->records, sizeof(d->records), "%s/%s.runs", runtime_dir, subtree) >=
	    sizeof(d->records))
		return -ENAMETOOLONG;
	if (mkdir(d->records, 0700) < 0 && errno != EEXIST)
		return -errno;
	if (lstat(d->records, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return -EPERM;
	/* A record is written and removed per run: in memory (tmpfs.c). */
	r = hmd_tmpfs_ensure(d->records, 64ULL << 20);
	if (r < 0)
		hmd_warn("run records stay on disk in %s (cannot mount a tmpfs there: %s)",
			 d->records, strerror(-r));
	d->records_mounted = r > 0;
	return 0;
}

static void record_path(struct hmd *d, uint64_t id, char *buf, size_t size, bool tmp)
{
	snprintf(buf, size, "%s/%srun-%" PRIu64, d->records, tmp ? "." : "", id);
}

int hmd_record_write(struct hmd *d, const struct hmd_run *r)
{
	struct run_record rec = {
		.magic = RECORD_MAGIC,
		.version = RECORD_VERSION,
		.id = r->id,
		.cgid = r->cgid,
		.uid = r->uid,
		.gid = r->gid,
		.client_pid = r->client_pid,
		.flags = r->flags,
		.client_start = r->client_start,
		.created_ns = r->created_ns,
		.has_clock = r->has_clock,
		.clock_dom = r->clock_dom,
		.n_allow = r->n_allow,
	};
	char tmp[600], path[600];
	int fd, err = 0;

	if (r->n_allow > HM_RUN_MAX_ALLOW)
		return -E2BIG;
	memcpy(rec.label, r->label, sizeof(rec.label));
	snprintf(rec.clock_path, sizeof(rec.clock_path), "%s", r->clock_path);
	if (r->n_allow)
		memcpy(rec.allow, r->allow, r->n_allow * sizeof(*r->allow));
	record_path(d, r->id, tmp, sizeof(tmp), true);
	record_path(d, r->id, path, sizeof(path), false);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	err = hm_write_all(fd, &rec, sizeof(rec));
	if (close(fd) < 0 && !err)
		err = -errno;
	/* Whole or not at all: a daemon dying mid-write leaves the old name. */
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

void hmd_record_remove(struct hmd *d, uint64_t run_id)
{
	char path[600];

	record_path(d, run_id, path, sizeof(path), false);
	unlink(path);
}

static int record_read(struct hmd *d, uint64_t id, struct run_record *ret)
{
	char path[600];
	int fd;
	ssize_t n;

	record_path(d, id, path, sizeof(path), false);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, ret, sizeof(*ret));
	close(fd);
	if (n != sizeof(*ret) || ret->magic != RECORD_MAGIC || ret->version != RECORD_VERSION ||
	    ret->id != id || ret->n_allow > HM_RUN_MAX_ALLOW)
		return -EBADMSG;
	ret->label[sizeof(ret->label) - 1] = 0;
	ret->clock_path[sizeof(ret->clock_path) - 1] = 0;
	return 0;
}

/* Why the run cgroup name/rfd cannot be adopted, or NULL when it can
 * (then *rec is its record). */
static const char *check(struct hmd *d, const char *name, int rfd, struct run_record *rec)
{
	struct hm_net_policy pol;
	struct stat st;
	uint64_t id;

	if (hm_parse_u64(name + 4, &id) < 0)
		return "not a run of hermeticd";
	if (record_read(d, id, rec) < 0)
		return "no record of the run";
	if (fstat(rfd, &st) < 0 || st.st_ino != rec->cgid)
		return "the cgroup is not the one recorded";
	if (!d->bpf || hmd_bpf_get_policy(d->bpf, rec->cgid, &pol) < 0)
		return "its policy did not survive (no pinned maps)";
	if ((rec->flags & HM_RUN_CLOCK) && !d->keeper)
		return "it has a virtual clock and this daemon has no keeper";
	return NULL;
}

static int adopt_one(struct hmd *d, int rfd, const struct run_record *rec)
{
	struct hmd_run *r = calloc(1, sizeof(*r));
	struct hm_net_policy pol;
	int err;

	if (!r)
		return -ENOMEM;
	r->fd = rfd;
	r->events_fd = -1;
	r->ks.snap_fd = -1;
	hm_audit_init(&r->audit, r->audit_procs, HMD_MAX_PROCS);
	r->id = rec->id;
	if (d->next_run_id <= rec->id)
		d->next_run_id = rec->id + 1; /* a new run never takes an adopted one's id */
	r->cgid = rec->cgid;
	r->uid = rec->uid;
	r->gid = rec->gid;
	r->client_pid = rec->client_pid;
	r->client_start = rec->client_start;
	r->created_ns = rec->created_ns;
	r->conn_id = -1;
	r->flags = rec->flags;
	r->adopted = true; /* RUN_ADOPT is for the first process of a new run */
	memcpy(r->label, rec->label, sizeof(r->label));
	if ((size_t)snprintf(r->path, sizeof(r->path), "%s/run-%" PRIu64, d->cg.subtree, r->id) >=
	    sizeof(r->path))
		r->path[0] = 0; /* (create_run has the same bound) */
	if (rec->n_allow) {
		r->allow = calloc(rec->n_allow, sizeof(*r->allow));
		if (!r->allow) {
			free(r);
			return -ENOMEM;
		}
		memcpy(r->allow, rec->allow, rec->n_allow * sizeof(*r->allow));
	}
	r->n_allow = rec->n_allow;
	/* The client: the same process (pid and start time), or gone. */
	r->client_pidfd = -1;
	if (rec->client_start && hm_proc_start(rec->client_pid) == rec->client_start) {
		r->client_pidfd = syscall(SYS_pidfd_open, rec->client_pid, 0);
		if (r->client_pidfd >= 0 && hm_proc_start(rec->client_pid) != rec->client_start) {
			close(r->client_pidfd);
			r->client_pidfd = -1;
		}
	}
	if (rec->has_clock) {
		snprintf(r->clock_path, sizeof(r->clock_path), "%s", rec->clock_path);
		err = hmd_keeper_adopt(d->keeper, r->id, r->cgid, rec->clock_dom, r->clock_path);
		if (err < 0)
			/* The run keeps its clock itself (preload/vclock.c). */
			hmd_warn("run %" PRIu64 ": cannot take its clock over (%s): its processes "
				 "keep it themselves",
				 r->id, strerror(-err));
		else {
			r->has_clock = true;
			r->clock_dom = rec->clock_dom;
		}
	}
	/* A blocked run without names: the shared resolver of this daemon
	 * (whose entries of the last one were deleted at load). A run with
	 * names lost its resolver: its DNS stays refused (docs/network.md). */
	if (!hmd_bpf_get_policy(d->bpf, r->cgid, &pol) &&
	    (pol.flags & (HM_NET_DNS | HM_NET_DNS_NONE)) == (HM_NET_DNS | HM_NET_DNS_NONE)) {
		err = hmd_dns_start(d->bpf, r->cgid, NULL, 0, &r->dns);
		if (err < 0)
			hmd_warn("run %" PRIu64 ": no resolver (%s): its DNS is refused", r->id,
				 strerror(-err));
	}
	r->restarted_ns = hmd_wall_ns();
	r->next = d->runs;
	d->runs = r;
	d->n_runs++;
	return 0;
}

static bool is_adopted(void *ctx, uint64_t cgid)
{
	return hmd_runs_find_cgid(ctx, cgid) != NULL;
}

int hmd_runs_adopt(struct hmd *d)
{
	int dfd = openat(d->cg.subtree_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = dfd >= 0 ? fdopendir(dfd) : NULL;
	struct dirent *de;
	int n = 0;

	if (!dir) {
		if (dfd >= 0)
			close(dfd);
		return -errno;
	}
	while ((de = readdir(dir))) {
		struct run_record rec = { 0 };
		const char *why;
		int rfd;

		if (strncmp(de->d_name, "run-", 4) || de->d_type != DT_DIR)
			continue;
		rfd = openat(d->cg.subtree_fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (rfd < 0)
			continue;
		why = check(d, de->d_name, rfd, &rec);
		if (!why && adopt_one(d, rfd, &rec) == 0) {
			hmd_log("adopted run %s of uid %u (%s): still enforced, %s", de->d_name + 4,
				rec.uid, rec.label,
				hmd_runs_find(d, rec.id)->client_pidfd >= 0
					? "waiting for its client to reconnect"
					: "its client is gone, ending it");
			n++;
			continue;
		}
		/* Kill and remove it, so the maps and the cgroups agree. */
		hmd_cgroup_kill(rfd);
		for (int i = 0; i < 100 && hmd_cgroup_populated(rfd) == 1; i++)
			usleep(10000);
		close(rfd);
		if (hmd_cgroup_remove_name(&d->cg, de->d_name) == 0)
			hmd_log("removed stale run cgroup %s/%s (%s)", d->cg.subtree, de->d_name,
				why ? why : "cannot adopt it");
		if (rec.magic == RECORD_MAGIC) {
			if (rec.has_clock && rec.clock_path[0])
				unlink(rec.clock_path);
			hmd_record_remove(d, rec.id);
		}
	}
	closedir(dir);
	/* Records of runs whose cgroup is gone. */
	if ((dir = opendir(d->records))) {
		while ((de = readdir(dir))) {
			uint64_t id;
			struct run_record rec;

			if (strncmp(de->d_name, "run-", 4) || hm_parse_u64(de->d_name + 4, &id) < 0 ||
			    hmd_runs_find(d, id))
				continue;
			if (record_read(d, id, &rec) == 0 && rec.has_clock && rec.clock_path[0])
				unlink(rec.clock_path);
			hmd_record_remove(d, id);
		}
		closedir(dir);
	}
	/* Entries of runs that are gone would fill the maps. */
	if (d->bpf)
		hmd_bpf_prune(d->bpf, is_adopted, d);
	if (d->sched)
		hmd_sched_settle(d->sched);
	return n;
}

void hmd_runs_check_orphans(struct hmd *d)
{
	for (struct hmd_run *r = d->runs; r; r = r->next) {
		if (!r->restarted_ns || r->conn_id >= 0 || r->ending)
			continue;
		if (r->client_pidfd >= 0 && hmd_pidfd_alive(r->client_pidfd) == 0)
			continue;
		hmd_log("run %" PRIu64 ": its client (pid %d) is gone; ending the run", r->id,
			(int)r->client_pid);
		hmd_runs_end(d, r, false);
	}
}

uint64_t hmd_runs_lost(struct hmd *d, struct hmd_run *r)
{
	struct hm_net_policy pol;
	uint64_t made;

	if (!r->restarted_ns || hmd_bpf_get_policy(d->bpf, r->cgid, &pol) < 0)
		return 0;
	made = pol.emitted + hmd_bpf_dropped(d->bpf, r->cgid);
	return made > r->received ? made - r->received : 0;
}

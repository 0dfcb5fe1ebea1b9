// SPDX-License-Identifier: MIT
/*
 * What outlives the daemon process: its BPF maps and links pinned in bpffs,
 * <bpffs>/hermetic/<subtree>/, one directory per subtree so that daemons of
 * different subtrees (the tests' private ones) never share a pin.
 *
 * A link pinned there stays attached when hermeticd dies (kill -9, a crash,
 * an upgrade): the runs' cgroups stay refused with the maps they were given.
 * The next daemon of the same subtree reuses the pinned maps (libbpf
 * opens them by their pin paths at load) and takes the links over (cgroup
 * links are moved to its own programs with BPF_LINK_UPDATE). A daemon that
 * stops with no run left unpins everything: then nothing is enforced
 * because nothing is enrolled.
 *
 * bpffs: the one at <runtime-dir>/bpf if we mounted it before (a daemon
 * before us did), else the system's at /sys/fs/bpf (systemd mounts it),
 * both found in /proc/self/mountinfo, never assumed; else one is mounted at
 * <runtime-dir>/bpf (a bpffs instance lives as long as it is mounted, which
 * is as long as pins need) and unmounted again once it holds no pin of any
 * subtree. Another bpffs somewhere else (another daemon's runtime
 * directory, say) is never used: its owner may unmount it.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include "util.h"
#include "daemon.h"

/* Is there a bpffs mounted at exactly path? 0, -ENOENT or -errno. */
static int find_bpffs(const char *path)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/mountinfo", "re");
	char line[4096];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char mnt[1024], fstype[64], *sep = strstr(line, " - ");

		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "bpf"))
			continue;
		if (sscanf(line, "%*s %*s %*s %*s %1023s", mnt) != 1 || strchr(mnt, '\\'))
			continue;
		if (!strcmp(mnt, path))
			return 0;
	}
	return -ENOENT;
}

int hmd_pin_setup(struct hmd_pins *p, const char *runtime_dir, const char *subtree)
{
	char path[sizeof(p->dir)];
	struct stat st;
	int r;

	p->mounted = true; /* ours: at <runtime-dir>/bpf */
	if ((size_t)snprintf(p->mount, sizeof(p->mount), "%s/bpf", runtime_dir) >= sizeof(p->mount))
		return -ENAMETOOLONG;
	r = find_bpffs(p->mount);
	if (r == -ENOENT && find_bpffs("/sys/fs/bpf") == 0) {
		snprintf(p->mount, sizeof(p->mount), "/sys/fs/bpf");
		p->mounted = false;
	} else if (r == -ENOENT) {
		if (mkdir(p->mount, 0700) < 0 && errno != EEXIST)
			return -errno;
		if (mount("bpffs", p->mount, "bpf", MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0700") <
		    0)
			return -errno;
	} else if (r < 0) {
		return r;
	}
	snprintf(path, sizeof(path), "%s/hermetic", p->mount);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	if ((size_t)snprintf(p->dir, sizeof(p->dir), "%s/%s", path, subtree) >= sizeof(p->dir))
		return -ENAMETOOLONG;
	if (mkdir(p->dir, 0700) < 0 && errno != EEXIST)
		return -errno;
	/* Only root may reach the pins: they hold the policy of every run. */
	if (lstat(p->dir, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return -EPERM;
	return 0;
}

/* Remove the (empty) pin directory, and a bpffs of our own once no
 * subtree has pins in it. */
void hmd_pin_teardown(struct hmd_pins *p)
{
	char path[sizeof(p->dir)];

	if (!p->dir[0])
		return;
	if (rmdir(p->dir) < 0 && errno != ENOENT && errno != ENOTEMPTY)
		hmd_warn("Failed to remove '%s': %s", p->dir, strerror(errno));
	snprintf(path, sizeof(path), "%s/hermetic", p->mount);
	if (rmdir(path) == 0 && p->mounted) {
		/* Another daemon may use the same runtime directory's bpffs: it
		 * is unmounted only when empty (the rmdir above succeeded). */
		if (umount2(p->mount, MNT_DETACH) == 0)
			rmdir(p->mount);
	}
}

int hmd_pin_maps(struct bpf_object *obj, const char *dir)
{
	struct bpf_map *m;
	char path[600];

	if (!dir)
		return 0; /* no bpffs: nothing outlives this process */
	bpf_object__for_each_map(m, obj) {
		if (bpf_map__is_internal(m))
			continue; /* .rodata and friends belong to one program load */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, bpf_map__name(m)) >=
		    sizeof(path))
			return -ENAMETOOLONG;
		if (bpf_map__set_pin_path(m, path))
			return -errno;
	}
	return 0;
}

void hmd_pin_unpin_maps(struct bpf_object *obj)
{
	struct bpf_map *m;

	bpf_object__for_each_map(m, obj)
		if (bpf_map__pin_path(m) && bpf_map__unpin(m, NULL) && errno != ENOENT)
			hmd_warn("Failed to unpin map '%s': %s", bpf_map__name(m), strerror(errno));
}

static int link_path(char *buf, size_t size, const char *dir, const struct bpf_program *prog)
{
	if ((size_t)snprintf(buf, size, "%s/link_%s", dir, bpf_program__name(prog)) >= size)
		return -ENAMETOOLONG;
	return 0;
}

struct bpf_link *hmd_pin_link_adopt(const char *dir, struct bpf_program *prog, uint64_t cgroup_id,
				    bool *ret_upgraded)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);
	struct bpf_link *l;
	char path[600];

	*ret_upgraded = false;
	if (!dir || link_path(path, sizeof(path), dir, prog) < 0 || access(path, F_OK) < 0)
		return NULL;
	l = bpf_link__open(path);
	if (!l)
		return NULL;
	memset(&info, 0, sizeof(info));
	/* A cgroup link must be on our subtree's cgroup: one left on a subtree
	 * that was since removed and made again is of no use (and gone with
	 * that cgroup in all but name). */
	if (cgroup_id && (bpf_obj_get_info_by_fd(bpf_link__fd(l), &info, &len) ||
			  info.type != BPF_LINK_TYPE_CGROUP || info.cgroup.cgroup_id != cgroup_id)) {
		bpf_link__unpin(l);
		bpf_link__destroy(l);
		errno = ESTALE;
		return NULL;
	}
	/* The enforcement moves to this daemon's program in one step, with
	 * no moment without a program (BPF_LINK_UPDATE). The kernel cannot do
	 * that for tracing links: those keep the program that was pinned,
	 * which uses the same pinned maps, until no run needs them. */
	if (bpf_link__update_program(l, prog) == 0)
		*ret_upgraded = true;
	return l;
}

int hmd_pin_link(const char *dir, struct bpf_program *prog, struct bpf_link *l)
{
	char path[600];
	int r;

	if (!dir)
		return 0;
	if ((r = link_path(path, sizeof(path), dir, prog)) < 0)
		return r;
	if (bpf_link__pin_path(l))
		return 0; /* adopted: pinned already */
	return bpf_link__pin(l, path) ? -errno : 0;
}

/* Unpin and detach a link (unpin), or only let go of it, leaving it
 * attached through its pin. */
void hmd_pin_link_drop(struct bpf_link *l, bool unpin)
{
	int fd;

	if (!l)
		return;
	if (unpin) {
		if (bpf_link__pin_path(l) && bpf_link__unpin(l) && errno != ENOENT)
			hmd_warn("Failed to unpin link: %s", strerror(errno));
		bpf_link__destroy(l);
		return;
	}
	/* Not detach: for a tracepoint link libbpf would disable the perf
	 * event the pinned link still uses. Close our descriptor only. */
	fd = bpf_link__fd(l);
	bpf_link__disconnect(l);
	bpf_link__destroy(l);
	if (fd >= 0)
		close(fd);
}

// SPDX-License-Identifier: MIT
/*
 * Detaching tracing links off the caller's thread. Closing the last
 * descriptor of a tracepoint link waits for RCU grace periods: measured
 * 70 to 130 ms per link on a loaded 2-core machine, about 0.9 s for the 15
 * tracing links, which the main loop used to spend, deaf to every enroll,
 * each time the daemon had been idle for 10 s (docs/performance.md).
 *
 * The links are unpinned at once, by the caller (so no daemon after us can
 * take a dying link over), and destroyed by a thread. Whoever attaches
 * again waits for that thread first (hmd_detach_wait): a program must never
 * be attached twice, or the scheduler counts and kernel events would count
 * twice.
 */
#include <bpf/libbpf.h>
#include <bpf/bpf.h>
#include <pthread.h>
#include "util.h"
#include "daemon.h"

struct job {
	struct bpf_link *links[HMD_DETACH_MAX];
	int n;
	int flush_fd; /* a hash map to empty once the links are gone, or -1 */
};

static void *detach_main(void *arg)
{
	struct job *j = arg;
	uint64_t key;

	for (int i = 0; i < j->n; i++)
		bpf_link__destroy(j->links[i]);
	/* Entries made until the last program went: all stale now. */
	if (j->flush_fd >= 0)
		while (!bpf_map_get_next_key(j->flush_fd, NULL, &key))
			if (bpf_map_delete_elem(j->flush_fd, &key))
				break;
	free(j);
	return NULL;
}

void hmd_detach_wait(struct hmd_detacher *dt)
{
	if (!dt->busy)
		return;
	pthread_join(dt->thread, NULL);
	dt->busy = false;
}

int hmd_detach_async(struct hmd_detacher *dt, struct bpf_link **links, int n, int flush_fd)
{
	struct job *j;

	hmd_detach_wait(dt);
	j = calloc(1, sizeof(*j));
	if (!j || n > HMD_DETACH_MAX)
		goto sync;
	for (int i = 0; i < n; i++) {
		if (bpf_link__pin_path(links[i]) && bpf_link__unpin(links[i]) && errno != ENOENT)
			hmd_warn("Failed to unpin link: %s", strerror(errno));
		j->links[i] = links[i];
	}
	j->n = n;
	j->flush_fd = flush_fd;
	if (pthread_create(&dt->thread, NULL, detach_main, j) == 0) {
		dt->busy = true;
		return 0;
	}
sync:
	/* No thread: as before, here and now. */
	free(j);
	for (int i = 0; i < n; i++)
		hmd_pin_link_drop(links[i], true);
	if (flush_fd >= 0) {
		uint64_t key;

		while (!bpf_map_get_next_key(flush_fd, NULL, &key))
			if (bpf_map_delete_elem(flush_fd, &key))
				break;
	}
	return 0;
}

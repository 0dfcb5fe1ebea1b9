// SPDX-License-Identifier: MIT
/*
 * Upload buffers per uid. A JOURNAL_UPLOAD buffer is a memfd of the
 * daemon's as large as the journal it will hold (up to the store's cap,
 * 256 MiB); a user in the socket group could otherwise open many
 * connections and hold one on each. Each buffer's size is charged to its
 * uid when it is made and released when it is stored (the store thread's
 * answer), replaced, refused by the check, or its connection closes, so
 * what one uid can make the daemon hold is bounded by
 * --max-upload-bytes-per-user, root included (it is memory, not a say in
 * what the daemon does).
 */
#include "util.h"
#include "daemon.h"

static struct hmd_upload_use *find(struct hmd *d, uid_t uid, bool add)
{
	struct hmd_upload_use *free_slot = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(d->upload_use); i++) {
		struct hmd_upload_use *u = &d->upload_use[i];

		if (u->bytes && u->uid == uid)
			return u;
		if (!u->bytes && !free_slot)
			free_slot = u;
	}
	if (add && free_slot)
		free_slot->uid = uid;
	return add ? free_slot : NULL;
}

uint64_t hmd_upload_held(struct hmd *d, uid_t uid)
{
	struct hmd_upload_use *u = find(d, uid, false);

	return u ? u->bytes : 0;
}

int hmd_upload_charge(struct hmd *d, uid_t uid, uint64_t size, uint64_t released)
{
	struct hmd_upload_use *u;
	uint64_t held = hmd_upload_held(d, uid);

	held = held > released ? held - released : 0;
	if (size > d->max_upload_per_user || held > d->max_upload_per_user - size)
		return -EDQUOT;
	/* One slot per uid with buffers; there are at most as many buffers
	 * as connections plus queued jobs, so a slot is always there. */
	u = find(d, uid, true);
	if (!u)
		return -ENOMEM;
	u->bytes = held + size;
	return 0;
}

void hmd_upload_release(struct hmd *d, uid_t uid, uint64_t size)
{
	struct hmd_upload_use *u = find(d, uid, false);

	if (!u)
		return;
	u->bytes = u->bytes > size ? u->bytes - size : 0;
}

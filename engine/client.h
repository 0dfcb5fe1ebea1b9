/* SPDX-License-Identifier: MIT */
/*
 * Talking to hermeticd (client.c): one request, one reply, on a connection
 * the caller owns. Nothing here exits or prints: every failure is -errno,
 * and c says whose it was. A run outlives a restart of hermeticd, so a
 * connection that closed is an answer like any other (-ECONNRESET, or
 * -ENOTCONN once c->sock is -1), which the caller may wait out
 * (reconnect.c); a verb that cannot go on without the daemon dies with
 * c->why (cli/client.c cli_call).
 */
#ifndef HERMETIC_ENGINE_CLIENT_H
#define HERMETIC_ENGINE_CLIENT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "proto.h"

struct hm_client {
	int sock; /* -1: not connected */
	uint32_t seq; /* of the request sent last */
	/* The last call's failure: the daemon's own answer (HM_REP_ERROR, in
	 * rep_err), or the transport's, in words in why; broken when the
	 * connection cannot be trusted for another request (an error of the
	 * send other than a closed peer, a reply out of protocol). */
	bool daemon_said;
	bool broken;
	struct hm_error rep_err;
	char why[160];
};

/* HERMETIC_SOCKET, or the system daemon's socket. */
const char *client_socket_path(void);
/* Connect: the socket, or -errno (-ENAMETOOLONG: the path does not fit).
 * The process becomes not dumpable: nothing of a run may take the
 * connection from it. */
int client_connect(void);
/* Send a request: 0, or -errno (a closed peer's -EPIPE or -ECONNRESET may
 * still have an answer to read: pass what this returned to client_recv). */
int client_send(struct hm_client *c, uint16_t type, const void *req, uint32_t len, int send_fd);
/* Its reply, of type expect, copied into rep (at most rep_size bytes;
 * exactly rep_size when exact), up to HM_MSG_MAX_FDS descriptors in ret_fds
 * (-1 where none came; all closed when ret_fds is NULL). Returns the
 * payload's length, or -errno with *ret_msg (when not NULL) the daemon's
 * message or the transport's (in c, valid until the next call on c). */
ssize_t client_recv(struct hm_client *c, int sent, uint16_t expect, void *rep, size_t rep_size,
		    bool exact, int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg);
/* Requests sent together, their replies read in order: one hand-off to
 * hermeticd for all (no descriptors either way). r[i].ret and r[i].msg as
 * client_recv's; a request that could not be sent is -ECONNRESET, to be
 * asked again as after a closed connection. */
struct client_req {
	uint16_t type, expect;
	const void *req;
	uint32_t len;
	void *rep;
	size_t rep_size;
	bool exact;
	ssize_t ret;
	const char *msg;
};
void client_batch(struct hm_client *c, struct client_req *r, int n);
/* Both halves; client_call keeps only the first descriptor (ret_fd). */
ssize_t client_call_fds(struct hm_client *c, uint16_t type, const void *req, uint32_t len,
			int send_fd, uint16_t expect, void *rep, size_t rep_size, bool exact,
			int ret_fds[HM_MSG_MAX_FDS], const char **ret_msg);
ssize_t client_call(struct hm_client *c, uint16_t type, const void *req, uint32_t len,
		    int send_fd, uint16_t expect, void *rep, size_t rep_size, bool exact, int *ret_fd,
		    const char **ret_msg);
/* Store a journal (read from fd, whole) for req's run: JOURNAL_UPLOAD,
 * copy, JOURNAL_STORE. 0, or -errno with *ret_msg set when the daemon
 * refused (NULL when the copy itself failed). */
int client_store_journal(struct hm_client *c, const struct hm_journal_store *req, int fd,
			 const char **ret_msg);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Descriptors over a unix socket (SCM_RIGHTS), one way for the wire protocol
 * (proto.c) and the supervisor's child handing its seccomp listener to
 * enroll (engine/supervise.c). Both sides are async-signal-safe (sendmsg,
 * recvmsg, close): the child sends between fork and exec.
 */
#ifndef HERMETIC_FDPASS_H
#define HERMETIC_FDPASS_H

#include <stdbool.h>
#include <sys/types.h>
#include <sys/uio.h>

/* Room for this many descriptors in what one receive takes: more than any
 * sender here passes (HM_MSG_MAX_FDS), so a peer's extra ones arrive and
 * are closed by us; past it the kernel closes them (MSG_CTRUNC). */
#define HM_FDPASS_ROOM 4

/* sendmsg of iov[0..niov) with fds[0..nfds) (nfds <= HM_FDPASS_ROOM) as one
 * SCM_RIGHTS message; MSG_NOSIGNAL, again on EINTR. Bytes sent, or -errno
 * (-EINVAL for nfds out of range). */
ssize_t hm_fdpass_send(int sock, const struct iovec *iov, int niov, const int *fds, int nfds);

/* recvmsg into iov[0..niov) (MSG_CMSG_CLOEXEC, again on EINTR), keeping up
 * to max_fds received descriptors in fds (*nfds of them) and closing every
 * other one on every path. max_fds <= 0: no descriptor is ever installed
 * (the kernel drops them). Bytes received (0: end of file, or an empty
 * packet), or -errno; *flags the message's flags (MSG_TRUNC, MSG_CTRUNC),
 * *ctl whether it carried control data. */
ssize_t hm_fdpass_recv(int sock, struct iovec *iov, int niov, int *fds, int max_fds, int *nfds,
		       int *flags, bool *ctl);

#endif

/* SPDX-License-Identifier: MIT */
/*
 * The run's clock page as a descriptor (include/hermetic/vclock.h).
 *
 * hermeticd creates each run's page as a root-only file in a root-only
 * directory and hands it to enroll as a descriptor; enroll passes it to CMD
 * as an inherited descriptor and names it in the environment:
 *
 *     HERMETIC_CLOCK_FD=<fd>:<st_dev>:<st_ino>     (decimal)
 *
 * st_dev and st_ino tell a process that the number still holds the page and
 * not some other file a program put there. A process that finds no valid
 * descriptor (a program closed it with a raw syscall) asks hermeticd for its
 * run's page (HM_REQ_RUN_CLOCK: the daemon answers only a process inside
 * the run, by its cgroup). Nothing here names a path: no other process of
 * the same user can open the page, whatever it reads in /proc/PID/environ
 * or /proc/PID/maps.
 *
 * Raw syscalls only (lib/rawsys.h), no allocation: usable in the shim's
 * start-up, in vfork children, and by any supervisor that needs the run's
 * clock (hm_clockpage_from_env).
 */
#ifndef HERMETIC_CLOCKFD_H
#define HERMETIC_CLOCKFD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hm_vclock;

struct hm_clockfd {
	int fd;
	uint64_t dev, ino;
	/* ":c" after them: the parent's program closed the descriptor before
	 * this exec (the shim kept it open to hand the page down): the child
	 * maps the page and closes it before its program runs. */
	bool closed;
};

/* Where the page's descriptor sits: at or above HM_CLOCKFD_MIN, out of
 * the range programs scan for descriptors they did not expect (Go's
 * os/exec tests look at 3 to 100 and skip TestExtraFiles on any: the page
 * at 100 made a test that passes bare skip enrolled), and of the low
 * numbers they dup2 onto; at or above HM_CLOCKFD_LOW where the soft
 * RLIMIT_NOFILE is lower. */
#define HM_CLOCKFD_MIN 1000
#define HM_CLOCKFD_LOW 100

/* Longest "fd:dev:ino:c" with its NUL. */
#define HM_CLOCKFD_STR (11 + 1 + 20 + 1 + 20 + 2 + 1)

/* Parse "fd:dev:ino". 0 or -EINVAL. */
int hm_clockfd_parse(const char *v, struct hm_clockfd *ret);
/* Format c as "fd:dev:ino" into buf (HM_CLOCKFD_STR bytes). */
void hm_clockfd_format(const struct hm_clockfd *c, char *buf);
/* c->dev, c->ino of the file fd holds (c->fd = fd). 0 or -errno. */
int hm_clockfd_stat(int fd, struct hm_clockfd *c);
/* Does c->fd still hold the page c names? 0, -EBADF (closed) or -ESTALE
 * (another file). */
int hm_clockfd_check(const struct hm_clockfd *c);
/* Map the page fd holds (MAP_SHARED, HM_VCLOCK_SIZE bytes) after checking
 * its size and layout. The mapping, or NULL with -errno in *ret_err
 * (-EBADMSG: not a page of this version). */
struct hm_vclock *hm_clockpage_map(int fd, int *ret_err);
/* Ask hermeticd at socket_path (NULL: the default socket) for the page of
 * the caller's run. A new descriptor (O_CLOEXEC) or -errno. */
int hm_clockpage_ask(const char *socket_path);

/*
 * All of it, from the values of HERMETIC_CLOCK_FD and HERMETIC_SOCKET (either
 * NULL): the descriptor named, if it is still the page; else (closed, or
 * another file at its number) one asked from the daemon (*ret_asked = true;
 * it is O_CLOEXEC, the caller decides where to keep it). Returns the mapping and the descriptor in *ret, or NULL with
 * -errno in *ret_err (-ENOENT: no page named).
 */
struct hm_vclock *hm_clockpage_from_env(const char *clock_fd, const char *socket_path,
					struct hm_clockfd *ret, bool *ret_asked, int *ret_err);
/* The same, with the two variables looked up in envp (an environment array,
 * e.g. the one a supervisor is about to exec a program with). */
struct hm_vclock *hm_clockpage_from_envp(char *const envp[], struct hm_clockfd *ret,
					 bool *ret_asked, int *ret_err);

#endif

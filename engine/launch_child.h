/* SPDX-License-Identifier: MIT */
/*
 * enroll's child between its clone (or fork) and CMD's exec
 * (launch_child.c), and what it tells enroll on its error pipe (launch.c).
 */
#ifndef HERMETIC_ENGINE_LAUNCH_CHILD_H
#define HERMETIC_ENGINE_LAUNCH_CHILD_H

#include <stdbool.h>
#include <sys/un.h>

struct enroll;

/* What the child writes to its error pipe: its ready mark (LAUNCH_READY:
 * its libc calls are done, launch.c), then, only if it gives up before
 * CMD's exec, what failed. The pipe closes at the exec. */
enum { LAUNCH_EXEC = 1, LAUNCH_ADOPT = 2, LAUNCH_CONFINE = 3, LAUNCH_READY = 4 };
struct launch_err {
	int kind;
	int err;
	char msg[sizeof(((struct hm_error *)0)->msg)];
};


/* The child's orders: a copy of them lies at the top of its stack when it
 * shares enroll's memory (clone_vm_start), so nothing it reads of them is
 * in a frame of enroll's. */
struct launch_child {
	struct enroll *e;
	bool adopt; /* ask hermeticd (at daemon) to adopt it into the run */
	int err_fd; /* the error pipe's write end (close-on-exec) */
	struct sockaddr_un daemon;
};

/* In the child: set up and exec CMD; never returns (exits on failure). */
void launch_child_exec(const struct launch_child *a) __attribute__((noreturn));
/* The same, as clone_vm_start's fn (arg: a struct launch_child). */
int launch_child_main(void *arg);

#endif

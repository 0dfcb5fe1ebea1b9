/* SPDX-License-Identifier: MIT */
/*
 * The run's boundary as the engine sets it up: the disposable root of
 * --fs isolate and the environment CMD starts with. The options are
 * struct hm_boundary (lib/boundary.h), which replay will take from a journal;
 * this is the state of one run.
 */
#ifndef HERMETIC_ENGINE_ISOLATE_H
#define HERMETIC_ENGINE_ISOLATE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/stat.h>
#include "boundary.h"
#include "engine.h"

struct boundary {
	struct hm_boundary opt;
	/* this run */
	char parent[PATH_MAX]; /* canonical temp parent */
	int parent_fd; /* O_PATH descriptor of it */
	char name[16]; /* "hm-XXXXXX" */
	char root[PATH_MAX]; /* parent/name, "" without a root */
	char work[PATH_MAX]; /* CMD's working directory */
	struct stat root_st; /* the root as created, checked before removal */
	char **env_before; /* the environment enroll started with */
	char **explicit; /* names set by --fs isolate or --env */
	size_t n_explicit;
	char *exec_file; /* argv[0], made absolute when relative and we chdir */
	int cwd_fd; /* enroll's own working directory */
	bool started; /* CMD ran: the root may be in use */
	bool finished;
};

void boundary_init(struct boundary *b);

/* After option parsing: the options hang together and the temp parent is
 * a directory outside every git working tree. Returns 0, or -EINVAL with a
 * message for the user in msg. */
int boundary_validate(struct boundary *b, char *msg, size_t size);

/* Create the root (with --fs isolate) and build CMD's environment in ours:
 * --scrub-env, then the isolate variables, then --env/--unset in order. The
 * run's HERMETIC_* variables and LD_PRELOAD are set afterwards by enroll and
 * so always survive. Returns 0, or -errno with the reason in err: -EINVAL
 * when the options ask for what cannot be (a temp parent path too long),
 * anything else when the system refused. A root it created is removed at
 * exit unless CMD may have used it. */
int boundary_setup(struct boundary *b, char *const *argv, struct eng_error *err);

/* --print-boundary: the boundary as one JSON object on one line (malloc'd
 * in *ret), once the environment is final. 0, or -ENOMEM. */
int boundary_json(struct boundary *b, char **ret, struct eng_error *err);

/* Around starting CMD: enter its working directory (0, or -errno), and
 * come back. */
int boundary_enter(struct boundary *b, struct eng_error *err);
void boundary_leave(struct boundary *b);

/* The run is over. With run_empty (the cgroup proved no process left) the
 * root is removed, unless --keep-root; otherwise, or when removal fails,
 * it is kept and its path given as the warning "kept root: PATH". */
void boundary_finish(struct boundary *b, bool run_empty);

#endif

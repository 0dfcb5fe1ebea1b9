/* SPDX-License-Identifier: MIT */
/*
 * enroll's child started as posix_spawn starts one (clone_vm.c): CLONE_VM
 * on a stack of its own, so that no page table is copied at the clone, no
 * page is copied on write after it, and nothing is torn down at the
 * child's exec. x86_64 builds without a sanitizer only; elsewhere
 * clone_vm_built() is false and launch.c forks as before.
 */
#ifndef HERMETIC_ENGINE_CLONE_VM_H
#define HERMETIC_ENGINE_CLONE_VM_H

#include <stdbool.h>
#include <stddef.h>

/* The child's stack: a mapping of len bytes at map, its lowest page a
 * guard; map NULL when there is none. */
struct clone_vm_stack {
	void *map;
	size_t len;
};

/* The name the stack's mapping has in /proc/PID/maps, where the kernel
 * names anonymous mappings (CONFIG_ANON_VMA_NAME). */
#define CLONE_VM_STACK_NAME "hermetic-child-stack"

bool clone_vm_built(void);
/* A stack of CLONE_VM_STACK_SIZE and `extra` bytes more (what the child
 * may copy onto it: an argv for /bin/sh), plus the guard. -errno. */
int clone_vm_stack_alloc(struct clone_vm_stack *s, size_t extra);
/* The child: clone3(CLONE_VM, into cgroup_fd when >= 0) running fn on a
 * copy of arg's arg_len bytes at the top of s (so nothing it reads lives
 * in a frame of ours), with every signal blocked across the clone in the
 * caller (fn unblocks what it wants once its handlers are the default).
 * fn never returns into our frames: its value is the child's exit status.
 * The pid, or -errno (-ENOSYS: no clone3 here). */
long clone_vm_start(struct clone_vm_stack *s, int cgroup_fd, int (*fn)(void *), const void *arg,
		    size_t arg_len);
/* Unmap s, once its child is dead or past its exec. Idempotent. */
void clone_vm_stack_free(struct clone_vm_stack *s);
/* How many stacks this process has mapped and not yet freed. */
int clone_vm_stacks_live(void);

#define CLONE_VM_STACK_SIZE (512 * 1024)

/* For tests: HERMETIC_TEST_HEAP_RO=1 makes enroll's [heap] read-only from
 * just before the clone until the child's ready mark (launch.c), so that a
 * child that allocated or used stdio there would fault and the run fail.
 * clone_vm_heap_find reads where it is (-ENOENT: no [heap]);
 * clone_vm_heap_protect (raw: errno untouched) makes it read-only or not. */
struct clone_vm_heap {
	unsigned long start, end;
};
int clone_vm_heap_find(struct clone_vm_heap *h);
long clone_vm_heap_protect(const struct clone_vm_heap *h, bool ro);

#endif

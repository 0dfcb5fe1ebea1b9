// SPDX-License-Identifier: MIT
/*
 * enroll's child started with CLONE_VM on a stack of its own, as glibc's
 * posix_spawn starts one (issue 30): the child shares enroll's memory
 * until its exec, so the clone copies no page table, no page of enroll's
 * is copied on write while the child confines itself, and its exec drops
 * a reference instead of tearing an address space down.
 *
 * What sharing the memory asks of the child (launch.c keeps it, and says
 * so where it does):
 *  - it never returns into a frame of ours: fn runs on the new stack from
 *    a frame of its own (hm_clone3_vm below) and its return is exit(2);
 *    what it reads of its argument is a copy at the top of its stack;
 *  - it allocates nothing and uses no stdio: malloc's arenas and the
 *    FILEs and their locks are enroll's own, and enroll runs on meanwhile
 *    (no CLONE_VFORK: enroll answers the child's adoption, its supervisor's
 *    listener and its exec notification while the child waits for them);
 *  - descriptors, signal handlers, the signal mask, seccomp filters,
 *    no_new_privs, the Landlock domain, capabilities, umask, limits and
 *    namespaces stay the child's own: no CLONE_FILES, CLONE_SIGHAND,
 *    CLONE_FS or CLONE_THREAD, and each of these is per task or per
 *    process in the kernel;
 *  - no handler of enroll's may run in the child (it would run on shared
 *    data): every signal is blocked in the caller across the clone, so the
 *    child starts with all blocked, and unblocks only once it has set every
 *    handler back to the default (launch.c, child_signals);
 *  - errno is shared (one thread pointer): while both run, one side makes
 *    only raw system calls (raw_syscall.h; launch.c's wait_exec);
 *  - the stack is unmapped only once the child no longer runs on it: dead
 *    (reaped, or seen dead with WNOWAIT when set-up is cancelled) or past
 *    its exec (the error pipe's close-on-exec end closes after the kernel
 *    has switched it to the new image's memory).
 * x86_64 only (the child's first frame is assembly), and not under
 * AddressSanitizer or ThreadSanitizer, whose shadow state and interceptors
 * assume one task per stack (the Makefile's SANITIZE defines
 * HERMETIC_NO_CLONE_VM as well): there enroll forks, as before.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/sched.h>
#include "raw_syscall.h"
#include "clone_vm.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA 0x53564d41
#define PR_SET_VMA_ANON_NAME 0
#endif

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||                        \
	__has_feature(memory_sanitizer)
#define HERMETIC_NO_CLONE_VM 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__x86_64__)
#ifndef HERMETIC_NO_CLONE_VM
#define HERMETIC_NO_CLONE_VM 1
#endif
#endif

#define CV_STR2(x) #x
#define CV_STR(x) CV_STR2(x)

static int stacks_live;

int clone_vm_stacks_live(void)
{
	return stacks_live;
}

#ifdef HERMETIC_NO_CLONE_VM

bool clone_vm_built(void)
{
	return false;
}

int clone_vm_stack_alloc(struct clone_vm_stack *s, size_t extra)
{
	s->map = NULL;
	return -ENOSYS;
}

long clone_vm_start(struct clone_vm_stack *s, int cgroup_fd, int (*fn)(void *), const void *arg,
		    size_t arg_len)
{
	return -ENOSYS;
}

void clone_vm_stack_free(struct clone_vm_stack *s)
{
	s->map = NULL;
}

#else

/*
 * long hm_clone3_vm(struct clone_args *args, size_t size, int (*fn)(void *), void *arg)
 * In the caller: clone3's result. In the child, which the kernel starts
 * at the instruction after `syscall` with its stack pointer at the top of
 * the new stack and every other register as the caller had it: fn(arg) in
 * a frame with no return address into ours (the unwinder is told there is
 * none), then exit(2) with its value. r8 and r9 carry fn and arg across
 * the system call (it clobbers only rax, rcx and r11).
 */
long hm_clone3_vm(struct clone_args *args, size_t size, int (*fn)(void *), void *arg)
	__attribute__((visibility("hidden")));
__asm__(".text\n"
	".p2align 4\n"
	".globl hm_clone3_vm\n"
	".hidden hm_clone3_vm\n"
	".type hm_clone3_vm, @function\n"
	"hm_clone3_vm:\n"
	"	.cfi_startproc\n"
	"	mov %rdx, %r8\n"
	"	mov %rcx, %r9\n"
	"	mov $" CV_STR(SYS_clone3) ", %eax\n"
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"
	"1:\n"
	"	.cfi_undefined rip\n"
	"	xor %ebp, %ebp\n"
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $" CV_STR(SYS_exit) ", %eax\n"
	"	syscall\n"
	"	hlt\n"
	"	.cfi_endproc\n"
	".size hm_clone3_vm, .-hm_clone3_vm\n");

bool clone_vm_built(void)
{
	return true;
}

int clone_vm_stack_alloc(struct clone_vm_stack *s, size_t extra)
{
	size_t page = 4096, len = (CLONE_VM_STACK_SIZE + extra + page - 1) / page * page + page;
	void *m;

	s->map = NULL;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	if (m == MAP_FAILED)
		return -errno;
	/* The guard: a child that overran its stack would write over
	 * whatever of enroll's lies below it; it faults instead. */
	if (mprotect(m, page, PROT_NONE) < 0) {
		int r = -errno;

		(void)munmap(m, len);
		return r;
	}
	/* (EINVAL without CONFIG_ANON_VMA_NAME: the name only helps a reader
	 * of /proc/PID/maps, tests/integration/cancel.sh among them) */
	(void)prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)m + page, len - page,
		    (unsigned long)CLONE_VM_STACK_NAME);
	s->map = m;
	s->len = len;
	stacks_live++;
	return 0;
}

long clone_vm_start(struct clone_vm_stack *s, int cgroup_fd, int (*fn)(void *), const void *arg,
		    size_t arg_len)
{
	uintptr_t base = (uintptr_t)s->map + 4096, top = (uintptr_t)s->map + s->len;
	uintptr_t argp = (top - arg_len - 64) & ~(uintptr_t)63;
	struct clone_args args = {
		.flags = CLONE_VM | (cgroup_fd >= 0 ? CLONE_INTO_CGROUP : 0),
		.exit_signal = SIGCHLD,
		.stack = base,
		.stack_size = argp - base,
		.cgroup = cgroup_fd >= 0 ? (uint64_t)cgroup_fd : 0,
	};
	sigset_t all, old;
	long pid;
	int r;

	if (!s->map)
		return -EINVAL;
	memcpy((void *)argp, arg, arg_len);
	/* posix_spawn's order: all blocked across the clone, so that no
	 * handler of ours runs in the child before it has reset them. */
	(void)sigfillset(&all);
	if ((r = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0)
		return -r;
	pid = hm_clone3_vm(&args, sizeof(args), fn, (void *)argp);
	/* (cannot fail: the mask the same call just gave us) */
	(void)pthread_sigmask(SIG_SETMASK, &old, NULL);
	return pid;
}

void clone_vm_stack_free(struct clone_vm_stack *s)
{
	if (!s->map)
		return;
	(void)munmap(s->map, s->len);
	s->map = NULL;
	stacks_live--;
}

#endif

/* ---- for tests: HERMETIC_TEST_HEAP_RO (tests/integration/clone_vm.sh) ---- */

int clone_vm_heap_find(struct clone_vm_heap *h)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "re");
	int r = -ENOENT;

	h->start = h->end = 0;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long a, b;
		size_t n = strlen(line);

		/* the line's last field, matched whole: "[heap]" */
		if (n < 7 || strcmp(line + n - 7, "[heap]\n") || sscanf(line, "%lx-%lx ", &a, &b) != 2)
			continue;
		h->start = a;
		h->end = b;
		r = 0;
		break;
	}
	(void)fclose(f);
	return r;
}

long clone_vm_heap_protect(const struct clone_vm_heap *h, bool ro)
{
	if (h->end <= h->start)
		return 0;
	return raw_syscall(SYS_mprotect, h->start, h->end - h->start,
			   ro ? PROT_READ : PROT_READ | PROT_WRITE);
}

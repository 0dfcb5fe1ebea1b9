/* SPDX-License-Identifier: MIT */
/*
 * System calls that leave errno alone: the result is the kernel's own,
 * -errno on failure. enroll's child shares enroll's memory up to its exec
 * (clone_vm.c), and with it enroll's errno (one thread pointer, one TLS
 * block): the stretches of launch.c where parent and child both run make
 * only these (launch.c says which). On x86_64 the `syscall` instruction
 * itself; elsewhere the child is forked (clone_vm.c) and libc's syscall()
 * with errno read at once is as good.
 */
#ifndef HERMETIC_ENGINE_RAW_SYSCALL_H
#define HERMETIC_ENGINE_RAW_SYSCALL_H

#include <errno.h>
#include <unistd.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
static inline long raw_syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	register long r9 __asm__("r9") = a6;
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
}
#else
static inline long raw_syscall6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = syscall(n, a1, a2, a3, a4, a5, a6);

	return r < 0 ? -errno : r;
}
#endif

#define raw_syscall(n, a1, a2, a3) raw_syscall6((n), (long)(a1), (long)(a2), (long)(a3), 0, 0, 0)
#define raw_syscall4(n, a1, a2, a3, a4)                                                            \
	raw_syscall6((n), (long)(a1), (long)(a2), (long)(a3), (long)(a4), 0, 0)

#endif

/* SPDX-License-Identifier: MIT */
/*
 * Raw system calls, for code that must not go through libc's wrappers: the
 * shim (whose own wrappers would catch the call), and anything that runs
 * in a vfork child or before the dynamic linker is done. Pure inline code,
 * no includes beyond the syscall numbers.
 */
#ifndef HERMETIC_RAWSYS_H
#define HERMETIC_RAWSYS_H

#include <sys/syscall.h>

/* Raw syscalls: never through our own syscall() wrapper, usable before
 * the real symbols exist and in vfork children. Return -errno on error. */
static inline long hm_sys6(long n, long a, long b, long c, long d, long e, long f)
{
#if defined(__x86_64__)
	long ret;
	register long r10 __asm__("r10") = d;
	register long r8 __asm__("r8") = e;
	register long r9 __asm__("r9") = f;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
			 : "rcx", "r11", "memory");
	return ret;
#elif defined(__aarch64__)
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a;
	register long x1 __asm__("x1") = b;
	register long x2 __asm__("x2") = c;
	register long x3 __asm__("x3") = d;
	register long x4 __asm__("x4") = e;
	register long x5 __asm__("x5") = f;

	__asm__ volatile("svc 0"
			 : "+r"(x0)
			 : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
			 : "memory");
	return x0;
#else
#error "hm_sys6: unsupported architecture"
#endif
}
#define hm_sys(n, a, b, c) hm_sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

#endif

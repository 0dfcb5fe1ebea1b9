// SPDX-License-Identifier: MIT
/*
 * A dispatch in front of a run's seccomp program, so that the kernel takes
 * it quickly (issue 30).
 *
 * When a filter goes in, the kernel runs it once for every system call
 * number of each ABI (x86_64 and i386 here, about 900 numbers), with the
 * arguments unknown, to cache the numbers it allows whatever they are
 * (kernel/seccomp.c, seccomp_cache_prepare); those calls skip the filter
 * from then on. A program that compares the number against a chain of
 * constants walks the whole chain for every number it lets through: the
 * run's merged program (confine_merge.c) walked about 38 instructions per
 * number, and its install was 130 us of every enroll's child on this VM
 * (linear in the chain: 2.4 us per instruction of a plain chain).
 *
 * seccomp_fast() finds the numbers below FAST_NR_LIMIT, for each of the
 * two ABIs, that the program answers with anything but a constant ALLOW
 * (walking it symbolically: a set of numbers per path, split at each
 * comparison), and puts before the program a search over them: a number of
 * x86_64 or i386 outside that set is allowed in about a dozen
 * instructions; everything else (those numbers, numbers from FAST_NR_LIMIT
 * up, x32's, another ABI's) jumps to the program's first instruction, and
 * the program runs unchanged. So the whole decides every call as the
 * program alone: it allows by itself only what the program allows
 * whatever the arguments and the instruction pointer are. The walk is
 * conservative: a load of anything but the number or the ABI, an
 * instruction it does not know, or a comparison it cannot split (a bit
 * test of the number) puts the numbers on that path in the set.
 * tests/unit/confine_merge.c runs the program with and without the
 * dispatch over every number and a spread of arguments and compares.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <linux/audit.h>
#include <linux/seccomp.h>
#include "util.h"
#include "confine.h"

#define FAST_NR_LIMIT 512 /* above every number of both ABIs (x86_64, i386: under 470) */
#define WORDS (FAST_NR_LIMIT / 64)
#define STEP_BUDGET 100000 /* a bound on the walk: far above what any program here takes */

struct nrset {
	uint64_t w[WORDS];
};

static bool set_empty(const struct nrset *s)
{
	for (int i = 0; i < WORDS; i++)
		if (s->w[i])
			return false;
	return true;
}

static void set_add(struct nrset *to, const struct nrset *s)
{
	for (int i = 0; i < WORDS; i++)
		to->w[i] |= s->w[i];
}

static bool set_has(const struct nrset *s, uint32_t nr)
{
	return nr < FAST_NR_LIMIT && (s->w[nr / 64] >> (nr % 64) & 1);
}

/* The members of s from lo up. */
static struct nrset set_from(const struct nrset *s, uint64_t lo)
{
	struct nrset r = { 0 };

	for (uint32_t nr = 0; nr < FAST_NR_LIMIT; nr += 64) {
		uint64_t keep = lo <= nr ? ~0ull : lo >= nr + 64 ? 0 : ~0ull << (lo - nr);

		r.w[nr / 64] = s->w[nr / 64] & keep;
	}
	return r;
}

/* What the accumulator holds on a path: unknown, a constant, or the
 * number under a mask that keeps every bit below FAST_NR_LIMIT (so, for
 * the numbers walked, the number itself). */
enum acc { ACC_UNKNOWN, ACC_CONST, ACC_NR };

struct walk {
	const struct sock_fprog *p;
	uint32_t arch;
	struct nrset slow; /* answered otherwise than by a constant ALLOW */
	long budget;
};

static bool holds(uint16_t op, uint32_t a, uint32_t k)
{
	switch (op) {
	case BPF_JEQ:
		return a == k;
	case BPF_JGE:
		return a >= k;
	case BPF_JGT:
		return a > k;
	default: /* BPF_JSET */
		return (a & k) != 0;
	}
}

/* The numbers of s, at instruction pc with the accumulator as said, into
 * w->slow unless the program allows them whatever the rest. Jumps go
 * forward only (the kernel checks it), so each call moves pc on. */
static void walk(struct walk *w, unsigned pc, struct nrset s, enum acc acc, uint32_t a)
{
	const unsigned len = w->p->len;

	while (!set_empty(&s)) {
		const struct sock_filter *f;
		uint16_t op;

		if (pc >= len || --w->budget < 0)
			break;
		f = &w->p->filter[pc];
		op = BPF_OP(f->code);
		if (f->code == (BPF_LD | BPF_W | BPF_ABS)) {
			if (f->k == offsetof(struct seccomp_data, nr))
				acc = ACC_NR, a = ~0u;
			else if (f->k == offsetof(struct seccomp_data, arch))
				acc = ACC_CONST, a = w->arch;
			else
				break; /* an argument, the instruction pointer */
			pc++;
		} else if (f->code == (BPF_ALU | BPF_AND | BPF_K) && acc != ACC_UNKNOWN) {
			a &= f->k; /* ACC_NR: a is the mask */
			if (acc == ACC_NR && (a & (FAST_NR_LIMIT - 1)) != FAST_NR_LIMIT - 1)
				break; /* a mask that changes the numbers walked */
			pc++;
		} else if (f->code == (BPF_JMP | BPF_JA)) {
			if (f->k >= len - pc - 1)
				break;
			pc += 1 + f->k;
		} else if (BPF_CLASS(f->code) == BPF_JMP && BPF_SRC(f->code) == BPF_K &&
			   (op == BPF_JEQ || op == BPF_JGE || op == BPF_JGT || op == BPF_JSET)) {
			struct nrset t = { 0 };

			if (f->jt >= len - pc - 1 || f->jf >= len - pc - 1 || acc == ACC_UNKNOWN)
				break;
			if (acc == ACC_CONST) {
				pc += 1 + (holds(op, a, f->k) ? f->jt : f->jf);
				continue;
			}
			if (f->jt == f->jf) {
				pc += 1 + f->jt;
				continue;
			}
			if (op == BPF_JSET)
				break; /* a bit test of the number: not split here */
			if (op == BPF_JEQ && set_has(&s, f->k))
				t.w[f->k / 64] = 1ull << (f->k % 64);
			else if (op != BPF_JEQ)
				t = set_from(&s, (uint64_t)f->k + (op == BPF_JGT));
			walk(w, pc + 1 + f->jt, t, acc, a);
			for (int i = 0; i < WORDS; i++)
				s.w[i] &= ~t.w[i];
			pc += 1 + f->jf;
		} else if (f->code == (BPF_RET | BPF_K)) {
			if (f->k == SECCOMP_RET_ALLOW)
				return;
			break;
		} else {
			break; /* not an instruction this walk knows */
		}
	}
	set_add(&w->slow, &s);
}

/* ---- the dispatch: a tiny assembler whose long jumps are `ja` ---- */

struct asm_ {
	struct sock_filter ins[FAST_MAX_INSNS];
	unsigned n;
	unsigned fix[FAST_MAX_INSNS]; /* the `ja`s to the program's first instruction */
	unsigned n_fix;
	bool full;
};

static unsigned put(struct asm_ *b, uint16_t code, uint32_t k, uint8_t jt, uint8_t jf)
{
	if (b->n == FAST_MAX_INSNS) {
		b->full = true;
		return b->n - 1;
	}
	b->ins[b->n] = (struct sock_filter){ code, jt, jf, k };
	return b->n++;
}

static void ja_program(struct asm_ *b)
{
	unsigned at = put(b, BPF_JMP | BPF_JA, 0, 0, 0);

	if (!b->full)
		b->fix[b->n_fix++] = at;
}

/* Whether the number (below FAST_NR_LIMIT, in the range the jumps so far
 * left) is one of the n sorted slow ones: to the program if so, else
 * allowed. */
static void search(struct asm_ *b, const uint32_t *slow, unsigned n)
{
	unsigned mid, at;

	if (n <= 3) {
		/* jeq v, to the `ja` to the program after the allow */
		for (unsigned i = 0; i < n; i++)
			put(b, BPF_JMP | BPF_JEQ | BPF_K, slow[i], (uint8_t)(n - i), 0);
		put(b, BPF_RET | BPF_K, SECCOMP_RET_ALLOW, 0, 0);
		if (n)
			ja_program(b);
		return;
	}
	mid = n / 2;
	at = put(b, BPF_JMP | BPF_JGE | BPF_K, slow[mid], 0, 0);
	search(b, slow, mid);
	if (b->n - at - 1 > 255)
		b->full = true;
	else
		b->ins[at].jt = (uint8_t)(b->n - at - 1);
	search(b, slow + mid, n - mid);
}

/* One ABI's part: the number, beyond the walked ones to the program, then
 * the search. */
static void abi(struct asm_ *b, const struct sock_fprog *p, uint32_t arch)
{
	struct walk w = { .p = p, .arch = arch, .budget = STEP_BUDGET };
	struct nrset all;
	uint32_t slow[FAST_NR_LIMIT];
	unsigned n = 0;

	memset(&all, 0xff, sizeof(all));
	walk(&w, 0, all, ACC_UNKNOWN, 0);
	for (uint32_t nr = 0; nr < FAST_NR_LIMIT; nr++)
		if (set_has(&w.slow, nr))
			slow[n++] = nr;
	put(b, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr), 0, 0);
	put(b, BPF_JMP | BPF_JGE | BPF_K, FAST_NR_LIMIT, 0, 1);
	ja_program(b);
	if (n > FAST_MAX_INSNS / 2)
		ja_program(b); /* a program that singles out most numbers: no gain */
	else
		search(b, slow, n);
}

int seccomp_fast(struct sock_fprog *p, size_t cap)
{
	struct asm_ b = { .n = 0 };
	unsigned at_i386;

	if (!p->len || p->len > BPF_MAXINSNS)
		return -EINVAL;
	/* x86_64 (its jf past its part, to i386's), i386, another ABI */
	put(&b, BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch), 0, 0);
	put(&b, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 0);
	abi(&b, p, AUDIT_ARCH_X86_64);
	at_i386 = b.n;
	if (at_i386 - 2 > 255)
		return -E2BIG;
	b.ins[1].jf = (uint8_t)(at_i386 - 2);
	put(&b, BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_I386, 1, 0);
	ja_program(&b);
	abi(&b, p, AUDIT_ARCH_I386);
	if (b.full || b.n + p->len > cap || b.n + p->len > BPF_MAXINSNS)
		return -E2BIG;
	for (unsigned i = 0; i < b.n_fix; i++)
		b.ins[b.fix[i]].k = b.n - b.fix[i] - 1;
	memmove(p->filter + b.n, p->filter, p->len * sizeof(p->filter[0]));
	memcpy(p->filter, b.ins, b.n * sizeof(b.ins[0]));
	p->len += b.n;
	return 0;
}

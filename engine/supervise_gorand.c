// SPDX-License-Identifier: MIT
/*
 * Go's getrandom without a round trip (docs/static.md, "Entropy"). At the
 * exec stop of a Go image whose clock is the synthetic vDSO's, the first
 * bytes of its internal/syscall/unix.GetRandom (what crypto/rand calls) are
 * made a jump to the vDSO's hm_go_getrandom (vdso/vdso.c), and the vDSO's
 * data page gets the process's stream key: its crypto/rand reads then cost
 * a ChaCha20 block or two in the process, not a seccomp notification
 * answered by enroll. The bytes are those the supervisor would have
 * answered (the same key, from block 0); the supervisor's own stream for
 * the process moves to HM_VDSO_RNG_SUPER_BLOCK, for raw getrandom calls
 * made elsewhere. Only what the binary's symbol table names is touched, and
 * only where it looks as expected (Go's register ABI, the function's usual
 * first instruction); anything else stays with the supervisor.
 *
 * The symbols are looked up once per binary (its device, inode, size and
 * mtime): a test binary that re-executes itself is read once.
 */
#include <elf.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include "util.h"
#include "supervise.h"
#include "hermetic/vdso.h"

/* cmp 0x10(%r14),%rsp: the stack check every Go function with a small
 * frame starts with (R14 is the goroutine, 0x10 its stackguard0) */
static const uint8_t go_prologue[4] = { 0x49, 0x3b, 0x66, 0x10 };

static bool name_is(const char *strtab, size_t strsz, uint32_t off, const char *name)
{
	size_t n = strlen(name);

	return off < strsz && strsz - off > n && !memcmp(strtab + off, name, n + 1);
}

/* The three addresses hm_go_getrandom needs, from the binary's .symtab
 * (link-time addresses); false when it has none of Go's register ABI. */
static bool read_symbols(int fd, struct sv_gosyms *g)
{
	Elf64_Ehdr eh;
	_cleanup_free_ Elf64_Shdr *sh = NULL;
	_cleanup_free_ Elf64_Sym *sym = NULL;
	_cleanup_free_ char *str = NULL;
	const Elf64_Shdr *st = NULL, *ss;
	bool reg_abi = false;
	size_t nsym;

	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !eh.e_shnum || eh.e_shnum > 4096)
		return false;
	if (!(sh = calloc(eh.e_shnum, sizeof(*sh))) ||
	    pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff) != (ssize_t)(eh.e_shnum * sizeof(*sh)))
		return false;
	for (int i = 0; i < eh.e_shnum && !st; i++)
		if (sh[i].sh_type == SHT_SYMTAB && sh[i].sh_entsize == sizeof(Elf64_Sym))
			st = &sh[i];
	if (!st || st->sh_link >= eh.e_shnum || st->sh_size > (64u << 20))
		return false;
	ss = &sh[st->sh_link];
	if (ss->sh_size > (64u << 20) || !(sym = malloc(st->sh_size)) || !(str = malloc(ss->sh_size)) ||
	    pread(fd, sym, st->sh_size, st->sh_offset) != (ssize_t)st->sh_size ||
	    pread(fd, str, ss->sh_size, ss->sh_offset) != (ssize_t)ss->sh_size)
		return false;
	nsym = st->sh_size / sizeof(Elf64_Sym);
	for (size_t i = 0; i < nsym; i++) {
		uint32_t o = sym[i].st_name;

		if (name_is(str, ss->sh_size, o, "internal/syscall/unix.GetRandom") &&
		    ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_size >= 16)
			g->getrandom = sym[i].st_value;
		else if (name_is(str, ss->sh_size, o, "go.itab.syscall.Errno,error") || /* Go 1.19 */
			 name_is(str, ss->sh_size, o, "go:itab.syscall.Errno,error")) /* 1.20 on */
			g->errno_itab = sym[i].st_value;
		else if (name_is(str, ss->sh_size, o, "runtime.staticuint64s"))
			g->small_ints = sym[i].st_value;
		else if (name_is(str, ss->sh_size, o, "runtime.spillArgs.abi0") || /* the register ABI's */
			 name_is(str, ss->sh_size, o, "runtime.spillArgs"))
			reg_abi = true;
	}
	g->e_entry = eh.e_entry;
	return reg_abi && g->getrandom && g->errno_itab && g->small_ints;
}

/* The binary's symbols, from the cache or read now. */
static const struct sv_gosyms *symbols(struct supervise *s, int pid)
{
	char path[64];
	struct stat stb;
	struct sv_gosyms *g;
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &stb) < 0)
		return NULL;
	for (int i = 0; i < SV_GOSYMS; i++) {
		g = &s->gosyms[i];
		if (g->used && g->dev == stb.st_dev && g->ino == stb.st_ino && g->size == (uint64_t)stb.st_size &&
		    g->mtime_ns == stb.st_mtim.tv_sec * 1000000000LL + stb.st_mtim.tv_nsec)
			return g->ok ? g : NULL;
	}
	g = &s->gosyms[s->gosyms_next++ % SV_GOSYMS];
	*g = (struct sv_gosyms){ .used = true, .dev = stb.st_dev, .ino = stb.st_ino,
				 .size = stb.st_size,
				 .mtime_ns = stb.st_mtim.tv_sec * 1000000000LL + stb.st_mtim.tv_nsec };
	g->ok = read_symbols(fd, g);
	return g->ok ? g : NULL;
}

#define DATA_AT(base, field) ((off_t)((base) + HM_VDSO_DATA_OFF + offsetof(struct hm_vdso_data, field)))

int sv_gorand_setup(struct supervise *s, int pid, int memfd, uint64_t at_entry, uint64_t vdso_base,
		    const uint8_t key[32])
{
	const struct sv_gosyms *g = symbols(s, pid);
	const Elf64_Ehdr *img = (const Elf64_Ehdr *)s->image;
	uint64_t bias, fn, pid64 = (uint64_t)pid, itab, ints, flags;
	uint8_t first[4], jump[13] = { 0x49, 0xbc }; /* movabs $fn, %r12 */

	if (!g || !at_entry || s->image_len < sizeof(*img) || !img->e_entry)
		return -ENOENT;
	bias = at_entry - g->e_entry; /* 0 unless PIE */
	fn = vdso_base + img->e_entry;
	itab = g->errno_itab + bias;
	ints = g->small_ints + bias;
	memcpy(jump + 2, &fn, 8);
	jump[10] = 0x41, jump[11] = 0xff, jump[12] = 0xe4; /* jmp *%r12 (not an argument register) */
	if (pread(memfd, first, sizeof(first), (off_t)(g->getrandom + bias)) != sizeof(first) ||
	    memcmp(first, go_prologue, sizeof(first)))
		return -ENOEXEC;
	if (pread(memfd, &flags, 8, DATA_AT(vdso_base, flags)) != 8)
		return -EFAULT;
	flags |= HM_VDSO_RNG;
	/* the data first, the flag, then the jump: nothing has run yet, but
	 * the order is the one that would be safe if it had */
	if (pwrite(memfd, key, 32, DATA_AT(vdso_base, rng_key)) != 32 ||
	    pwrite(memfd, &pid64, 8, DATA_AT(vdso_base, rng_pid)) != 8 ||
	    pwrite(memfd, &itab, 8, DATA_AT(vdso_base, go_errno_itab)) != 8 ||
	    pwrite(memfd, &ints, 8, DATA_AT(vdso_base, go_small_ints)) != 8 ||
	    pwrite(memfd, &flags, 8, DATA_AT(vdso_base, flags)) != 8)
		return -EFAULT;
	/* (through /proc/PID/mem: the text is read-only to the process, and
	 * the page becomes its private copy) */
	if (pwrite(memfd, jump, sizeof(jump), (off_t)(g->getrandom + bias)) != sizeof(jump))
		return -EFAULT;
	return 0;
}

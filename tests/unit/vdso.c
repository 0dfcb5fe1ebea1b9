// SPDX-License-Identifier: MIT
/* The synthetic vDSO (vdso/, docs/static.md) as a process without the shim
 * gets it: the built image laid out as the supervisor maps it (image, data
 * page, clock page at include/hermetic/vdso.h's offsets), its symbols found
 * the way Go's and musl's parsers find them (PT_LOAD and PT_DYNAMIC by file
 * offset, DT_GNU_HASH and DT_HASH, version LINUX_2.6 through DT_VERSYM and
 * DT_VERDEF), then called: realtime reads the page, the rest is the
 * kernel's. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>
#include <linux/types.h>
#include "hermetic/vclock.h"
#include "hermetic/vdso.h"
#include "test.h"

static uint8_t *base;
static const Elf64_Sym *symtab;
static const char *strtab;
static const uint32_t *hash, *gnuhash;
static const uint16_t *versym;
static const Elf64_Verdef *verdef;

static uint32_t elf_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (uint8_t)*s;
		g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (uint8_t)*s;
	return h;
}

/* Does symbol i have version name (as Go's vdsoFindVersion)? */
static int has_version(uint32_t i, const char *name)
{
	uint16_t v = versym[i] & 0x7fff;

	for (const Elf64_Verdef *d = verdef;; d = (const void *)((const char *)d + d->vd_next)) {
		const Elf64_Verdaux *a = (const void *)((const char *)d + d->vd_aux);

		if (!(d->vd_flags & VER_FLG_BASE) && (d->vd_ndx & 0x7fff) == v)
			return d->vd_hash == elf_hash(name) && !strcmp(strtab + a->vda_name, name);
		if (!d->vd_next)
			return 0;
	}
}

static void *lookup(const char *name, int use_gnu)
{
	if (use_gnu) {
		uint32_t nb = gnuhash[0], symoff = gnuhash[1], bloom = gnuhash[2], h = gnu_hash(name);
		const uint32_t *buckets = gnuhash + 4 + bloom * 2, *chain = buckets + nb - symoff;

		for (uint32_t i = buckets[h % nb]; i; i++) {
			if ((chain[i] | 1) == (h | 1) && !strcmp(strtab + symtab[i].st_name, name) &&
			    has_version(i, "LINUX_2.6"))
				return base + symtab[i].st_value;
			if (chain[i] & 1)
				break;
		}
		return NULL;
	}
	for (uint32_t i = hash[2 + elf_hash(name) % hash[0]]; i; i = hash[2 + hash[0] + i])
		if (!strcmp(strtab + symtab[i].st_name, name) && has_version(i, "LINUX_2.6"))
			return base + symtab[i].st_value;
	return NULL;
}

static int load(const char *path)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	base = mmap(NULL, HM_VDSO_PAGE_OFF + HM_VCLOCK_SIZE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fd < 0 || base == MAP_FAILED)
		return -1;
	n = read(fd, base, HM_VDSO_IMAGE_MAX + 1);
	close(fd);
	return n > 0 && n <= HM_VDSO_IMAGE_MAX ? 0 : -1;
}

int main(int argc, char **argv)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
	const Elf64_Ehdr *eh;
	const Elf64_Phdr *ph;
	const Elf64_Dyn *dyn = NULL;
	int loads = 0, rel = 0, ro_dyn = 0;
	struct hm_vdso_data *d;
	struct hm_vclock *vc;

	path[n > 0 ? n : 0] = 0;
	strcpy(strrchr(path, '/') ? strrchr(path, '/') : path, "/../libhermetic-vdso.so");
	CHECK("the image loads (at most HM_VDSO_IMAGE_MAX bytes)", load(argc > 1 ? argv[1] : path) == 0);
	if (t_failed)
		T_EXIT();
	eh = (const Elf64_Ehdr *)base;
	ph = (const Elf64_Phdr *)(base + eh->e_phoff);
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_LOAD)
			loads += ph[i].p_offset == 0 && ph[i].p_vaddr == 0 ? 1 : 100;
		if (ph[i].p_type == PT_DYNAMIC) {
			dyn = (const Elf64_Dyn *)(base + ph[i].p_offset);
			ro_dyn = !(ph[i].p_flags & PF_W);
		}
	}
	CHECK("one PT_LOAD, from offset 0 at address 0", loads == 1);
	CHECK("a read-only PT_DYNAMIC (glibc leaves it alone)", dyn && ro_dyn);
	for (; dyn && dyn->d_tag != DT_NULL; dyn++) {
		const void *p = base + dyn->d_un.d_ptr;

		switch (dyn->d_tag) {
		case DT_SYMTAB: symtab = p; break;
		case DT_STRTAB: strtab = p; break;
		case DT_HASH: hash = p; break;
		case DT_GNU_HASH: gnuhash = p; break;
		case DT_VERSYM: versym = p; break;
		case DT_VERDEF: verdef = p; break;
		case DT_REL: case DT_RELA: case DT_JMPREL: case DT_TEXTREL: rel = 1; break;
		}
	}
	CHECK("DT_SYMTAB, DT_STRTAB, DT_HASH, DT_GNU_HASH, DT_VERSYM, DT_VERDEF",
	      symtab && strtab && hash && gnuhash && versym && verdef);
	CHECK("no relocation", !rel);
	if (t_failed)
		T_EXIT();

	int (*cg)(clockid_t, struct timespec *) = lookup("__vdso_clock_gettime", 1);
	int (*gtod)(struct timeval *, void *) = lookup("__vdso_gettimeofday", 1);
	time_t (*tm)(time_t *) = lookup("__vdso_time", 1);
	long (*cpu)(unsigned *, unsigned *, void *) = lookup("__vdso_getcpu", 1);

	CHECK("the four functions at LINUX_2.6 through DT_GNU_HASH", cg && gtod && tm && cpu);
	CHECK("the same through DT_HASH", (void *)cg == lookup("__vdso_clock_gettime", 0) &&
						  (void *)tm == lookup("__vdso_time", 0));
	CHECK("not at another version", !lookup("__vdso_clock_getres", 1));
	if (t_failed)
		T_EXIT();

	/* The pages the supervisor maps: data (no kernel vDSO: raw syscalls),
	 * then the run's clock. */
	d = (struct hm_vdso_data *)(base + HM_VDSO_DATA_OFF);
	vc = (struct hm_vclock *)(base + HM_VDSO_PAGE_OFF);
	d->magic = HM_VDSO_DATA_MAGIC;
	d->flags = HM_VDSO_WALL;
	vc->mono = HM_VMONO_BASE + 123456789;
	vc->wall_off = 981173106000000000LL - vc->mono;
	mprotect(base, HM_VDSO_DATA_OFF, PROT_READ | PROT_EXEC);

	struct timespec ts, real;
	struct timeval tv;
	time_t t = 0;

	CHECK("CLOCK_REALTIME is the page's mono + wall_off",
	      cg(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec == 981173106 && ts.tv_nsec == 0);
	CHECK("CLOCK_REALTIME_COARSE too", cg(CLOCK_REALTIME_COARSE, &ts) == 0 && ts.tv_sec == 981173106);
	CHECK("CLOCK_TAI is 37 s ahead", cg(CLOCK_TAI, &ts) == 0 && ts.tv_sec == 981173106 + 37);
	CHECK("gettimeofday", gtod(&tv, NULL) == 0 && tv.tv_sec == 981173106 && tv.tv_usec == 0);
	CHECK("time", tm(&t) == 981173106 && t == 981173106);
	vc->mono += 1500000000; /* the run's clock moves */
	CHECK("the wall clock follows the page", cg(CLOCK_REALTIME, &ts) == 0 &&
						     ts.tv_sec == 981173107 && ts.tv_nsec == 500000000);
	clock_gettime(CLOCK_MONOTONIC, &real);
	CHECK("CLOCK_MONOTONIC is the kernel's", cg(CLOCK_MONOTONIC, &ts) == 0 &&
						    ts.tv_sec - real.tv_sec <= 1 && ts.tv_sec >= real.tv_sec);
	CHECK("a bad clock id is the kernel's EINVAL", cg(12345, &ts) == -22);
	unsigned c = 9999;
	CHECK("getcpu is the kernel's", cpu(&c, NULL, NULL) == 0 && c < 4096);
	d->flags = 0; /* --clock off: the real wall clock */
	clock_gettime(CLOCK_REALTIME, &real);
	CHECK("without HM_VDSO_WALL realtime is the kernel's",
	      cg(CLOCK_REALTIME, &ts) == 0 && ts.tv_sec - real.tv_sec <= 1 && ts.tv_sec > 1700000000);
	T_EXIT();
}

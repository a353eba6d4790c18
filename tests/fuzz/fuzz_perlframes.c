/* libFuzzer target: perlframes.c's readers of a perl process's memory (the interpreter, its
 * chain of context stacks, contexts, CVs, globs, stashes, shared names, statements, the op
 * being run and Perl's stack), over a forged memory image mapped at 0x10000, PL_curinterp at
 * its start; PL_interp_size reads as 5.36's (3,768). Reads outside the image fail as a
 * process's would. Checks: never more frames than asked for, every string NUL-terminated in its
 * buffer, runs no more than frames + stacks allow, an error or a count as perlframes.h says;
 * and the same answer again, through the cache of subs.
 *
 * Seed in corpus/fuzz_perlframes: test_perlframes's forged image (one sub, main::sub). */
#include "proftop/perlframes.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BASE 0x10000u
#define SIZE_ADDR 0x8000u
#define MAX 8

struct image {
	const uint8_t *data;
	size_t size;
};

static int read_image(void *arg, uint64_t addr, void *buf, size_t len)
{
	const struct image *m = arg;
	const uint16_t size = 3768;

	if (addr == SIZE_ADDR && len == sizeof(size)) {
		memcpy(buf, &size, sizeof(size));
		return 0;
	}
	if (addr < BASE || addr - BASE > m->size || len > m->size - (addr - BASE))
		return -EIO;
	memcpy(buf, m->data + (addr - BASE), len);
	return 0;
}

static void check(const struct perlframe *f, int n)
{
	if (n > MAX || (n < 0 && n != -ENOENT && n != -EIO && n != -EBADMSG))
		abort();
	for (int i = 0; i < n; i++)
		if (!memchr(f[i].name, 0, sizeof(f[i].name)) || !memchr(f[i].file, 0, sizeof(f[i].file)) ||
		    !memchr(f[i].package, 0, sizeof(f[i].package)) || (i && f[i].run < f[i - 1].run))
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perlframes_symbols sym = { .curinterp = BASE, .interp_size = SIZE_ADDR };
	struct image m = { data, size };
	static struct perlframe first[MAX], again[MAX];
	struct perlframes pl;
	unsigned runs, runs_again;
	int n;

	if (perlframes_open(&pl, &sym, 0, read_image, &m))
		abort(); /* the size always reads */
	n = perlframes_stack(&pl, first, MAX, &runs);
	check(first, n);
	if (n > 0 && (perlframes_stack(&pl, again, MAX, &runs_again) != n || runs_again != runs ||
		      memcmp(first, again, (size_t)n * sizeof(*first))))
		abort();
	if (n > 0 && first[n - 1].run >= runs)
		abort();
	perlframes_close(&pl);
	return 0;
}

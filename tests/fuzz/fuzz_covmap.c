/* libFuzzer target: coverage mode's line map (covmap.c, over libdw) on arbitrary bytes read as an
 * ELF file (a memfd, named by its /proc/self/fd path): its functions, their DWARF lines, the
 * addresses that start them and their file offsets, each instruction's first bytes read through
 * the program headers. Every index the map holds must be in range (a pair's line and address, a
 * line's function, a function's run of lines and its entry line), the addresses sorted and
 * distinct, every string touched; a refusal must say why.
 *
 * Seeds in corpus/fuzz_covmap: fuzz_lines' inline.so (DWARF 5) and inline-dwarf4.so. */
#include "proftop/covmap.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void touch(const char *s)
{
	if (!s || strlen(s) > (1u << 30))
		abort();
}

static void check(const struct covmap *m)
{
	for (size_t i = 0; i < m->nfuncs; i++) {
		const struct covmap_func *f = &m->funcs[i];

		touch(f->name);
		if (f->entry >= f->end || (i && m->funcs[i - 1].entry > f->entry))
			abort();
		if (f->nlines && (f->first_line >= m->nlines || f->nlines > m->nlines - f->first_line))
			abort();
		if (f->entry_line != UINT32_MAX &&
		    (f->entry_line >= m->nlines || m->lines[f->entry_line].func != i))
			abort();
		if (f->decl_file)
			touch(f->decl_file);
	}
	for (size_t i = 0; i < m->nlines; i++) {
		touch(m->lines[i].file);
		if (m->lines[i].func >= m->nfuncs || !m->lines[i].line)
			abort();
	}
	for (size_t i = 1; i < m->naddrs; i++)
		if (m->addrs[i - 1].addr >= m->addrs[i].addr)
			abort();
	for (size_t i = 0; i < m->npairs; i++)
		if (m->pairs[i].line >= m->nlines || m->pairs[i].addr >= m->naddrs)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz_covmap", MFD_CLOEXEC);
	char path[64];
	struct covmap *map;
	const char *why;
	int err;

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = covmap_read(path, 0, &map, &why);
	if (err) {
		touch(why);
		if (map)
			abort();
	} else {
		check(map);
		covmap_free(map);
	}
	close(fd);
	return 0;
}
